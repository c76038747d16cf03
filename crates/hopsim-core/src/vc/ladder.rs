//! Ladder (the VC-management paper, section II-B): the i-th hop of a packet uses VC class i,
//! whatever its phase, with one class per hop of the longest path (the diameter D for minimal
//! routing, 2D for Valiant); more VCs are spread over the classes (JSQ inside a class). The VC
//! class strictly increases along every path, so channel dependencies are acyclic on any
//! topology: deadlock-free with any routing whose paths fit the ladder.
//!
//! `ladder_reuse` (Ladder with reused VCs): at hop i any class j <= i. Still deadlock-free: a
//! packet at hop i may always wait for class i + 1, which only packets further along use, so
//! by induction from the last class every packet advances.
//!
//! Built over the VCs it uses (`routing.ladder_vcs_per_step` x steps, or all): the others
//! stay empty, and servers inject only into these, as on a router that has only them.
//!
//! On a dragonfly the paper's Ladder is this hop ladder (6 VCs for Valiant, its Table III);
//! its separate local and global ladders (4 local steps, 2 global) are the 2Phases classes
//! (`min_first` and kin). Indexing local VCs by local hops so far and global VCs by global
//! hops so far would not be deadlock-free: a packet whose source switch holds the global link
//! goes global (global VC 0) then local on local VC 0, while another goes local VC 0 then
//! global VC 0.

use super::{mask_all, mask_range, VcPolicy};
use crate::route::{Hop, RouteState};

pub struct Ladder {
    name: &'static str,
    vcs: usize,
    /// VCs of each step (exact ladder) or of steps 0..=i (with reuse).
    masks: Vec<u32>,
}

impl Ladder {
    pub fn new(vcs: usize, steps: usize, reuse: bool) -> Option<Self> {
        if steps == 0 || vcs < steps {
            return None;
        }
        let masks = (0..steps)
            .map(|i| {
                let lo = if reuse { 0 } else { i * vcs / steps };
                mask_range(lo, (i + 1) * vcs / steps)
            })
            .collect();
        Some(Ladder { name: if reuse { "ladder_reuse" } else { "ladder" }, vcs, masks })
    }
}

impl VcPolicy for Ladder {
    fn name(&self) -> &'static str {
        self.name
    }
    #[inline]
    fn allowed(&self, st: &RouteState, hop: &Hop) -> u32 {
        if hop.eject {
            return self.all();
        }
        self.masks[(st.hops as usize).min(self.masks.len() - 1)]
    }
    /// Packets enter at the first step (VC 0 with one VC per step).
    fn injection(&self, _st: &RouteState) -> u32 {
        self.masks[0]
    }
    fn all(&self) -> u32 {
        mask_all(self.vcs)
    }
}

keys! {
    /// The key both ladders read.
    pub(super) struct LadderKeys {
        /// VCs per step, lowest first, the rest unused; 0 spreads all of router.vcs over the steps
        ladder_vcs_per_step: usize = 0,
    }
}

/// A ladder (`reuse`: `ladder_reuse`) over the VCs `routing.ladder_vcs_per_step` gives it,
/// with one step per hop of the routing's longest path.
pub(super) fn checked(cx: &super::PolicyCtx, reuse: bool) -> crate::error::SpecResult<std::sync::Arc<dyn super::VcPolicy>> {
    use crate::error::SpecError;
    let (vcs, spec) = (cx.vcs(), cx.spec);
    let steps = cx.max_hops.max(1);
    let LadderKeys { ladder_vcs_per_step: per_step } = super::own_keys(spec, Some(cx.policy))?;
    if per_step.saturating_mul(steps) > vcs {
        return Err(SpecError::new(
            "routing.ladder_vcs_per_step",
            per_step,
            format!("{steps} steps x {per_step} VCs need more than router.vcs = {vcs}; allowed: 0 (spread the {vcs} VCs over the steps) to {}", vcs / steps),
        ));
    }
    let used = if per_step == 0 { vcs } else { per_step * steps };
    let ladder = if reuse { super::ladder_reuse::build(used, steps) } else { Ladder::new(used, steps, false) };
    let ladder = ladder.ok_or_else(|| {
        let kind = cx.topo.kind();
        cx.too_few(format!("needs at least {steps} VCs on this {kind} with routing.algorithm = {:?} (one per hop of its longest path)", spec.routing.algorithm))
    })?;
    Ok(std::sync::Arc::new(ladder))
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "ladder",
    about: "the i-th hop on VC class i, one class per hop of the longest path",
    keys: LadderKeys::KEYS,
    defaults: LadderKeys::defaults,
    build: |cx| checked(cx, false),
};
