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
use crate::routing::{Hop, RouteState};
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
    pub fn tie_wins(&mut self, rng: &mut crate::routing::Rng) -> bool {
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

pub const POLICIES: &str =
    "auto, dateline, dateline_partition, escape, ladder, ladder_reuse, min_both, min_first, min_last, none, phase_dateline";

/// The policy a spec asks for; `auto` picks the one that makes its routing deadlock-free.
pub fn resolve(spec: &Spec) -> &str {
    let low_diameter = matches!(spec.topology.kind.as_str(), "hyperx" | "dragonfly" | "dragonfly_plus" | "fat_tree" | "aries");
    match (spec.routing.vc_policy.as_str(), spec.routing.algorithm.as_str()) {
        ("auto", "valiant") if low_diameter => "ladder",
        // Minimal local-global-local needs ordered local VCs; ladder_reuse shares them best.
        // Aries takes up to two local hops on each side of the global one, in either order.
        ("auto", _) if matches!(spec.topology.kind.as_str(), "dragonfly" | "aries") => "ladder_reuse",
        // Minimal routing on HyperX (DOR), dragonfly+ and fat-trees is deadlock-free on any VC.
        ("auto", _) if low_diameter => "none",
        ("auto", "rdr" | "min_adaptive") => "escape",
        ("auto", "valiant" | "romm") => "phase_dateline",
        ("auto", _) => "dateline",
        (name, _) => name,
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

pub fn build(spec: &Spec, topo: &Arc<dyn Topology>) -> SpecResult<Arc<dyn VcPolicy>> {
    let vcs = spec.router.vcs;
    let name = resolve(spec);
    let wrap = topo.cartesian().is_some_and(|g| g.wrap);
    let kind = topo.kind();
    match name {
        "dateline" | "dateline_partition" => Ok(Arc::new(dateline::Dateline::new(vcs, name == "dateline_partition").ok_or_else(|| {
            SpecError::new("router.vcs", vcs, format!("vc_policy = {name:?} needs at least 2 VCs (one class before the dateline, one after)"))
        })?)),
        "none" => Ok(Arc::new(none::AnyVc::new(vcs))),
        "escape" => Ok(Arc::new(escape::Escape::new(vcs, wrap).ok_or_else(|| {
            let need = if wrap { "3 VCs (2 escape with a dateline + 1 adaptive)" } else { "2 VCs (1 escape + 1 adaptive)" };
            SpecError::new("router.vcs", vcs, format!("vc_policy = \"escape\" needs at least {need} on a {kind}"))
        })?)),
        "phase_dateline" => Ok(Arc::new(phase_dateline::PhaseDateline::new(vcs, wrap).ok_or_else(|| {
            let need = if wrap { "4 VCs (2 phases x 2 dateline classes)" } else { "2 VCs (one per phase)" };
            SpecError::new("router.vcs", vcs, format!("vc_policy = \"phase_dateline\" needs at least {need} on a {kind}"))
        })?)),
        "ladder" | "ladder_reuse" => {
            let valiant = spec.routing.algorithm == "valiant";
            let steps = topo.diameter().max(1) * if valiant { 2 } else { 1 };
            let per_step = spec.routing.ladder_vcs_per_step;
            if per_step.saturating_mul(steps) > vcs {
                return Err(SpecError::new(
                    "routing.ladder_vcs_per_step",
                    per_step,
                    format!("{steps} steps x {per_step} VCs need more than router.vcs = {vcs}; allowed: 0 (spread the {vcs} VCs over the steps) to {}", vcs / steps),
                ));
            }
            let used = if per_step == 0 { vcs } else { per_step * steps };
            let policy = if name == "ladder" { ladder::Ladder::new(used, steps, false) } else { ladder_reuse::build(used, steps) };
            Ok(Arc::new(policy.ok_or_else(|| {
                SpecError::new(
                    "router.vcs",
                    vcs,
                    format!(
                        "vc_policy = {name:?} needs at least {steps} VCs on this {kind} with routing.algorithm = {:?} (one per hop of the longest path)",
                        spec.routing.algorithm
                    ),
                )
            })?))
        }
        "min_first" | "min_last" | "min_both" => {
            let dragonfly = topo.dragonfly().is_some();
            let policy = match name {
                "min_first" => min_first::build(vcs, dragonfly),
                "min_last" => min_last::build(vcs, dragonfly),
                _ => min_both::build(vcs, dragonfly),
            };
            Ok(Arc::new(policy.ok_or_else(|| {
                let need = two_phases::TwoPhases::needs(dragonfly);
                let why = if dragonfly { "2 phases x local VCs before / after the global hop" } else { "one per Valiant phase" };
                SpecError::new("router.vcs", vcs, format!("vc_policy = {name:?} needs at least {need} VCs on a {kind} ({why})"))
            })?))
        }
        _ => Err(SpecError::new("routing.vc_policy", format!("{name:?}"), format!("unknown VC policy; allowed: {POLICIES}"))),
    }
}
