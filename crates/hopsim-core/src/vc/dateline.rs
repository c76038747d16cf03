//! Dateline classes for rings: the lower half of the VCs before a ring's wrap-around link,
//! the upper half after it. This breaks the cyclic channel dependency of each ring, so DOR
//! on a torus is deadlock-free. Meshes never cross a dateline.
//!
//! Two ways to draw the line, the same argument for both:
//! - `dateline`: a packet switches class on the hop that crosses the wrap-around link;
//! - `dateline_partition` (BookSim2's `dim_order_torus`): on entering a dimension a packet
//!   takes the upper class for the whole dimension if its path there crosses the link.

use super::{mask_all, mask_range, VcPolicy};
use crate::route::{Hop, RouteState};

#[derive(Clone)]
pub struct Dateline {
    before: u32,
    after: u32,
    /// Every VC (`all`), kept so an ejection's mask is a load, not a computation.
    every: u32,
    /// Decide the class for the whole dimension (BookSim's partition) instead of at the link.
    partition: bool,
}

impl Dateline {
    pub fn new(vcs: usize, partition: bool) -> Option<Self> {
        (vcs >= 2).then(|| Dateline { before: mask_range(0, vcs / 2), after: mask_range(vcs / 2, vcs), every: mask_all(vcs), partition })
    }
}

impl VcPolicy for Dateline {
    fn name(&self) -> &'static str {
        if self.partition {
            "dateline_partition"
        } else {
            "dateline"
        }
    }
    /// Computed whole and then selected, without branches: whether a hop ejects or crosses
    /// its dateline changes from head to head as their destinations do.
    fn allowed(&self, state: &RouteState, hop: &Hop) -> u32 {
        let this_hop = if self.partition { hop.wrap_ahead } else { hop.wraps };
        // A dimension past the 32 the bits hold (`NO_DIM` for an ejection) has crossed none.
        let crossed_before = state.wrapped.checked_shr(hop.dim as u32).unwrap_or(0) & 1 == 1;
        let class = if this_hop | crossed_before { self.after } else { self.before };
        if hop.eject {
            self.every
        } else {
            class
        }
    }
    /// Packets enter the network before any dateline: the injection buffer uses class 0.
    fn injection(&self, _state: &RouteState) -> u32 {
        self.before
    }
    fn all(&self) -> u32 {
        self.every
    }
}

fn build(cx: &super::PolicyCtx) -> crate::error::SpecResult<std::sync::Arc<dyn VcPolicy>> {
    let partition = cx.policy == super::Policy::DatelinePartition;
    let policy = Dateline::new(cx.vcs(), partition).ok_or_else(|| cx.too_few("needs at least 2 VCs (one class before the dateline, one after)".into()))?;
    Ok(std::sync::Arc::new(policy))
}

pub const DATELINE: super::PolicyKind = super::PolicyKind {
    name: "dateline",
    about: "tori: the lower half of the VCs before a ring's wrap-around link, the upper half after it",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build,
};

pub const DATELINE_PARTITION: super::PolicyKind = super::PolicyKind {
    name: "dateline_partition",
    about: "tori: the upper half for a whole dimension whose path crosses the wrap-around link (BookSim2)",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build,
};
