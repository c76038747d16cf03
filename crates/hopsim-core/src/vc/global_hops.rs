//! VC class by global hops taken (SST Merlin's dragonfly): a packet is in class 0 in its
//! source group, and each global hop moves it up one class, the hop's own buffer included
//! (`merlin/topology/dragonfly.cc`, `route_nonadaptive`: the VC goes up by one as a packet
//! comes in on a global port). Every hop inside a group is in that group's class, so one
//! class of a global port carries both the packets that start at its switch and those passing
//! through from the rest of the group: a rule that reads the packet's own VC there (Merlin's
//! `ugal` and `adaptive-local`, `ugal_queue = "vc"`) sees both.
//!
//! Three classes (a Valiant path crosses two global links), the VCs spread over them.
//! Deadlock-free where a packet takes at most one local hop in each group (minimal routing,
//! Valiant through the gateway of its intermediate group): within a class a local hop only
//! leads to a global one, which leads to the next class. Not with two local hops in one
//! group (an intermediate switch other than the gateway), so `deadlock_freedom` accepts it
//! unchecked, as a peer's rule.

use super::{mask_all, mask_range, VcPolicy};
use crate::route::{Hop, RouteState};

const CLASSES: usize = 3;

pub struct GlobalHops {
    vcs: usize,
    class: [u32; CLASSES],
}

impl GlobalHops {
    pub fn new(vcs: usize) -> Option<Self> {
        if vcs < CLASSES {
            return None;
        }
        let class = std::array::from_fn(|c| mask_range(c * vcs / CLASSES, (c + 1) * vcs / CLASSES));
        Some(GlobalHops { vcs, class })
    }
    #[inline]
    fn of(&self, st: &RouteState) -> u32 {
        self.class[usize::from(st.global_hops).min(CLASSES - 1)]
    }
}

impl VcPolicy for GlobalHops {
    fn name(&self) -> &'static str {
        "global_hops"
    }
    /// The global hops taken before `hop`: a global hop's buffer is still in the class the
    /// packet left with.
    #[inline]
    fn allowed(&self, st: &RouteState, hop: &Hop) -> u32 {
        if hop.eject {
            return self.all();
        }
        self.of(st)
    }
    fn injection(&self, _st: &RouteState) -> u32 {
        self.class[0]
    }
    fn ejection(&self, st: &RouteState) -> u32 {
        self.of(st)
    }
    fn all(&self) -> u32 {
        mask_all(self.vcs)
    }
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "global_hops",
    about: "dragonfly: VC class = global hops taken so far, every hop of a group in one class (SST Merlin's dragonfly)",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| {
        // On another network every packet would stay in class 0.
        cx.dragonfly("global_hops", "its classes count global hops")?;
        let policy = GlobalHops::new(cx.vcs()).ok_or_else(|| cx.too_few(format!("needs at least {CLASSES} VCs (one per count of global hops, 0 to 2)")))?;
        Ok(std::sync::Arc::new(policy))
    },
};
