//! Dateline by partition (BookSim's `dim_order_torus`): when a packet turns into a dimension,
//! it takes the upper half of the VCs for that whole dimension if its path there crosses the
//! wrap-around link, the lower half otherwise. Deadlock-free like `dateline`; the two differ in
//! how they share VCs, which changes saturation (docs/validation/booksim2.md).

use super::{mask_all, mask_range, VcPolicy};
use crate::routing::{Hop, RouteState};

pub struct DatelinePartition {
    vcs: usize,
    before: u32,
    after: u32,
}

impl DatelinePartition {
    pub fn new(vcs: usize) -> Option<Self> {
        (vcs >= 2).then(|| DatelinePartition { vcs, before: mask_range(0, vcs / 2), after: mask_range(vcs / 2, vcs) })
    }
}

impl VcPolicy for DatelinePartition {
    fn name(&self) -> &'static str {
        "dateline_partition"
    }
    fn allowed(&self, state: &RouteState, hop: &Hop) -> u32 {
        if hop.eject {
            return self.all();
        }
        let crossing = hop.wrap_ahead || (hop.dim < 32 && state.wrapped >> hop.dim & 1 == 1);
        if crossing {
            self.after
        } else {
            self.before
        }
    }
    fn injection(&self, _state: &RouteState) -> u32 {
        self.before
    }
    fn all(&self) -> u32 {
        mask_all(self.vcs)
    }
}
