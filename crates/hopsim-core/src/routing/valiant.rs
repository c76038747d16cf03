//! Valiant routing: at injection, a uniformly random intermediate switch; DOR to it (phase 0),
//! then DOR to the destination (phase 1). Each phase crosses each ring's dateline at most once;
//! `vc_policy = "phase_dateline"` gives each (phase, dateline class) its own VCs, which makes
//! it deadlock-free: phase 0 channels only lead to phase 1 channels, and each phase is DOR with
//! a dateline.

use super::{start_two_phase, two_phase_dor, Candidates, RouteCtx, RouteState, Routing, Rng, ValiantPaths};
use crate::error::SpecResult;
use crate::spec::Spec;
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

/// `valiant`: this file's routing on tori and meshes, `valiant_low_diameter` elsewhere.
pub const KIND: super::AlgorithmKind = super::AlgorithmKind {
    name: "valiant",
    about: "two minimal phases through a random intermediate switch",
    keys: ValiantKeys::KEYS,
    defaults: ValiantKeys::defaults,
    candidates: |spec, topo| super::candidates_on(super::ValiantPaths::from_spec(spec), topo),
    queues: super::QueueView::Blind,
    build: |cx| {
        if cx.grid() {
            return Ok(Arc::new(Valiant::new(cx.topo.clone()).expect("cartesian")));
        }
        let keys = ValiantKeys::of(cx.spec)?;
        Ok(Arc::new(super::valiant_low_diameter::LowDiameterValiant::new(cx.topo.as_ref(), cx.step(), keys.valiant_redraw, keys.paths()?)))
    },
};

keys! {
    /// `valiant`'s `[routing]` keys, which only its low-diameter form reads.
    pub(super) struct ValiantKeys {
        /// low-diameter networks: each phase's paths, topology (its minimal path) or all_shortest (every shortest next hop)
        valiant_paths: String = "topology",
        /// low-diameter networks: draw the intermediate again when it is the source or destination switch
        valiant_redraw: bool = false,
    }
}

impl ValiantKeys {
    /// As the `[routing]` table gives them, whichever algorithm is chosen (the chosen one's
    /// `own_keys` refuses them for another algorithm; `deadlock_freedom::check_defined` for
    /// Valiant on a grid).
    pub(super) fn of(spec: &Spec) -> SpecResult<Self> {
        let chosen = format!("routing.algorithm = {:?}", spec.routing.algorithm);
        crate::spec::read_listed_keys("routing", &chosen, &spec.routing.algorithm_keys, KIND.keys)
    }

    pub(super) fn paths(&self) -> SpecResult<ValiantPaths> {
        super::ugal::choose("routing.valiant_paths", Some(&self.valiant_paths), ValiantPaths::Topology, &ValiantPaths::ALL, ValiantPaths::name)
    }
}

/// `routing.valiant_redraw` and `routing.valiant_paths` as given (checked where they apply by
/// `deadlock_freedom::check_defined`).
pub fn valiant_options(spec: &Spec) -> SpecResult<(bool, ValiantPaths)> {
    let keys = ValiantKeys::of(spec)?;
    Ok((keys.valiant_redraw, keys.paths()?))
}
