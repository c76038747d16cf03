//! Minimal routing on Aries: at most two local hops (row then column, or column then row)
//! inside a group; between groups at most two local hops to a router holding one of the
//! bundle's global links, the global hop, and at most two local hops in the destination group
//! (at most five router hops). Global hops have `Hop::class` = 1.
//!
//! Which link of the bundle a packet takes is drawn once per packet (bits of
//! `RouteState::tie_dirs`, drawn at injection; one half per Valiant phase), so every router on
//! its way heads for the same one and the path stays minimal. The order of the two local hops
//! and the lane of a column hop are drawn at the hop itself: once the first local hop is
//! taken, one coordinate is left and the second hop is forced, so per-hop draws keep
//! paths minimal too.
//!
//! Two local hops may wait for each other in any order (row-column and column-row paths
//! close cycles inside a group), so even minimal routing needs a VC class per hop: the ladders.

use super::{Hop, MinimalStep, RouteState, Rng, NO_DIM};
use crate::topology::{Aries, LinkClass};
use rand::Rng as _;

pub const STEP: super::MinimalStepKind = super::MinimalStepKind {
    topology: &crate::topology::aries::KIND,
    build: |topo| std::sync::Arc::new(AriesMinimal::new(super::served::<Aries>(topo).clone())),
};

pub struct AriesMinimal {
    aries: Aries,
}

impl AriesMinimal {
    pub fn new(aries: Aries) -> Self {
        AriesMinimal { aries }
    }

    /// The link of the bundle this packet takes in its current phase.
    #[inline]
    fn bundle_link(&self, state: &RouteState) -> usize {
        let bits = state.tie_dirs >> (16 * u32::from(state.phase.min(1)));
        (bits & 0xffff) as usize % self.aries.bundle
    }

    #[inline]
    fn local(&self, i: usize, j: usize, state: &RouteState, rng: &mut Rng) -> Hop {
        let ar = &self.aries;
        // An in-order packet takes one fixed path: row first, the first lane.
        let column_first = !state.in_order && ar.local_distance(i, j) == 2 && rng.gen::<bool>();
        let lane = if ar.column_links > 1 && !state.in_order { rng.gen_range(0..ar.column_links) } else { 0 };
        let (port, class) = ar.local_hop(i, j, column_first, lane);
        debug_assert!(matches!(class, LinkClass::Row | LinkClass::Column));
        Hop { port: port as u16, dim: NO_DIM, ..Default::default() }
    }
}

impl MinimalStep for AriesMinimal {
    fn on_inject(&self, state: &mut RouteState, rng: &mut Rng) {
        state.tie_dirs = rng.gen();
    }

    #[inline]
    fn hop(&self, cur: usize, target: usize, state: &RouteState, rng: &mut Rng) -> Hop {
        let a = self.aries.group_size();
        let (gc, i, gt, j) = (cur / a, cur % a, target / a, target % a);
        if gc == gt {
            return self.local(i, j, state, rng);
        }
        let (out, port) = self.aries.gateways(gc, gt)[self.bundle_link(state)];
        if out as usize == i {
            Hop { port, dim: NO_DIM, class: 1, ..Default::default() }
        } else {
            self.local(i, out as usize, state, rng)
        }
    }
}
