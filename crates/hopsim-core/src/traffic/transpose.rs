//! Transpose: switch (c0, c1, ..., cn-1) sends to (cn-1, ..., c1, c0); needs k_i = k_(n-1-i).

use super::{PatternCtx, SwitchPermutation};
use crate::error::{SpecError, SpecResult};

pub fn build(ctx: &PatternCtx) -> SpecResult<SwitchPermutation> {
    let dims = ctx.grid()?.dims.clone();
    let n = dims.len();
    if n < 2 || (0..n).any(|i| dims[i] != dims[n - 1 - i]) {
        return Err(SpecError::new(
            "topology.dims",
            format!("{dims:?}"),
            "traffic.pattern = \"transpose\" needs at least 2 dimensions, symmetric in size (e.g. [8, 8])",
        ));
    }
    SwitchPermutation::from_coords(ctx, "transpose", |_, c| c.iter().rev().copied().collect())
}

pub const KIND: super::PatternKind = super::PatternKind {
    name: "transpose",
    about: "switch (cn-1, ..., c1, c0) (sides must be symmetric)",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| Ok(std::sync::Arc::new(build(cx)?)),
    // Each switch's target switch (`SwitchPermutation`).
    tables: super::Tables { per_server: 0, per_switch: 4 },
};
