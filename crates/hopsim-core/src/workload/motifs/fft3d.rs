//! A 3D FFT on a pencil decomposition (P3DFFT's, 2DECOMP's): the ranks form a `grid` of
//! rows x columns, each holding N^3 / P points as pencils. A transform computes the 1D FFTs
//! along x, transposes within its row (an alltoall among `rows` ranks), computes along y,
//! transposes within its column (an alltoall among `columns` ranks) and computes along z.
//! The skeleton of FFT, VPFFT and the plane-wave FFTs of Quantum Espresso and CP2K.
//!
//! Rank r is member r mod rows of row r / rows (consecutive ranks share a row, as in
//! P3DFFT's default layout) and member r / rows of column r mod rows. In the row transpose
//! a rank sends each row peer one rows-th of its points, N^3 / (P x rows) of them; in the
//! column transpose N^3 / (P x columns).

use super::collectives::pairwise;
use super::{Motif, MotifCtx, MotifInfo, Op};
use crate::error::{SpecError, SpecResult};
use crate::routing::AriesMode;

pub const KIND: MotifInfo = MotifInfo {
    name: "fft3d",
    about: "3D FFT on pencils: alltoall within rows, then within columns",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    typed: super::typed::<Keys>,
    check: |cx| build(cx).map(drop),
    build: |cx| Ok(Some(Box::new(build(cx)?))),
};

keys! {
    struct Keys {
        /// rows x columns of the pencil decomposition
        grid: Option<Vec<usize>> = "as square as the ranks allow" => None,
        /// N: the transform's grid has N^3 points
        points: u64 = 256,
        /// bytes per point (16: complex double)
        element_bytes: u64 = 16,
    }
}

fn build(cx: &MotifCtx) -> SpecResult<Fft3d> {
    let keys: Keys = cx.own_keys()?;
    let grid = super::grid(keys.grid.as_deref(), cx.ranks(), 2, &cx.key("workload.grid"))?;
    let (rows, columns) = (grid[0], grid[1]);
    let n = keys.points;
    if n < rows.max(columns) as u64 {
        return Err(SpecError::new(cx.key("workload.points"), n, format!("at least {} so that each of the {rows} x {columns} ranks holds whole pencils", rows.max(columns))));
    }
    let volume = |what: &str, share: usize| {
        // Points per message: N^3 / (P x share), in bytes, rounded up (a rank with one
        // pencil fewer still sends as long a message: the slowest pair sets the pace).
        let too_big = || SpecError::new(cx.key("workload.points"), n, format!("{what}: N^3 x element_bytes overflows 64 bits (a message must be at most 2^36 bytes)"));
        let total = n.checked_mul(n).and_then(|v| v.checked_mul(n)).and_then(|v| v.checked_mul(keys.element_bytes)).ok_or_else(too_big)?;
        let per = (cx.ranks() as u64).checked_mul(share as u64).ok_or_else(too_big)?;
        cx.product_bytes("points", n, what, &[total.div_ceil(per)])
    };
    let row_bytes = volume("the row transpose's message", rows)?;
    let column_bytes = volume("the column transpose's message", columns)?;
    Ok(Fft3d { rows, columns, row_bytes, column_bytes, compute: cx.compute() })
}

pub struct Fft3d {
    rows: usize,
    columns: usize,
    row_bytes: u64,
    column_bytes: u64,
    compute: u64,
}

impl Motif for Fft3d {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        let (r, c) = (rank % self.rows, rank / self.rows);
        ops.push(Op::Compute(self.compute));
        pairwise(self.rows, r, |i| (c * self.rows + i) as u32, |_| self.row_bytes, ops);
        ops.push(Op::Compute(self.compute));
        pairwise(self.columns, c, |i| (i * self.rows + r) as u32, |_| self.column_bytes, ops);
        ops.push(Op::Compute(self.compute));
    }
    fn adaptive_mode(&self) -> AriesMode {
        AriesMode::IncreasinglyMinimal
    }
}
