//! Bit complement: switch coordinate c becomes k-1-c in every dimension (for k a power of two
//! this complements every address bit; the coordinate form keeps it defined for any k).

use super::{PatternCtx, SwitchPermutation};
use crate::error::SpecResult;

pub fn build(ctx: &PatternCtx) -> SpecResult<SwitchPermutation> {
    SwitchPermutation::from_coords(ctx, "bit_complement", |grid, c| c.iter().zip(&grid.dims).map(|(&x, &k)| k - 1 - x).collect())
}

pub const KIND: super::PatternKind = super::PatternKind {
    name: "bit_complement",
    about: "switch (k0-1-c0, k1-1-c1, ...)",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| Ok(std::sync::Arc::new(build(cx)?)),
    // Each switch's target switch (`SwitchPermutation`).
    tables: super::Tables { per_server: 0, per_switch: 4 },
};
