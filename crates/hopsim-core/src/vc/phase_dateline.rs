//! Two-phase routings (`valiant`, `romm`): VCs split into classes by phase (0 to the
//! intermediate switch, 1 after it) and, on a torus, by dateline within the phase, so four
//! classes: (phase 0, before), (phase 0, after), (phase 1, before), (phase 1, after).
//!
//! Each phase is DOR with a dateline on its own VCs (deadlock-free, Dally & Seitz), and phase 0
//! channels only lead to phase 1 channels, never back, so the union is deadlock-free. Needs 4
//! VCs on a torus, 2 on a mesh (no dateline).

use super::{mask_all, mask_range, VcPolicy};
use crate::route::{Hop, RouteState};

pub struct PhaseDateline {
    vcs: usize,
    /// Classes `phase * 2 + crossed` on a torus, `phase` on a mesh.
    class: [u32; 4],
    wrap: bool,
}

impl PhaseDateline {
    pub fn new(vcs: usize, wrap: bool) -> Option<Self> {
        let n = if wrap { 4 } else { 2 };
        if vcs < n {
            return None;
        }
        let mut class = [0; 4];
        for (c, m) in class.iter_mut().enumerate().take(n) {
            *m = mask_range(c * vcs / n, (c + 1) * vcs / n);
        }
        Some(PhaseDateline { vcs, class, wrap })
    }
    fn class_of(&self, phase: u8, crossed: bool) -> u32 {
        let phase = usize::from(phase.min(1));
        if self.wrap {
            self.class[phase * 2 + usize::from(crossed)]
        } else {
            self.class[phase]
        }
    }
}

impl VcPolicy for PhaseDateline {
    fn name(&self) -> &'static str {
        "phase_dateline"
    }
    /// `state.phase` is already the phase of the hop: routing switches phase at the
    /// intermediate switch before it lists the hops.
    fn allowed(&self, state: &RouteState, hop: &Hop) -> u32 {
        if hop.eject {
            return self.all();
        }
        let crossed = hop.wraps || (hop.dim < 32 && state.wrapped >> hop.dim & 1 == 1);
        self.class_of(state.phase, crossed)
    }
    fn injection(&self, state: &RouteState) -> u32 {
        self.class_of(state.phase, false)
    }
    fn all(&self) -> u32 {
        mask_all(self.vcs)
    }
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "phase_dateline",
    about: "two-phase routings on grids: VCs by (phase, dateline class)",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| {
        let wrap = cx.wrap();
        let need = if wrap { "4 VCs (2 phases x 2 dateline classes)" } else { "2 VCs (one per phase)" };
        let policy = PhaseDateline::new(cx.vcs(), wrap).ok_or_else(|| cx.too_few(format!("needs at least {need} on a {}", cx.topo.kind())))?;
        Ok(std::sync::Arc::new(policy))
    },
};
