//! `minimal` on low-diameter topologies (also `dor` on a HyperX): at every switch the hop of
//! the topology's minimal step (`MinimalStep`): DOR over HyperX dimensions (one hop per
//! dimension), local-global-local on a dragonfly, up-global-down on a dragonfly+, up/down on
//! a fat-tree.

use super::{Candidates, MinimalStep, RouteCtx, RouteState, Routing, Rng};
use std::sync::Arc;

pub struct Minimal {
    name: &'static str,
    step: Arc<dyn MinimalStep>,
    diameter: usize,
}

impl Minimal {
    pub fn new(name: &'static str, step: Arc<dyn MinimalStep>, diameter: usize) -> Self {
        Minimal { name, step, diameter }
    }
}

impl Routing for Minimal {
    fn name(&self) -> &'static str {
        self.name
    }

    /// No intermediate: `intermediate` is the source, so 2Phases policies treat the packet as
    /// minimal traffic drawn at its source (`min_both` puts it in the first phase).
    fn on_inject(&self, state: &mut RouteState, rng: &mut Rng) {
        state.intermediate = state.src_switch;
        self.step.on_inject(state, rng);
    }

    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates) {
        out.push(self.step.hop(cx.switch, state.dst_switch as usize, state, cx.rng), 0);
    }

    fn max_hops(&self) -> usize {
        self.diameter
    }
}

pub const KIND: super::AlgorithmKind = super::AlgorithmKind {
    name: "minimal",
    about: "the topology's minimal path (local-global-local, up/down, one hop per HyperX dimension)",
    keys: &[],
    defaults: crate::spec::defaults_of::<super::NoKeys>,
    queues: super::QueueView::Blind,
    build,
};

/// The minimal routing under the algorithm's own name (`dor` on a HyperX is this).
pub fn build(cx: &super::BuildCtx) -> crate::error::SpecResult<Arc<dyn Routing>> {
    Ok(Arc::new(Minimal::new(cx.algorithm.name(), cx.step(), cx.topo.diameter())))
}
