//! Uniform random: every packet goes to a server drawn uniformly among the communicating
//! servers other than its source.

use super::{uniform_other, Active, PatternCtx, TrafficPattern};
use crate::error::{SpecError, SpecResult};
use crate::routing::Rng;

pub struct Uniform {
    pool: Active,
}

impl Uniform {
    pub fn new(ctx: &PatternCtx) -> SpecResult<Self> {
        if ctx.active.len() < 2 {
            return Err(SpecError::new("traffic.active_servers", ctx.active.len(), "uniform traffic needs at least 2 communicating servers"));
        }
        Ok(Uniform { pool: ctx.active.clone() })
    }
}

impl TrafficPattern for Uniform {
    fn name(&self) -> &'static str {
        "uniform"
    }
    fn destination(&self, src: usize, rng: &mut Rng) -> usize {
        uniform_other(&self.pool, src, rng)
    }
}

pub const KIND: super::PatternKind = super::PatternKind {
    name: "uniform",
    about: "a server drawn uniformly among the other active servers",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| Ok(std::sync::Arc::new(Uniform::new(cx)?)),
    tables: super::Tables::NONE,
};
