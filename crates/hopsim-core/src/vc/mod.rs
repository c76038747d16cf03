//! Virtual-channel policies: which VCs a packet may use at the next buffer.
//!
//! Routing says where a packet may go; the VC policy says on which VCs, and that is what makes
//! a routing deadlock-free (or not). The allocator joins the shortest queue among the allowed VCs.

mod dateline;
mod escape;
mod global_hops;
mod ladder;
mod ladder_reuse;
mod min_both;
mod min_first;
mod min_last;
mod none;
mod optical_dateline;
mod phase_dateline;
mod two_phases;

pub use dateline::Dateline;

use crate::error::{SpecError, SpecResult};
use crate::route::{Hop, RouteState};
use crate::spec::{Key, Spec};
use crate::topology::Topology;
use std::sync::Arc;

/// Ties of join-the-shortest-queue among equally free VCs, for the router's VC allocation
/// and the NIC's injection alike: the first VC found keeps a tie (`lowest`), or each of k
/// tied VCs ends up chosen with chance 1/k (`random`: reservoir sampling, the k-th replaces
/// the choice with chance 1/k). The generator is only given for `random`: a switch's sits
/// in an array of one per switch, far out of cache on a large network, and a step that
/// breaks no tie at random must not load it.
pub struct JsqTies<'a> {
    rng: Option<&'a mut crate::route::Rng>,
    tied: u32,
}

impl<'a> JsqTies<'a> {
    /// `rng`: the generator that breaks ties at random, or `None` to keep the first VC found.
    pub fn new(rng: Option<&'a mut crate::route::Rng>) -> Self {
        JsqTies { rng, tied: 1 }
    }
    /// A strictly better VC was found: it alone is the best so far.
    #[inline]
    pub fn better(&mut self) {
        self.tied = 1;
    }
    /// A VC as good as the best so far was found: whether it becomes the choice.
    #[inline]
    pub fn tie_wins(&mut self) -> bool {
        use rand::Rng as _;
        let Some(rng) = self.rng.as_deref_mut() else { return false };
        self.tied += 1;
        rng.gen_range(0..self.tied) == 0
    }
}

/// `Any` lets the engine call its commonest policy directly (engine/head_routing.rs).
pub trait VcPolicy: std::any::Any + Send + Sync {
    fn name(&self) -> &'static str;
    /// VCs (a bit each) the packet may use in the buffer that `hop` leads to.
    fn allowed(&self, state: &RouteState, hop: &Hop) -> u32;
    /// VCs a packet may use in the switch's injection buffer.
    fn injection(&self, _state: &RouteState) -> u32 {
        self.all()
    }
    /// VCs of its server's port a packet may take at its destination switch when
    /// `routing.ejection_vcs = "policy"`: the class it travels in, for a policy whose classes
    /// follow a packet's progress; every VC for the others.
    fn ejection(&self, _state: &RouteState) -> u32 {
        self.all()
    }
    fn all(&self) -> u32;
}

impl Policy {
    /// The policy `routing.vc_policy` names, or `None` for `auto`.
    pub fn from_spec(spec: &Spec) -> SpecResult<Option<Policy>> {
        let name = spec.routing.vc_policy.as_str();
        let policy = if name == "auto" {
            None
        } else {
            Some(Policy::from_name(name).ok_or_else(|| {
                let all = POLICIES.iter().map(|p| p.name).collect::<Vec<_>>().join(", ");
                SpecError::new("routing.vc_policy", format!("{name:?}"), format!("unknown VC policy; allowed: auto, {all}"))
            })?)
        };
        own_keys::<serde_json::Value>(spec, policy)?;
        Ok(policy)
    }
}

/// The `[routing]` keys of `policy` (none for `auto`), read into its key type `T`. The
/// keys of other policies are refused, unless the experiment sweeps `routing.vc_policy` (one
/// table then serves a ladder and 2Phases); any other key is the algorithm's to read, or
/// refuse (`routing::own_keys`).
pub fn own_keys<T: serde::de::DeserializeOwned>(spec: &Spec, policy: Option<Policy>) -> SpecResult<T> {
    let own = policy.map_or(&[][..], |p| p.kind().keys);
    let chosen = format!("routing.vc_policy = {:?}", spec.routing.vc_policy);
    let policies = || POLICIES.iter().flat_map(|p| p.keys.iter()).map(|k| k.name);
    let mut others = spec.keys_left_to_others("routing.vc_policy", policies());
    others.extend(spec.routing.algorithm_keys.keys().map(String::as_str).filter(|k| !policies().any(|p| p == *k)));
    crate::spec::read_own_keys("routing", &chosen, &spec.routing.algorithm_keys, crate::spec::ROUTING_TABLE_KEYS, own, &others)
}

/// `spec` with the policies' `[routing]` keys as the normalised spec writes them
/// (`spec::list_keys`): the named policy's with their defaults, the others' null, so the
/// normalised spec of each run of a sweep over `routing.vc_policy` is valid input on its
/// own. Under `auto` none is listed: a policy's key is refused there.
pub fn with_own_keys(mut spec: Spec) -> Spec {
    let own = Policy::from_name(spec.routing.vc_policy.as_str()).map_or(serde_json::Value::Null, |p| (p.kind().defaults)());
    crate::spec::list_keys(&mut spec.routing.algorithm_keys, own, POLICIES.iter().flat_map(|p| p.keys.iter()).map(|k| k.name));
    spec
}

/// A VC policy as the registry knows it, declared in its file: its `routing.vc_policy` name,
/// one line on it, the `[routing]` keys it reads and how it is built.
pub struct PolicyKind {
    pub name: &'static str,
    pub about: &'static str,
    pub keys: &'static [Key],
    /// Its key type's values when nothing is given (`KeyType::defaults`).
    pub defaults: fn() -> serde_json::Value,
    pub build: fn(&PolicyCtx) -> SpecResult<Arc<dyn VcPolicy>>,
}

registry! {
    /// The VC policies, as `routing.vc_policy` names them (`auto` is resolved by
    /// `crate::deadlock_freedom` to one of these): one line each, its variant and its entry,
    /// declared in its file.
    enum Policy;
    /// Every VC policy, in the order `hopsim list` and error messages give them.
    const POLICIES: [PolicyKind] = {
        Dateline => dateline::DATELINE,
        DatelinePartition => dateline::DATELINE_PARTITION,
        Escape => escape::KIND,
        GlobalHops => global_hops::KIND,
        Ladder => ladder::KIND,
        LadderReuse => ladder_reuse::KIND,
        MinBoth => min_both::KIND,
        MinFirst => min_first::KIND,
        MinLast => min_last::KIND,
        None => none::KIND,
        OpticalDateline => optical_dateline::KIND,
        PhaseDateline => phase_dateline::KIND,
    }
}

/// What a policy is built from.
pub struct PolicyCtx<'a> {
    pub spec: &'a Spec,
    pub policy: Policy,
    pub topo: &'a Arc<dyn Topology>,
    /// Switch-to-switch hops of the routing's longest path.
    pub max_hops: usize,
}

impl PolicyCtx<'_> {
    pub fn vcs(&self) -> usize {
        self.spec.router.vcs
    }
    /// A torus (rings with a wrap-around link).
    pub fn wrap(&self) -> bool {
        self.topo.cartesian().is_some_and(|g| g.wrap)
    }
    /// The network as a dragonfly, for policy `name` whose classes follow its global hops
    /// (`why`); an error naming `routing.vc_policy` on another network.
    pub fn dragonfly(&self, name: &str, why: &str) -> Result<&crate::topology::Dragonfly, SpecError> {
        crate::topology::concrete::<crate::topology::Dragonfly>(&**self.topo)
            .ok_or_else(|| SpecError::new("routing.vc_policy", format!("{name:?}"), format!("needs a dragonfly ({why}); topology.kind is {:?}", self.topo.kind())))
    }
    /// `router.vcs` is too few for the policy: `needs` says what it needs.
    pub fn too_few(&self, needs: String) -> SpecError {
        let r = &self.spec.routing;
        let auto = if r.vc_policy == "auto" {
            format!(" (routing.vc_policy = \"auto\" chose it as the sound policy for routing.algorithm = {:?}); set router.vcs to that many, or choose routing.vc_policy yourself (hopsim list shows the policies)", r.algorithm)
        } else {
            "; set router.vcs to that many".to_string()
        };
        SpecError::new("router.vcs", self.vcs(), format!("vc_policy = {:?} {needs}{auto}", self.policy.name()))
    }
}

pub fn mask_all(vcs: usize) -> u32 {
    if vcs >= 32 {
        u32::MAX
    } else {
        (1u32 << vcs) - 1
    }
}

/// The VCs `lo..hi` as a bit mask.
pub fn mask_range(lo: usize, hi: usize) -> u32 {
    mask_all(hi) & !mask_all(lo)
}

/// The policy `policy` for a run whose routing takes paths of up to `max_hops` hops.
pub fn build(spec: &Spec, policy: Policy, topo: &Arc<dyn Topology>, max_hops: usize) -> SpecResult<Arc<dyn VcPolicy>> {
    (policy.kind().build)(&PolicyCtx { spec, policy, topo, max_hops })
}

