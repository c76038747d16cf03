//! Minimal routing on a dragonfly: local-global-local. In the destination group, the local
//! link to the destination; elsewhere, the global link to the destination group if this
//! switch has it, else the local link to the switch of the group that has it. Global hops
//! have `Hop::class` = 1.
//!
//! A local hop after the global one can wait for a local hop before it (in another group), so
//! even minimal routing needs two ordered local VC classes: `min_*` policies (which give each
//! phase a local class before and after its global hop) or the ladders.

use super::{Hop, MinimalStep, RouteState, Rng};
use crate::topology::Dragonfly;

pub const STEP: super::MinimalStepKind = super::MinimalStepKind {
    topology: &crate::topology::dragonfly::KIND,
    build: |topo| std::sync::Arc::new(DragonflyLgl::new(super::served::<Dragonfly>(topo).clone())),
};

pub struct DragonflyLgl {
    df: Dragonfly,
}

impl DragonflyLgl {
    pub fn new(df: Dragonfly) -> Self {
        DragonflyLgl { df }
    }
}

impl MinimalStep for DragonflyLgl {
    #[inline]
    fn hop(&self, cur: usize, target: usize, _state: &RouteState, _rng: &mut Rng) -> Hop {
        let a = self.df.a;
        let (gc, i, gt, j) = (cur / a, cur % a, target / a, target % a);
        let local = |to: usize| Hop { port: Dragonfly::local_port(i, to) as u16, dim: 0, ..Default::default() };
        if gc == gt {
            return local(j);
        }
        let (out, port) = self.df.gateway(gc, gt);
        if out == i {
            Hop { port: port as u16, dim: 1, class: 1, ..Default::default() }
        } else {
            local(out)
        }
    }
}
