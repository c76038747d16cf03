//! Tornado: every switch sends ceil(k/2)-1 steps ahead in every dimension, the adversarial
//! pattern for minimal routing on rings (all traffic one way round).

use super::{PatternCtx, SwitchPermutation};
use crate::error::SpecResult;

pub fn build(ctx: &PatternCtx) -> SpecResult<SwitchPermutation> {
    SwitchPermutation::from_coords(ctx, "tornado", |grid, c| {
        c.iter().zip(&grid.dims).map(|(&x, &k)| (x + k.div_ceil(2) - 1) % k).collect()
    })
}

pub const KIND: super::PatternKind = super::PatternKind {
    name: "tornado",
    about: "switch (c0+ceil(k0/2)-1, ...) mod k",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| Ok(std::sync::Arc::new(build(cx)?)),
    // Each switch's target switch (`SwitchPermutation`).
    tables: super::Tables { per_server: 0, per_switch: 4 },
};
