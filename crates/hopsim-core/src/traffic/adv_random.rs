//! ADVr+i (dragonflies): each server of group G sends to a server drawn uniformly in group
//! G + i (mod groups); i = `traffic.adv_offset`, by default h.

use super::{GroupServers, PatternCtx, TrafficPattern};
use crate::error::SpecResult;
use crate::routing::Rng;
use rand::Rng as _;

pub struct AdvRandom {
    groups: GroupServers,
}

impl AdvRandom {
    pub fn new(ctx: &PatternCtx) -> SpecResult<Self> {
        Ok(AdvRandom { groups: GroupServers::new(ctx)? })
    }
}

impl TrafficPattern for AdvRandom {
    fn name(&self) -> &'static str {
        "adv_random"
    }
    fn destination(&self, src: usize, rng: &mut Rng) -> usize {
        let g = &self.groups;
        let target = &g.members[g.target_group(src)];
        target[rng.gen_range(0..target.len())] as usize
    }
}

pub const KIND: super::PatternKind = super::PatternKind {
    name: "adv_random",
    about: "ADVr+i: a random server of group G+i (dragonflies)",
    keys: super::AdvKeys::KEYS,
    defaults: super::AdvKeys::defaults,
    build: |cx| Ok(std::sync::Arc::new(AdvRandom::new(cx)?)),
    // Each server's group and place in it, and the groups' lists of servers (`GroupServers`).
    tables: super::Tables { per_server: 12, per_switch: 0 },
};
