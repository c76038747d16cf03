//! Virtual-channel policies: which VCs a packet may use at the next buffer.
//!
//! Routing says where a packet may go; the VC policy says on which VCs, and that is what makes
//! a routing deadlock-free (or not). The allocator joins the shortest queue among the allowed VCs.

mod dateline;
mod escape;
mod ladder;
mod ladder_reuse;
mod min_both;
mod min_first;
mod min_last;
mod none;
mod phase_dateline;
mod two_phases;

use crate::error::{SpecError, SpecResult};
use crate::route::{Hop, RouteState};
use crate::spec::Spec;
use crate::topology::Topology;
use std::sync::Arc;

/// Ties of join-the-shortest-queue among equally free VCs, for the router's VC allocation
/// and the NIC's injection alike: the first VC found keeps a tie (`lowest`), or each of k
/// tied VCs ends up chosen with chance 1/k (`random`: reservoir sampling, the k-th replaces
/// the choice with chance 1/k).
pub struct JsqTies {
    random: bool,
    tied: u32,
}

impl JsqTies {
    pub fn new(random: bool) -> Self {
        JsqTies { random, tied: 1 }
    }
    /// A strictly better VC was found: it alone is the best so far.
    #[inline]
    pub fn better(&mut self) {
        self.tied = 1;
    }
    /// A VC as good as the best so far was found: whether it becomes the choice.
    #[inline]
    pub fn tie_wins(&mut self, rng: &mut crate::route::Rng) -> bool {
        use rand::Rng as _;
        if !self.random {
            return false;
        }
        self.tied += 1;
        rng.gen_range(0..self.tied) == 0
    }
}

pub trait VcPolicy: Send + Sync {
    fn name(&self) -> &'static str;
    /// VCs (a bit each) the packet may use in the buffer that `hop` leads to.
    fn allowed(&self, state: &RouteState, hop: &Hop) -> u32;
    /// VCs a packet may use in the switch's injection buffer.
    fn injection(&self, _state: &RouteState) -> u32 {
        self.all()
    }
    fn all(&self) -> u32;
}

/// The VC policies, as `routing.vc_policy` names them (`auto` is resolved by
/// `crate::deadlock_freedom` to one of these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Dateline,
    DatelinePartition,
    Escape,
    Ladder,
    LadderReuse,
    MinBoth,
    MinFirst,
    MinLast,
    None,
    PhaseDateline,
}

impl Policy {
    pub const ALL: [Policy; 10] = [
        Policy::Dateline,
        Policy::DatelinePartition,
        Policy::Escape,
        Policy::Ladder,
        Policy::LadderReuse,
        Policy::MinBoth,
        Policy::MinFirst,
        Policy::MinLast,
        Policy::None,
        Policy::PhaseDateline,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Policy::Dateline => "dateline",
            Policy::DatelinePartition => "dateline_partition",
            Policy::Escape => "escape",
            Policy::Ladder => "ladder",
            Policy::LadderReuse => "ladder_reuse",
            Policy::MinBoth => "min_both",
            Policy::MinFirst => "min_first",
            Policy::MinLast => "min_last",
            Policy::None => "none",
            Policy::PhaseDateline => "phase_dateline",
        }
    }

    /// The policy `routing.vc_policy` names, or `None` for `auto`.
    pub fn from_spec(spec: &Spec) -> SpecResult<Option<Policy>> {
        let name = spec.routing.vc_policy.as_str();
        if name == "auto" {
            return Ok(None);
        }
        Self::ALL.into_iter().find(|p| p.name() == name).map(Some).ok_or_else(|| {
            let all = Self::ALL.map(Policy::name).join(", ");
            SpecError::new("routing.vc_policy", format!("{name:?}"), format!("unknown VC policy; allowed: auto, {all}"))
        })
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
    let vcs = spec.router.vcs;
    let name = policy.name();
    let wrap = topo.cartesian().is_some_and(|g| g.wrap);
    let kind = topo.kind();
    match policy {
        Policy::Dateline | Policy::DatelinePartition => Ok(Arc::new(dateline::Dateline::new(vcs, policy == Policy::DatelinePartition).ok_or_else(|| {
            SpecError::new("router.vcs", vcs, format!("vc_policy = {name:?} needs at least 2 VCs (one class before the dateline, one after)"))
        })?)),
        Policy::None => Ok(Arc::new(none::AnyVc::new(vcs))),
        Policy::Escape => Ok(Arc::new(escape::Escape::new(vcs, wrap).ok_or_else(|| {
            let need = if wrap { "3 VCs (2 escape with a dateline + 1 adaptive)" } else { "2 VCs (1 escape + 1 adaptive)" };
            SpecError::new("router.vcs", vcs, format!("vc_policy = \"escape\" needs at least {need} on a {kind}"))
        })?)),
        Policy::PhaseDateline => Ok(Arc::new(phase_dateline::PhaseDateline::new(vcs, wrap).ok_or_else(|| {
            let need = if wrap { "4 VCs (2 phases x 2 dateline classes)" } else { "2 VCs (one per phase)" };
            SpecError::new("router.vcs", vcs, format!("vc_policy = \"phase_dateline\" needs at least {need} on a {kind}"))
        })?)),
        Policy::Ladder | Policy::LadderReuse => {
            let steps = max_hops.max(1);
            let per_step = spec.routing.ladder_vcs_per_step;
            if per_step.saturating_mul(steps) > vcs {
                return Err(SpecError::new(
                    "routing.ladder_vcs_per_step",
                    per_step,
                    format!("{steps} steps x {per_step} VCs need more than router.vcs = {vcs}; allowed: 0 (spread the {vcs} VCs over the steps) to {}", vcs / steps),
                ));
            }
            let used = if per_step == 0 { vcs } else { per_step * steps };
            let ladder = if policy == Policy::Ladder { ladder::Ladder::new(used, steps, false) } else { ladder_reuse::build(used, steps) };
            Ok(Arc::new(ladder.ok_or_else(|| {
                SpecError::new(
                    "router.vcs",
                    vcs,
                    format!(
                        "vc_policy = {name:?} needs at least {steps} VCs on this {kind} with routing.algorithm = {:?} (one per hop of its longest path)",
                        spec.routing.algorithm
                    ),
                )
            })?))
        }
        Policy::MinFirst | Policy::MinLast | Policy::MinBoth => {
            let dragonfly = topo.dragonfly().is_some();
            let two_phases = match policy {
                Policy::MinFirst => min_first::build(vcs, dragonfly),
                Policy::MinLast => min_last::build(vcs, dragonfly),
                _ => min_both::build(vcs, dragonfly),
            };
            Ok(Arc::new(two_phases.ok_or_else(|| {
                let need = two_phases::TwoPhases::needs(dragonfly);
                let why = if dragonfly { "2 phases x local VCs before / after the global hop" } else { "one per Valiant phase" };
                SpecError::new("router.vcs", vcs, format!("vc_policy = {name:?} needs at least {need} VCs on a {kind} ({why})"))
            })?))
        }
    }
}
