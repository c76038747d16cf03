//! Level-synchronous graph traversal (Graph500's BFS and SSSP kernels) on a Kronecker graph
//! of 2^`scale` vertices and `edge_factor` x 2^scale edges, its vertices dealt evenly over
//! the ranks: one iteration is one search. Per level each rank sends every other rank the
//! edges its frontier reaches there (an alltoallv by pairwise exchange), computes, and joins
//! an allreduce of one word that tells whether any frontier is left.
//!
//! The frontier grows then shrinks: level l of `levels` visits the binomial share
//! C(levels - 1, l) / 2^(levels - 1) of the 2 x edges edge ends, and a rank sends each peer
//! a P^2-th of them, rounded up, as records of `RECORD_BYTES`. SSSP (delta-stepping) splits
//! each level into a light-edge and a heavy-edge phase, half the level's records each, and
//! its records carry a distance as well.

use super::allreduce::{allreduce, Algorithm};
use super::collectives::pairwise;
use super::{Motif, MotifCtx, MotifInfo, Op};
use crate::error::{SpecError, SpecResult};
use crate::routing::AriesMode;
use serde::{Deserialize, Serialize};

pub const KIND: MotifInfo = MotifInfo {
    name: "graph500",
    about: "level-synchronous BFS or SSSP: alltoallv per level, allreduce to end",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    typed: super::typed::<Keys>,
    check: |cx| build(cx).map(drop),
    build: |cx| Ok(Some(Box::new(build(cx)?))),
};

keys! {
    struct Keys {
        /// bfs or sssp (delta-stepping: a light and a heavy phase per level)
        kernel: Option<Kernel> = "bfs" => None,
        /// the graph has 2^scale vertices (1 to 42)
        scale: u32 = 20,
        /// edges per vertex
        edge_factor: u64 = 16,
        /// levels of the search (1 to 64)
        levels: u32 = 8,
        /// the small allreduces' algorithm: recursive_doubling or ring
        allreduce: Option<Algorithm> = "recursive_doubling" => None,
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Kernel {
    Bfs,
    Sssp,
}

impl Kernel {
    /// Bytes of one visited edge end: the vertex and its parent; SSSP adds the distance.
    fn record_bytes(self) -> u128 {
        match self {
            Kernel::Bfs => 16,
            Kernel::Sssp => 24,
        }
    }
    /// Alltoallv phases per level.
    fn phases(self) -> u128 {
        match self {
            Kernel::Bfs => 1,
            Kernel::Sssp => 2,
        }
    }
}

/// The termination test reduces one 64-bit count.
const DONE_BYTES: u64 = 8;

fn binomial(n: u32, k: u32) -> u128 {
    (0..k).fold(1u128, |c, i| c * (n - i) as u128 / (i + 1) as u128)
}

fn build(cx: &MotifCtx) -> SpecResult<Graph500> {
    let keys: Keys = cx.own_keys()?;
    if !(1..=42).contains(&keys.scale) {
        return Err(SpecError::new(cx.key("workload.scale"), keys.scale, "between 1 and 42 (2^scale vertices)"));
    }
    if !(1..=64).contains(&keys.levels) {
        return Err(SpecError::new(cx.key("workload.levels"), keys.levels, "between 1 and 64 levels"));
    }
    if keys.edge_factor == 0 || keys.edge_factor > 1 << 20 {
        return Err(SpecError::new(cx.key("workload.edge_factor"), keys.edge_factor, "between 1 and 2^20 edges per vertex"));
    }
    let kernel = keys.kernel.unwrap_or(Kernel::Bfs);
    let p = cx.ranks() as u128;
    let last = keys.levels - 1;
    let ends = (2 * keys.edge_factor as u128) << keys.scale;
    let mut level_bytes = Vec::new();
    for l in 0..keys.levels {
        // Checked, though 2^(1 + 20 + 42) ends x C(63, 31) x 24 bytes fit in 128 bits.
        let records = ends.checked_mul(binomial(last, l)).and_then(|r| r.checked_mul(kernel.record_bytes()));
        let per_pair = records.map(|r| r.div_ceil((1u128 << last) * p * p * kernel.phases()));
        let what = format!("with edge_factor = {} and levels = {}, a message of level {l}", keys.edge_factor, keys.levels);
        let Some(bytes) = per_pair.and_then(|b| u64::try_from(b).ok()) else {
            return Err(SpecError::new(cx.key("workload.scale"), keys.scale, format!("{what} would exceed 2^64 bytes: must be between 1 and 2^36 bytes")));
        };
        level_bytes.push(cx.product_bytes("scale", keys.scale, &what, &[bytes])?);
    }
    Ok(Graph500 { n: cx.ranks(), level_bytes, phases: kernel.phases() as u32, algorithm: keys.allreduce.unwrap_or(Algorithm::RecursiveDoubling), compute: cx.compute() })
}

pub struct Graph500 {
    n: usize,
    /// Per level: the bytes a rank sends each peer in each of its phases.
    level_bytes: Vec<u64>,
    phases: u32,
    algorithm: Algorithm,
    compute: u64,
}

impl Motif for Graph500 {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        for &bytes in &self.level_bytes {
            for _ in 0..self.phases {
                pairwise(self.n, rank, |i| i as u32, |_| bytes, ops);
                ops.push(Op::Compute(self.compute));
                allreduce(self.algorithm, self.n, rank, |i| i as u32, DONE_BYTES, ops);
            }
        }
    }
    fn adaptive_mode(&self) -> AriesMode {
        AriesMode::IncreasinglyMinimal
    }
}
