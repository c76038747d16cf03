//! Dimension-order routing: correct dimension 0 first, then 1, ...; minimal in each ring.

use super::{dor_hop, Candidates, RouteCtx, RouteState, Routing};
use crate::topology::{Cartesian, Topology};
use std::sync::Arc;

#[derive(Clone)]
pub struct Dor {
    topo: Arc<dyn Topology>,
    /// The topology's grid, kept here: every head's route reads it.
    grid: Cartesian,
}

impl Dor {
    pub fn new(topo: Arc<dyn Topology>) -> Option<Self> {
        let grid = topo.cartesian()?.clone();
        Some(Dor { topo, grid })
    }
}

impl Routing for Dor {
    fn name(&self) -> &'static str {
        "dor"
    }

    // Called directly for every head under a dateline policy (engine/head_routing.rs), and
    // inlined there only if marked.
    #[inline]
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
    keys: &[],
    defaults: crate::spec::defaults_of::<super::NoKeys>,
    queues: super::QueueView::Blind,
    build: |cx| if cx.grid() { Ok(Arc::new(Dor::new(cx.topo.clone()).expect("cartesian"))) } else { super::minimal::build(cx) },
};
