//! Valiant routing: at injection, a uniformly random intermediate switch; DOR to it (phase 0),
//! then DOR to the destination (phase 1). Each phase crosses each ring's dateline at most once;
//! `vc_policy = "phase_dateline"` gives each (phase, dateline class) its own VCs, which makes
//! it deadlock-free: phase 0 channels only lead to phase 1 channels, and each phase is DOR with
//! a dateline.

use super::{dor_hop, phase_target, Candidates, RouteState, Routing, Rng};
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
        state.intermediate = rng.gen_range(0..self.topo.num_switches()) as u32;
        state.valiant = true;
        state.phase = u8::from(state.intermediate == state.src_switch);
    }

    fn route(&self, switch: usize, state: &mut RouteState, _rng: &mut Rng, out: &mut Candidates) {
        let grid = self.topo.cartesian().expect("checked in new");
        let target = phase_target(switch, state);
        if let Some(hop) = dor_hop(grid, switch, target, state.tie_dirs) {
            out.push(hop, 0);
        }
    }

    fn sound_policies(&self) -> &'static [&'static str] {
        &["phase_dateline"]
    }
}
