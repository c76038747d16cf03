//! Valiant on low-diameter networks (HyperX, dragonfly, dragonfly+): at injection an
//! intermediate switch drawn uniformly among the switches that have servers (every switch of
//! a HyperX or dragonfly, every leaf of a dragonfly+); a minimal path to it (phase 0), then a
//! minimal path to the destination (phase 1), each phase the topology's `MinimalStep`.
//!
//! When the source or the destination switch is drawn, the packet is routed minimally
//! (`RouteState::valiant` = false) and the VC policy decides which phase's VCs it uses
//! (`min_first`, `min_last`, `min_both`), as in the VC-management paper; with
//! `routing.valiant_redraw = true` the intermediate is drawn again instead. With
//! `routing.valiant_paths = "all_shortest"` each phase offers every shortest next hop
//! (`all_shortest.rs`) instead of the topology's minimal step.

use super::all_shortest::AllShortest;
use super::{phase_target, Candidates, MinimalStep, RouteCtx, RouteState, Routing, Rng};
use crate::spec::Spec;
use crate::topology::Topology;
use rand::Rng as _;
use std::sync::Arc;

/// The paths of each Valiant phase (`routing.valiant_paths`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValiantPaths {
    /// The topology's minimal step (local-global-local on a dragonfly).
    Topology,
    /// Every shortest next hop from the wiring.
    AllShortest,
}

impl ValiantPaths {
    pub const ALL: [ValiantPaths; 2] = [ValiantPaths::Topology, ValiantPaths::AllShortest];

    pub fn name(self) -> &'static str {
        match self {
            ValiantPaths::Topology => "topology",
            ValiantPaths::AllShortest => "all_shortest",
        }
    }

    /// As `routing.valiant_paths` names them (a run whose routing was built).
    pub fn from_spec(spec: &Spec) -> Self {
        super::valiant::ValiantKeys::of(spec).and_then(|k| k.paths()).unwrap_or(ValiantPaths::Topology)
    }
}

pub struct LowDiameterValiant {
    step: Arc<dyn MinimalStep>,
    /// Every shortest next hop, when `routing.valiant_paths = "all_shortest"`.
    all_shortest: Option<AllShortest>,
    /// Switches an intermediate may be drawn from.
    pool: Vec<u32>,
    redraw: bool,
    diameter: usize,
}

impl LowDiameterValiant {
    pub fn new(topo: &dyn Topology, step: Arc<dyn MinimalStep>, redraw: bool, paths: ValiantPaths) -> Self {
        let pool = (0..topo.num_switches()).filter(|&s| topo.servers_at(s) > 0).map(|s| s as u32).collect();
        let all_shortest = (paths == ValiantPaths::AllShortest).then(|| AllShortest::new(topo));
        LowDiameterValiant { step, all_shortest, pool, redraw, diameter: topo.diameter() }
    }
}

impl Routing for LowDiameterValiant {
    fn name(&self) -> &'static str {
        "valiant"
    }

    fn on_inject(&self, state: &mut RouteState, rng: &mut Rng) {
        let (src, dst) = (state.src_switch, state.dst_switch);
        let mut mid = self.pool[rng.gen_range(0..self.pool.len())];
        // Redraw only if some other switch is left to draw.
        let others = self.pool.len() > 1 + usize::from(src != dst);
        while self.redraw && others && (mid == src || mid == dst) {
            mid = self.pool[rng.gen_range(0..self.pool.len())];
        }
        state.intermediate = mid;
        state.valiant = mid != src && mid != dst;
        state.phase = 0;
        self.step.on_inject(state, rng);
    }

    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates) {
        let target = phase_target(cx.switch, state);
        match &self.all_shortest {
            Some(all) => all.hops(cx.switch, target, out),
            None => out.push(self.step.hop(cx.switch, target, state, cx.rng), 0),
        }
    }

    fn max_hops(&self) -> usize {
        2 * self.diameter
    }
}
