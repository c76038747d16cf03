//! Random pairs: a random perfect matching of the communicating servers; each server sends
//! only to its partner (and the partner to it), as in the 3D-torus paper's paired nodes.

use super::{PatternCtx, TrafficPattern};
use crate::error::{SpecError, SpecResult};
use crate::routing::Rng;
use rand::seq::SliceRandom;

pub struct RandomPairs {
    /// Partner of each server; `u32::MAX` for servers left out.
    partner: Vec<u32>,
}

impl RandomPairs {
    pub fn new(ctx: &mut PatternCtx) -> SpecResult<Self> {
        if ctx.active.len() < 2 {
            return Err(SpecError::new("traffic.active_servers", ctx.active.len(), "random_pairs needs at least 2 communicating servers"));
        }
        if ctx.active.len() % 2 == 1 {
            return Err(SpecError::new(
                "traffic.active_servers",
                ctx.active.len(),
                "random_pairs pairs servers one to one: the number of communicating servers must be even",
            ));
        }
        let mut order = ctx.active.to_vec();
        order.shuffle(ctx.rng);
        let mut partner = vec![u32::MAX; ctx.servers.num_servers()];
        for pair in order.chunks_exact(2) {
            partner[pair[0] as usize] = pair[1];
            partner[pair[1] as usize] = pair[0];
        }
        Ok(RandomPairs { partner })
    }
}

impl TrafficPattern for RandomPairs {
    fn name(&self) -> &'static str {
        "random_pairs"
    }
    fn destination(&self, src: usize, _rng: &mut Rng) -> usize {
        self.partner[src] as usize
    }
}

pub const KIND: super::PatternKind = super::PatternKind {
    name: "random_pairs",
    about: "its partner in a random perfect matching of the active servers",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| Ok(std::sync::Arc::new(RandomPairs::new(cx)?)),
    // Each server's partner.
    tables: super::Tables { per_server: 4, per_switch: 0 },
};
