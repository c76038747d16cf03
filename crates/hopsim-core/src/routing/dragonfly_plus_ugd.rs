//! Minimal routing on a dragonfly+: up-down inside a group (leaf, a spine drawn at random,
//! leaf), up-global-down between groups (leaf, the spine with the global link to the
//! destination group, the spine it lands on, leaf). Global hops have `Hop::class` = 1.
//! Channels are used in the order up, global, down, so minimal routing is deadlock-free with
//! one VC; Valiant (down then up again at the intermediate leaf) needs a class per phase.

use super::{Hop, MinimalStep, RouteState, Rng};
use crate::topology::DragonflyPlus;
use rand::Rng as _;

pub const STEP: super::MinimalStepKind = super::MinimalStepKind {
    topology: &crate::topology::dragonfly_plus::KIND,
    build: |topo| std::sync::Arc::new(DragonflyPlusUgd::new(super::served::<DragonflyPlus>(topo).clone())),
};

pub struct DragonflyPlusUgd {
    df: DragonflyPlus,
}

impl DragonflyPlusUgd {
    pub fn new(df: DragonflyPlus) -> Self {
        DragonflyPlusUgd { df }
    }
}

impl MinimalStep for DragonflyPlusUgd {
    #[inline]
    fn hop(&self, cur: usize, target: usize, _state: &RouteState, rng: &mut Rng) -> Hop {
        let d = &self.df;
        let n = d.group_size();
        let (gc, i, gt, j) = (cur / n, cur % n, target / n, target % n);
        let (l, s) = (d.leaves, d.spines);
        // The spine (index in the group) to climb to: the gateway towards another group, the
        // target itself, or one drawn at random when going to another leaf.
        let up = |to_spine: usize| Hop { port: to_spine as u16, dim: 0, ..Default::default() };
        let down = |to_leaf: usize| Hop { port: to_leaf as u16, dim: 0, ..Default::default() };
        if gc == gt {
            return match (i < l, j < l) {
                (true, true) => up(rng.gen_range(0..s)),
                (true, false) => up(j - l),
                (false, true) => down(j),
                (false, false) => down(rng.gen_range(0..l)),
            };
        }
        let (out, port) = d.gateway(gc, gt);
        if i < l {
            up(out)
        } else if i - l == out {
            Hop { port: port as u16, dim: 1, class: 1, ..Default::default() }
        } else {
            down(rng.gen_range(0..l))
        }
    }
}
