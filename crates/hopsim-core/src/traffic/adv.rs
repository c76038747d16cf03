//! ADV+i (dragonflies): each server of group G sends to the server at the same position
//! (index among the group's servers) in group G + i (mod groups); i = `traffic.adv_offset`,
//! by default h, the global links per switch (the most adverse offset for palmtree wiring).

use super::{GroupServers, PatternCtx, TrafficPattern};
use crate::error::SpecResult;
use crate::routing::Rng;

pub struct Adv {
    groups: GroupServers,
}

impl Adv {
    pub fn new(ctx: &PatternCtx) -> SpecResult<Self> {
        Ok(Adv { groups: GroupServers::new(ctx)? })
    }
}

impl TrafficPattern for Adv {
    fn name(&self) -> &'static str {
        "adv"
    }
    fn destination(&self, src: usize, _rng: &mut Rng) -> usize {
        let g = &self.groups;
        let target = &g.members[g.target_group(src)];
        target[g.position[src] as usize % target.len()] as usize
    }
}

pub const KIND: super::PatternKind = super::PatternKind {
    name: "adv",
    about: "ADV+i: the server at the same position in group G+i (dragonflies)",
    keys: super::AdvKeys::KEYS,
    defaults: super::AdvKeys::defaults,
    build: |cx| Ok(std::sync::Arc::new(Adv::new(cx)?)),
    // Each server's group and place in it, and the groups' lists of servers (`GroupServers`).
    tables: super::Tables { per_server: 12, per_switch: 0 },
};
