//! BookSim2's UGAL classes on a dragonfly (`src/networks/dragonfly.cpp`, `ugal_dragonflynew`,
//! where the VC is the packet's phase `ph`): class 0 on every hop to the Valiant intermediate
//! switch, local and global alike; class 1 after it, or on a minimal path, up to the global
//! hop; class 2 from that global hop on (BookSim2's "optical dateline"), and for a packet
//! whose destination is in its source group from its first hop. So a detour's hops in its
//! source group and in its intermediate group share one class, where 2Phases gives each
//! side of the global hop its own.
//!
//! Not deadlock-free in general: class 0 chains a local hop in the intermediate group to the
//! next detour's global hop out of that group, and such chains can close round the groups.
//! `deadlock_freedom` accepts it unchecked, as a peer's rule; the watchdog reports a deadlock.

use super::{mask_all, mask_range, VcPolicy};
use crate::route::{Hop, RouteState};

const CLASSES: usize = 3;

pub struct OpticalDateline {
    vcs: usize,
    class: [u32; CLASSES],
    /// Switches per group.
    a: u32,
}

impl OpticalDateline {
    pub fn new(vcs: usize, a: usize) -> Option<Self> {
        if vcs < CLASSES {
            return None;
        }
        let class = std::array::from_fn(|c| mask_range(c * vcs / CLASSES, (c + 1) * vcs / CLASSES));
        Some(OpticalDateline { vcs, class, a: a as u32 })
    }

    /// BookSim2's `ph` for a hop from here, `global` whether it is a global hop.
    #[inline]
    fn phase(&self, st: &RouteState, global: bool) -> usize {
        if st.valiant && st.phase == 0 {
            0
        } else if global || st.global_hops > st.phase_start_global || (!st.valiant && st.src_switch / self.a == st.dst_switch / self.a) {
            2
        } else {
            1
        }
    }
}

impl VcPolicy for OpticalDateline {
    fn name(&self) -> &'static str {
        "optical_dateline"
    }
    /// `state.phase` is already the phase of the hop: routing switches phase at the
    /// intermediate switch before it lists the hops.
    #[inline]
    fn allowed(&self, st: &RouteState, hop: &Hop) -> u32 {
        if hop.eject {
            return self.all();
        }
        self.class[self.phase(st, hop.class == 1)]
    }
    /// BookSim2 ejects on the packet's phase VC (`out_vc = f->ph` at the last router too);
    /// a packet for a server of its own switch is one that stays in its group (`ph = 2`),
    /// whatever intermediate it drew.
    fn ejection(&self, st: &RouteState) -> u32 {
        if st.hops == 0 {
            return self.class[2];
        }
        self.class[self.phase(st, false)]
    }
    fn all(&self) -> u32 {
        mask_all(self.vcs)
    }
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "optical_dateline",
    about: "dragonfly UGAL: class 0 to the intermediate, 1 after it up to the global hop, 2 from it on (BookSim2's ugal_dragonflynew)",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| {
        let df = cx.dragonfly("optical_dateline", "its classes follow the global hop")?;
        let policy = OpticalDateline::new(cx.vcs(), df.a).ok_or_else(|| cx.too_few(format!("needs at least {CLASSES} VCs (BookSim2's three phases)")))?;
        Ok(std::sync::Arc::new(policy))
    },
};
