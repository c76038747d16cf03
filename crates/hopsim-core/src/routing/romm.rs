//! ROMM (randomized oblivious minimal routing, two phases): at injection, an intermediate switch
//! drawn uniformly inside the minimal quadrant (per dimension, a coordinate on the minimal path
//! from source to destination, the tie direction when half-way round); DOR to it, then DOR to
//! the destination. Both phases go the same way in every dimension, so the route is minimal.
//! Deadlock-free under `vc_policy = "phase_dateline"`, as Valiant.

use super::{grid_direction, start_two_phase, two_phase_dor, Candidates, RouteCtx, RouteState, Routing, Rng};
use crate::topology::Topology;
use rand::Rng as _;
use std::sync::Arc;

pub struct Romm {
    topo: Arc<dyn Topology>,
}

impl Romm {
    pub fn new(topo: Arc<dyn Topology>) -> Option<Self> {
        topo.cartesian()?;
        Some(Romm { topo })
    }
}

impl Routing for Romm {
    fn name(&self) -> &'static str {
        "romm"
    }

    fn on_inject(&self, state: &mut RouteState, rng: &mut Rng) {
        let grid = self.topo.cartesian().expect("checked in new");
        state.tie_dirs = rng.gen();
        let (src, dst) = (state.src_switch as usize, state.dst_switch as usize);
        let mut coords = grid.coords(src);
        for (dim, c) in coords.iter_mut().enumerate() {
            let dist = grid.offset(src, dst, dim).unsigned_abs() as usize;
            if dist == 0 {
                continue;
            }
            let dir = grid_direction(grid, src, dst, dim, state.tie_dirs);
            let k = grid.dims[dim];
            let t = rng.gen_range(0..=dist);
            *c = if dir > 0 { (*c + t) % k } else { (*c + k - t % k) % k };
        }
        start_two_phase(state, grid.switch_at(&coords));
    }

    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates) {
        two_phase_dor(self.topo.cartesian().expect("checked in new"), cx.switch, state, out);
    }

    fn max_hops(&self) -> usize {
        self.topo.diameter()
    }
}

pub const KIND: super::AlgorithmKind = super::AlgorithmKind {
    name: "romm",
    about: "two DOR phases through a random switch of the minimal quadrant",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    candidates: super::few_candidates,
    queues: super::QueueView::Blind,
    build: |cx| Ok(Arc::new(Romm::new(cx.topo.clone()).expect("cartesian"))),
};
