//! Random permutation: the active servers are shuffled (from the run's seed) and each sends
//! all its packets to its image; no server is its own image (fixed points are swapped with a
//! neighbour in the cycle).

use super::{PatternCtx, TrafficPattern};
use crate::error::{SpecError, SpecResult};
use crate::routing::Rng;
use rand::seq::SliceRandom;

pub struct RandomPermutation {
    target: Vec<u32>,
}

impl RandomPermutation {
    pub fn new(ctx: &mut PatternCtx) -> SpecResult<Self> {
        let n = ctx.active.len();
        if n < 2 {
            return Err(SpecError::new("traffic.active_servers", n, "random_permutation needs at least 2 communicating servers"));
        }
        let mut image = ctx.active.to_vec();
        image.shuffle(ctx.rng);
        for i in 0..n {
            if image[i] == ctx.active.at(i) {
                let j = (i + 1) % n;
                image.swap(i, j);
            }
        }
        let mut target = vec![u32::MAX; ctx.servers.num_servers()];
        for (s, d) in ctx.active.iter().zip(&image) {
            target[s as usize] = *d;
        }
        Ok(RandomPermutation { target })
    }
}

impl TrafficPattern for RandomPermutation {
    fn name(&self) -> &'static str {
        "random_permutation"
    }
    fn destination(&self, src: usize, _rng: &mut Rng) -> usize {
        self.target[src] as usize
    }
}

pub const KIND: super::PatternKind = super::PatternKind {
    name: "random_permutation",
    about: "its image in a random permutation of the active servers (no fixed points)",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| Ok(std::sync::Arc::new(RandomPermutation::new(cx)?)),
    // Each server's image.
    tables: super::Tables { per_server: 4, per_switch: 0 },
};
