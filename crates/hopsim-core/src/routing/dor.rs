//! Dimension-order routing: correct dimension 0 first, then 1, ...; minimal in each ring.
//! A packet exactly half-way round a ring goes the way its tie bit drawn at injection says
//! (`routing.ring_ties = "random"`), or always the positive way (`"positive"`, as SST
//! Merlin's torus: src/sst/elements/merlin/topology/torus.cc, `go_pos = (dist_pos <=
//! dist_neg)`), which under uniform traffic loads the positive channels of a ring of 8
//! switches 5/3 times as much as the negative ones.

use super::{dor_hop, Candidates, RouteCtx, RouteState, Routing, Rng};
use crate::error::SpecResult;
use crate::spec::Spec;
use crate::topology::{Cartesian, Topology};
use std::sync::Arc;

#[derive(Clone)]
pub struct Dor {
    topo: Arc<dyn Topology>,
    /// The topology's grid, kept here: every head's route reads it.
    grid: Cartesian,
    ties: RingTies,
}

/// `routing.ring_ties`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingTies {
    Random,
    Positive,
}

impl RingTies {
    pub const ALL: [RingTies; 2] = [RingTies::Random, RingTies::Positive];

    pub fn name(self) -> &'static str {
        match self {
            RingTies::Random => "random",
            RingTies::Positive => "positive",
        }
    }
}

keys! {
    /// `dor`'s `[routing]` keys.
    struct DorKeys {
        /// tori: the way a packet exactly half-way round a ring goes, drawn per packet (random) or always the positive way (positive, SST Merlin's)
        ring_ties: String = "random",
    }
}

impl Dor {
    pub fn new(topo: Arc<dyn Topology>, ties: RingTies) -> Option<Self> {
        let grid = topo.cartesian()?.clone();
        Some(Dor { topo, grid, ties })
    }

    fn ties(spec: &Spec) -> SpecResult<RingTies> {
        let keys: DorKeys = super::own_keys(spec)?;
        super::ugal::choose("routing.ring_ties", Some(&keys.ring_ties), RingTies::Random, &RingTies::ALL, RingTies::name)
    }
}

impl Routing for Dor {
    fn name(&self) -> &'static str {
        "dor"
    }

    fn on_inject(&self, state: &mut RouteState, rng: &mut Rng) {
        state.tie_dirs = match self.ties {
            RingTies::Random => rand::Rng::gen(rng),
            // A clear tie bit is the positive way (`ring_direction`).
            RingTies::Positive => 0,
        };
    }

    // Called directly for every head under a dateline policy (engine/head_routing.rs), and
    // inlined there only if forced: the arrival it is called from is large enough that the
    // compiler's own choice depends on how the crate happens to be split into units.
    #[inline(always)]
    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates) {
        if let Some(hop) = dor_hop(&self.grid, cx.switch, state.dst_switch as usize, state.tie_dirs) {
            out.push(hop, 0);
        }
    }

    fn max_hops(&self) -> usize {
        self.topo.diameter()
    }
}

/// `dor`: on tori and meshes this file's routing; on a HyperX the topology's minimal step
/// (one hop per dimension, lowest first), as `minimal`.
pub const KIND: super::AlgorithmKind = super::AlgorithmKind {
    name: "dor",
    about: "dimension-order routing: lowest dimension first, minimal in each ring",
    keys: DorKeys::KEYS,
    defaults: DorKeys::defaults,
    candidates: super::few_candidates,
    queues: super::QueueView::Blind,
    build: |cx| {
        let ties = Dor::ties(cx.spec)?;
        if cx.grid() { Ok(Arc::new(Dor::new(cx.topo.clone(), ties).expect("cartesian"))) } else { super::minimal::build(cx) }
    },
};
