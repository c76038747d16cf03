//! `per_group`: whole groups, one after the other from `first_group` on: every free server
//! of a group before the next group's.

use super::{take, Allocation, Machine, OffsetKeys};
use crate::routing::Rng;

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "per_group",
    about: "fill one group before the next, from group offset",
    keys: OffsetKeys::KEYS,
    defaults: OffsetKeys::defaults,
    make: |spec, i| {
        let OffsetKeys { offset } = super::own_keys(spec, i)?;
        Ok(Box::new(PerGroup { first_group: offset }))
    },
};

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
