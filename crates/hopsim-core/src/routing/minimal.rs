//! `minimal` on low-diameter topologies (also `dor` on a HyperX): at every switch the hop of
//! the topology's minimal step (`MinimalStep`): DOR over HyperX dimensions (one hop per
//! dimension), local-global-local on a dragonfly, up-global-down on a dragonfly+, up/down on
//! a fat-tree, the wiring's shortest path on the others. With `routing.minimal_paths =
//! "all_shortest"` every hop one nearer the destination is a candidate instead, and the
//! allocator takes the one with most room (what a router with a distance table can do on any
//! graph); those paths leave the topology's own (on a dragonfly, global-local-global through a
//! third group), so only the hop ladders keep them deadlock-free (`deadlock_freedom`).

use super::all_shortest::AllShortest;
use super::{Candidates, MinimalStep, RouteCtx, RouteState, Routing, Rng, ValiantPaths};
use crate::spec::Spec;
use std::sync::Arc;

keys! {
    struct Keys {
        /// the topology's minimal path (topology) or every shortest next hop of the wiring, the one with most room taken (all_shortest; only with the hop ladders)
        minimal_paths: String = "topology",
    }
}

/// `routing.minimal_paths` of `minimal` (the topology's paths for every other algorithm).
pub fn paths(spec: &Spec) -> crate::error::SpecResult<ValiantPaths> {
    if super::algorithm(spec)? != super::Algorithm::Minimal {
        return Ok(ValiantPaths::Topology);
    }
    let Keys { minimal_paths } = super::own_keys(spec)?;
    super::ugal::choose("routing.minimal_paths", Some(&minimal_paths), ValiantPaths::Topology, &ValiantPaths::ALL, ValiantPaths::name)
}

pub struct Minimal {
    name: &'static str,
    step: Arc<dyn MinimalStep>,
    /// Every shortest next hop, under `minimal_paths = "all_shortest"`.
    all_shortest: Option<AllShortest>,
    diameter: usize,
}

impl Minimal {
    pub fn new(name: &'static str, step: Arc<dyn MinimalStep>, diameter: usize) -> Self {
        Minimal { name, step, all_shortest: None, diameter }
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
        let dst = state.dst_switch as usize;
        match &self.all_shortest {
            Some(all) => all.hops(cx.switch, dst, out),
            None => out.push(self.step.hop(cx.switch, dst, state, cx.rng), 0),
        }
    }

    fn max_hops(&self) -> usize {
        self.diameter
    }
}

pub const KIND: super::AlgorithmKind = super::AlgorithmKind {
    name: "minimal",
    about: "the topology's minimal path (local-global-local, up/down, one hop per HyperX dimension)",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    candidates: |spec, topo| super::candidates_on(paths(spec).unwrap_or(ValiantPaths::Topology), topo),
    queues: super::QueueView::Blind,
    build: build_minimal,
};

/// `minimal`, with its key.
fn build_minimal(cx: &super::BuildCtx) -> crate::error::SpecResult<Arc<dyn Routing>> {
    let paths = paths(cx.spec)?;
    let mut m = Minimal::new(cx.algorithm.name(), cx.step(), cx.topo.diameter());
    m.all_shortest = (paths == ValiantPaths::AllShortest).then(|| AllShortest::new(cx.topo.as_ref()));
    Ok(Arc::new(m))
}

/// The minimal routing under the algorithm's own name (`dor` on a HyperX is this).
pub fn build(cx: &super::BuildCtx) -> crate::error::SpecResult<Arc<dyn Routing>> {
    Ok(Arc::new(Minimal::new(cx.algorithm.name(), cx.step(), cx.topo.diameter())))
}
