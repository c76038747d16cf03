//! Shift: servers of switch (x, y, ...) send to the servers of switch (x+i, y+j, ...) mod k,
//! with the same local index. The VC-management paper's XY-7-shift is `shift = [7, 7]`.

use super::{PatternCtx, SwitchPermutation};
use crate::error::{SpecError, SpecResult};

keys! {
    struct Keys {
        /// offset per dimension in switch coordinates, e.g. [7, 7]
        shift: Option<Vec<i64>> = "none" => None,
    }
}

pub fn build(ctx: &PatternCtx) -> SpecResult<SwitchPermutation> {
    let n = ctx.grid()?.n();
    let Keys { shift } = super::own_keys(ctx.spec)?;
    let offsets = shift.ok_or_else(|| {
        SpecError::new("traffic.shift", "", format!("missing; pattern \"shift\" needs one offset per dimension, e.g. {:?}", vec![1; n]))
    })?;
    if offsets.len() != n {
        return Err(SpecError::new("traffic.shift", format!("{offsets:?}"), format!("needs {n} offsets, one per dimension")));
    }
    SwitchPermutation::from_coords(ctx, "shift", |grid, c| {
        // Offsets are reduced first so that any i64 offset is a shift round the ring.
        (0..n).map(|d| (c[d] as i64 + offsets[d].rem_euclid(grid.dims[d] as i64)).rem_euclid(grid.dims[d] as i64) as usize).collect()
    })
}

pub const KIND: super::PatternKind = super::PatternKind {
    name: "shift",
    about: "same local server at switch (c0+s0, c1+s1, ...) mod k (grids)",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    build: |cx| Ok(std::sync::Arc::new(build(cx)?)),
    // Each switch's target switch (`SwitchPermutation`).
    tables: super::Tables { per_server: 0, per_switch: 4 },
};
