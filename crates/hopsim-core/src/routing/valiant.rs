//! Valiant routing: at injection, a uniformly random intermediate switch; DOR to it (phase 0),
//! then DOR to the destination (phase 1). Each phase crosses each ring's dateline at most once;
//! `vc_policy = "phase_dateline"` gives each (phase, dateline class) its own VCs, which makes
//! it deadlock-free: phase 0 channels only lead to phase 1 channels, and each phase is DOR with
//! a dateline.

use super::{start_two_phase, two_phase_dor, Candidates, RouteCtx, RouteState, Routing, Rng};
use crate::topology::Topology;
use rand::Rng as _;
use std::sync::Arc;

pub struct Valiant {
    topo: Arc<dyn Topology>,
}

impl Valiant {
    pub fn new(topo: Arc<dyn Topology>) -> Option<Self> {
        topo.cartesian()?;
        Some(Valiant { topo })
    }
}

impl Routing for Valiant {
    fn name(&self) -> &'static str {
        "valiant"
    }

    fn on_inject(&self, state: &mut RouteState, rng: &mut Rng) {
        state.tie_dirs = rng.gen();
        start_two_phase(state, rng.gen_range(0..self.topo.num_switches()));
    }

    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates) {
        two_phase_dor(self.topo.cartesian().expect("checked in new"), cx.switch, state, out);
    }

    fn max_hops(&self) -> usize {
        2 * self.topo.diameter()
    }
}
