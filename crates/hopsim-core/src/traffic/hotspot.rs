//! Hotspot: a share of the packets (`hotspot_fraction`, default 0.1) goes to a few hot servers
//! (`hotspots`, default server 0); the rest is uniform.

use super::{uniform_other, PatternCtx, TrafficPattern};
use crate::error::{SpecError, SpecResult};
use crate::routing::Rng;
use rand::Rng as _;

keys! {
    struct Keys {
        /// the hot servers
        hotspots: Vec<usize> = "[0]" => vec![0],
        /// the share of packets the hot servers receive
        hotspot_fraction: f64 = 0.1,
    }
}

pub struct Hotspot {
    hot: Vec<u32>,
    fraction: f64,
    pool: super::Active,
}

impl Hotspot {
    pub fn new(ctx: &PatternCtx) -> SpecResult<Self> {
        let Keys { hotspots: hot, hotspot_fraction: fraction } = super::own_keys(ctx.spec)?;
        if !(0.0..=1.0).contains(&fraction) {
            return Err(SpecError::new("traffic.hotspot_fraction", fraction, "must be in [0, 1]"));
        }
        let n = ctx.servers.num_servers();
        if hot.is_empty() {
            return Err(SpecError::new("traffic.hotspots", "[]", "give at least one hot server"));
        }
        if let Some(&bad) = hot.iter().find(|&&s| s >= n) {
            return Err(SpecError::new("traffic.hotspots", bad, format!("servers are numbered 0 to {}", n - 1)));
        }
        let hot: Vec<u32> = hot.into_iter().map(|s| s as u32).collect();
        if ctx.active.len() < 2 {
            return Err(SpecError::new("traffic.active_servers", ctx.active.len(), "hotspot traffic needs at least 2 communicating servers"));
        }
        Ok(Hotspot { hot, fraction, pool: ctx.active.clone() })
    }
}

impl TrafficPattern for Hotspot {
    fn name(&self) -> &'static str {
        "hotspot"
    }
    fn destination(&self, src: usize, rng: &mut Rng) -> usize {
        if rng.gen_bool(self.fraction) {
            let d = self.hot[rng.gen_range(0..self.hot.len())] as usize;
            if d != src {
                return d;
            }
        }
        uniform_other(&self.pool, src, rng)
    }
}

pub const KIND: super::PatternKind = super::PatternKind {
    name: "hotspot",
    about: "a hot server with probability hotspot_fraction, else uniform",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    build: |cx| Ok(std::sync::Arc::new(Hotspot::new(cx)?)),
    tables: super::Tables::NONE,
};
