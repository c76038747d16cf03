//! 2Phases (the VC-management paper, section II-A): the VCs split by Valiant phase, the first
//! half for the way to the intermediate switch (phase 0), the second half after it (phase 1).
//! A packet routed minimally (its drawn intermediate was its source or destination switch,
//! or the routing is minimal) stays in one phase, which `min_first`, `min_last` and
//! `min_both` choose.
//!
//! On a dragonfly each phase is local-global-local, and a local hop after the global one
//! must not share VCs with a local hop before it, so local ports have four classes (phase,
//! before/after the phase's global hop) of a quarter of the VCs each, and global ports two
//! classes (phase) of a quarter each (the upper half of a global port's VCs stays unused):
//! `router.vcs = 8` is the paper's 4/8 configuration (4 global, 8 local VCs), 4 its 2/4.
//!
//! Deadlock-free with Valiant on HyperX (DOR per phase), dragonfly (lgl per phase, ordered
//! local classes) and dragonfly+ (up-global-down per phase): within a class the channel
//! dependencies are acyclic, and classes are only ever entered in increasing order.

use super::{mask_all, mask_range, VcPolicy};
use crate::route::{Hop, RouteState};

/// Which phase's VCs a minimally routed packet uses.
pub type MinimalPhase = fn(&RouteState) -> usize;

pub struct TwoPhases {
    name: &'static str,
    vcs: usize,
    minimal_phase: MinimalPhase,
    dragonfly: bool,
    phase: [u32; 2],
    local: [u32; 4],
    global: [u32; 2],
}

impl TwoPhases {
    /// The fewest VCs: 2 (one per phase), 4 on a dragonfly (its four local classes).
    pub fn needs(dragonfly: bool) -> usize {
        if dragonfly {
            4
        } else {
            2
        }
    }

    pub fn new(name: &'static str, vcs: usize, dragonfly: bool, minimal_phase: MinimalPhase) -> Option<Self> {
        if vcs < Self::needs(dragonfly) {
            return None;
        }
        let q = |c: usize| mask_range(c * vcs / 4, (c + 1) * vcs / 4);
        Some(TwoPhases {
            name,
            vcs,
            minimal_phase,
            dragonfly,
            phase: [mask_range(0, vcs / 2), mask_range(vcs / 2, vcs)],
            local: [q(0), q(1), q(2), q(3)],
            global: [q(0), q(1)],
        })
    }

    /// A dragonfly's local class in phase `p`: before or after the phase's global hop.
    #[inline]
    fn local_class(&self, st: &RouteState, p: usize) -> u32 {
        self.local[2 * p + usize::from(st.global_hops > st.phase_start_global)]
    }

    #[inline]
    fn phase_of(&self, st: &RouteState) -> usize {
        if st.valiant {
            usize::from(st.phase.min(1))
        } else {
            (self.minimal_phase)(st)
        }
    }
}

impl VcPolicy for TwoPhases {
    fn name(&self) -> &'static str {
        self.name
    }
    /// `state.phase` is already the phase of the hop: routing switches phase at the
    /// intermediate switch before it lists the hops.
    #[inline]
    fn allowed(&self, st: &RouteState, hop: &Hop) -> u32 {
        if hop.eject {
            return self.all();
        }
        let p = self.phase_of(st);
        if !self.dragonfly {
            return self.phase[p];
        }
        if hop.class == 1 {
            self.global[p]
        } else {
            self.local_class(st, p)
        }
    }
    fn injection(&self, st: &RouteState) -> u32 {
        let p = self.phase_of(st);
        if self.dragonfly {
            self.local[2 * p]
        } else {
            self.phase[p]
        }
    }
    /// The class a local hop from here would take: the packet's phase, and on a dragonfly
    /// whether it has taken that phase's global hop.
    fn ejection(&self, st: &RouteState) -> u32 {
        let p = self.phase_of(st);
        if self.dragonfly {
            self.local_class(st, p)
        } else {
            self.phase[p]
        }
    }
    fn all(&self) -> u32 {
        mask_all(self.vcs)
    }
}

/// A 2Phases policy made by `make`, or the error saying how many VCs it needs.
pub(super) fn checked(cx: &super::PolicyCtx, make: fn(usize, bool) -> Option<TwoPhases>) -> crate::error::SpecResult<std::sync::Arc<dyn super::VcPolicy>> {
    let dragonfly = crate::topology::concrete::<crate::topology::Dragonfly>(&**cx.topo).is_some();
    let policy = make(cx.vcs(), dragonfly).ok_or_else(|| {
        let why = if dragonfly { "2 phases x local VCs before / after the global hop" } else { "one per Valiant phase" };
        cx.too_few(format!("needs at least {} VCs on a {} ({why})", TwoPhases::needs(dragonfly), cx.topo.kind()))
    })?;
    Ok(std::sync::Arc::new(policy))
}
