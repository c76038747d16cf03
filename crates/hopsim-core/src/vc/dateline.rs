//! Dateline classes for rings: a packet uses the lower half of the VCs in a dimension until it
//! crosses that ring's wrap-around link, then the upper half. This breaks the cyclic channel
//! dependency of each ring, so DOR on a torus is deadlock-free. Meshes never cross a dateline.

use super::{mask_all, mask_range, VcPolicy};
use crate::routing::{Hop, RouteState};

pub struct Dateline {
    vcs: usize,
    before: u32,
    after: u32,
}

impl Dateline {
    pub fn new(vcs: usize) -> Option<Self> {
        (vcs >= 2).then(|| Dateline { vcs, before: mask_range(0, vcs / 2), after: mask_range(vcs / 2, vcs) })
    }
}

impl VcPolicy for Dateline {
    fn name(&self) -> &'static str {
        "dateline"
    }
    fn allowed(&self, state: &RouteState, hop: &Hop) -> u32 {
        if hop.eject {
            return self.all();
        }
        let crossed = hop.wraps || (hop.dim < 32 && state.wrapped >> hop.dim & 1 == 1);
        if crossed {
            self.after
        } else {
            self.before
        }
    }
    /// Packets enter the network before any dateline: the injection buffer uses class 0.
    fn injection(&self, _state: &RouteState) -> u32 {
        self.before
    }
    fn all(&self) -> u32 {
        mask_all(self.vcs)
    }
}
