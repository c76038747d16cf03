//! `per_group`: whole groups, one after the other from `first_group` on: every free server
//! of a group before the next group's.

use super::{take, Allocation, Machine};
use crate::routing::Rng;

pub struct PerGroup {
    pub first_group: usize,
}

impl Allocation for PerGroup {
    fn place(&self, ranks: usize, m: &Machine, _rng: &mut Rng) -> Result<Vec<u32>, String> {
        let groups = m.groups.max(1);
        if self.first_group >= groups {
            return Err(format!("group {} is not among the network's {groups} groups", self.first_group));
        }
        let order = (self.first_group..groups).flat_map(|g| m.free_in_group(g));
        take(ranks, order, &format!("in groups {}..{groups}", self.first_group))
    }
}
