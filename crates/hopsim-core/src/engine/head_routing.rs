//! Where a head that reaches a switch may go next: its destination's server port there, or
//! the routing's candidates, each with the VCs the VC policy allows it.
//!
//! Every head of a run asks this, so the commonest pair, dimension-order routing with
//! dateline classes on a torus or mesh, is called directly rather than through the `Routing`
//! and `VcPolicy` traits: both then inline into the arrival, which no longer keeps its state
//! across two calls it cannot see into (docs/benchmarks.md has the measurements). Every
//! other pair goes through the traits, with the same code, so the two ways cannot give
//! different routes.

use crate::packet::Routed;
use crate::route::{Hop, RouteCtx, Rng, NO_DIM};
use crate::router::{Routers, SwitchView};
use crate::routing::{Dor, Routing};
use crate::spec::EjectionVcs;
use crate::topology::ServerMap;
use crate::vc::{Dateline, VcPolicy};
use std::any::Any;

/// How a run routes its heads, chosen once from its routing and VC policy. There is one per
/// run, so its size does not matter, and a box would add a load to every head.
#[allow(clippy::large_enum_variant)]
pub(super) enum HeadRouting {
    /// Dimension-order routing with either dateline policy, called directly.
    DorDateline(Dor, Dateline),
    /// The run's routing and VC policy, through their traits.
    Traits,
}

/// The switch a head reached, and the run's routing and VC policy with what they read there.
pub(super) struct Heading<'a> {
    pub routers: &'a Routers,
    pub routing: &'a dyn Routing,
    pub vc_policy: &'a dyn VcPolicy,
    /// The VCs the policy uses (`Params::policy_vcs`).
    pub policy_vcs: u32,
    pub ejection: EjectionVcs,
    pub queue_reach: crate::route::QueueReach,
    pub servers: &'a ServerMap,
    pub switch: usize,
}

impl HeadRouting {
    pub fn of(routing: &dyn Routing, vc_policy: &dyn VcPolicy) -> Self {
        let (routing, vc_policy): (&dyn Any, &dyn Any) = (routing, vc_policy);
        match (routing.downcast_ref::<Dor>(), vc_policy.downcast_ref::<Dateline>()) {
            (Some(dor), Some(dateline)) => HeadRouting::DorDateline(dor.clone(), dateline.clone()),
            _ => HeadRouting::Traits,
        }
    }

    /// Whether the pair is called directly.
    pub fn direct(&self) -> bool {
        !matches!(self, HeadRouting::Traits)
    }

    /// Fill the candidates of `pkt`'s head at `at.switch`.
    #[inline(always)]
    pub fn route(&self, at: &Heading, rng: &mut Rng, pkt: Routed) {
        match self {
            HeadRouting::DorDateline(dor, dateline) => candidates(at, dor, dateline, rng, pkt),
            HeadRouting::Traits => candidates(at, at.routing, at.vc_policy, rng, pkt),
        }
    }
}

#[inline(always)]
fn candidates<R: Routing + ?Sized, P: VcPolicy + ?Sized>(at: &Heading, routing: &R, vc_policy: &P, rng: &mut Rng, pkt: Routed) {
    let switch = at.switch;
    let Routed { state, dst, candidates: mut out } = pkt;
    out.clear();
    if state.dst_switch as usize == switch {
        let port = at.routers.network_ports_of(switch) + at.servers.local_index(*dst as usize);
        let hop = Hop { port: port as u16, dim: NO_DIM, eject: true, ..Default::default() };
        let vcs = match at.ejection {
            EjectionVcs::Any => vc_policy.allowed(state, &hop) & at.policy_vcs,
            EjectionVcs::Policy => vc_policy.ejection(state) & at.policy_vcs,
        };
        out.push(hop, 0);
        out.as_mut_slice()[0].vcs = state.usable_vcs(vcs);
        return;
    }
    let view = SwitchView { routers: at.routers, vc_policy: at.vc_policy, reach: at.queue_reach };
    let mut cx = RouteCtx { switch, rng, congestion: &view };
    routing.route(&mut cx, state, &mut out);
    assert!(!out.is_empty(), "routing {} gave no candidate at switch {switch}", routing.name());
    for c in out.as_mut_slice() {
        c.vcs = state.usable_vcs(vc_policy.allowed(state, &c.hop) & at.policy_vcs);
    }
}
