//! Escape VCs under Duato's protocol, for adaptive routings (`min_adaptive`, `rdr`).
//!
//! The escape hop (the DOR hop, `Hop::escape`) may use the escape VCs: on a torus VC 0 before
//! the ring's dateline and VC 1 after it (the `dateline` classes), on a mesh VC 0 alone. Every
//! other hop uses the adaptive VCs (2.. on a torus, 1.. on a mesh), which carry no ordering.
//! The escape sub-network is DOR with a dateline, acyclic even counting the indirect
//! dependencies through adaptive VCs (every route is minimal, so a packet never re-enters a
//! finished dimension and never crosses a ring's dateline twice); the escape hop is offered at
//! every switch; so by Duato's theorem the routing is deadlock-free under VCT and wormhole.

use super::{mask_all, mask_range, VcPolicy};
use crate::route::{Hop, RouteState};

pub struct Escape {
    vcs: usize,
    before: u32,
    after: u32,
    adaptive: u32,
}

impl Escape {
    /// Needs 3 VCs on a torus (2 escape + 1 adaptive), 2 on a mesh.
    pub fn new(vcs: usize, wrap: bool) -> Option<Self> {
        if wrap {
            (vcs >= 3).then(|| Escape { vcs, before: 1, after: 2, adaptive: mask_range(2, vcs) })
        } else {
            (vcs >= 2).then(|| Escape { vcs, before: 1, after: 1, adaptive: mask_range(1, vcs) })
        }
    }
}

impl VcPolicy for Escape {
    fn name(&self) -> &'static str {
        "escape"
    }
    fn allowed(&self, state: &RouteState, hop: &Hop) -> u32 {
        if hop.eject {
            return self.all();
        }
        if !hop.escape {
            return self.adaptive;
        }
        let crossed = hop.wraps || (hop.dim < 32 && state.wrapped >> hop.dim & 1 == 1);
        if crossed {
            self.after
        } else {
            self.before
        }
    }
    fn all(&self) -> u32 {
        mask_all(self.vcs)
    }
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "escape",
    about: "Duato's escape VCs: DOR with a dateline on the lowest VCs, the others adaptive",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| {
        let wrap = cx.wrap();
        let need = if wrap { "3 VCs (2 escape with a dateline + 1 adaptive)" } else { "2 VCs (1 escape + 1 adaptive)" };
        let policy = Escape::new(cx.vcs(), wrap).ok_or_else(|| cx.too_few(format!("needs at least {need} on a {}", cx.topo.kind())))?;
        Ok(std::sync::Arc::new(policy))
    },
};
