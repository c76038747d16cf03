//! PAR (Progressive Adaptive Routing, Jiang, Kim and Dally 2009) on the dragonfly: UGAL-L's
//! choice at the source switch, made again at the next switch if the packet went minimally
//! and is still in its source group. A congested global link is often behind the gateway
//! switch, which sees it directly where the source switch sees it only through the credits
//! of one local link; letting the gateway divert the packet fixes much of UGAL-L's blindness
//! under adversarial traffic. A packet sent non-minimally stays so.
//!
//! A diverted packet has taken one minimal local hop and then starts a Valiant path: up to
//! 1 + 2 x 3 = 7 hops, two of them local hops in the source group before any global hop, which
//! 2Phases classes do not order. The hop ladder (7 steps) does (`crate::deadlock_freedom`).

use super::ugal::{commit, local_choice, Intermediates, UgalParams};
use super::{phase_target, Candidates, MinimalStep, RouteCtx, RouteState, Routing, Rng};
use crate::topology::Topology;
use std::sync::Arc;

pub struct Par {
    topo: Arc<dyn Topology>,
    step: Arc<dyn MinimalStep>,
    intermediates: Intermediates,
    params: UgalParams,
}

impl Par {
    pub fn new(topo: Arc<dyn Topology>, step: Arc<dyn MinimalStep>, params: UgalParams) -> crate::error::SpecResult<Self> {
        let intermediates = Intermediates::new(topo.as_ref(), params.intermediate)?;
        Ok(Par { topo, step, intermediates, params })
    }
}

impl Routing for Par {
    fn name(&self) -> &'static str {
        "par"
    }

    fn on_inject(&self, state: &mut RouteState, rng: &mut Rng) {
        self.intermediates.draw(state, rng);
        self.step.on_inject(state, rng);
    }

    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates) {
        // The cheap tests first: this runs at every hop of every packet.
        let undecided = !state.valiant && state.hops <= 1 && state.global_hops == 0;
        if undecided && self.topo.group_of(cx.switch) == self.topo.group_of(state.src_switch as usize) {
            let (min_hop, nonmin) = local_choice(self.topo.as_ref(), self.step.as_ref(), cx, state, &self.params);
            if let Some(hop) = nonmin {
                // The Valiant path starts here: its phase 0 leads to the intermediate.
                commit(state, true);
                out.push(hop, 0);
                return;
            }
            if state.hops == 1 {
                commit(state, false);
            }
            out.push(min_hop, 0);
            return;
        }
        let target = phase_target(cx.switch, state);
        out.push(self.step.hop(cx.switch, target, state, cx.rng), 0);
    }

    fn max_hops(&self) -> usize {
        1 + 2 * self.topo.diameter()
    }
}

pub const KIND: super::AlgorithmKind = super::AlgorithmKind {
    name: "par",
    about: "progressive adaptive routing: UGAL-L's choice, made again at the next switch of the source group",
    keys: super::ugal::UgalKeys::KEYS,
    defaults: super::ugal::UgalKeys::defaults,
    candidates: super::few_candidates,
    queues: super::QueueView::OwnSwitch,
    build: |cx| Ok(Arc::new(Par::new(cx.topo.clone(), cx.step(), UgalParams::from_spec(cx.spec)?)?)),
};
