//! `spread`: ranks dealt round-robin over `groups` groups from `first_group` on (rank i in
//! the (i mod groups)-th), each group's free servers lowest first; a group with no free
//! server left is skipped.

use super::{Allocation, Machine};
use crate::routing::Rng;

keys! {
    struct Keys {
        /// where placing starts: the first server, or the first group for a policy that places by group
        offset: usize = 0,
        /// over how many groups, from offset on (all of them when not given)
        groups: Option<usize> = "all" => None,
    }
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "spread",
    about: "round robin over groups from offset",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    make: |spec, i| {
        let Keys { offset, groups } = super::own_keys(spec, i)?;
        Ok(Box::new(Spread { first_group: offset, groups }))
    },
};

pub struct Spread {
    pub first_group: usize,
    pub groups: Option<usize>,
}

impl Allocation for Spread {
    fn place(&self, ranks: usize, m: &Machine, _rng: &mut Rng) -> Result<Vec<u32>, String> {
        let groups = m.groups.max(1);
        let count = self.groups.unwrap_or(groups);
        if count == 0 || self.first_group + count > groups {
            return Err(format!("groups {}..{} are not all in the network's {groups} groups", self.first_group, self.first_group + count));
        }
        let mut lists: Vec<std::vec::IntoIter<u32>> =
            (self.first_group..self.first_group + count).map(|g| m.free_in_group(g).collect::<Vec<_>>().into_iter()).collect();
        let mut out = Vec::with_capacity(ranks);
        let mut g = 0;
        let mut dry = 0;
        while out.len() < ranks && dry < count {
            match lists[g].next() {
                Some(s) => {
                    out.push(s);
                    dry = 0;
                }
                None => dry += 1,
            }
            g = (g + 1) % count;
        }
        if out.len() < ranks {
            return Err(format!("{ranks} ranks do not fit: only {} free servers in groups {}..{}", out.len(), self.first_group, self.first_group + count));
        }
        Ok(out)
    }
}
