//! Alltoall, `bytes` to every other rank: by pairwise exchange (n - 1 steps; in step k a rank
//! sends to rank + k and waits for rank - k's message, mod n), by Bruck's algorithm, by
//! scattered sends, or as MPICH chooses among them by size (`collectives::Alltoall`).

use super::collectives::{bruck_blocks, Alltoall};
use super::{Motif, MotifInfo, Op};
use crate::routing::AriesMode;

pub const KIND: MotifInfo = MotifInfo {
    name: "alltoall",
    about: "alltoall, bytes per pair: pairwise exchange, Bruck, scattered sends or MPICH's choice",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    typed: super::typed::<Keys>,
    check: |cx| build(cx).map(drop),
    build: |cx| Ok(Some(Box::new(build(cx)?))),
};

keys! {
    struct Keys {
        /// message size in bytes (given, it needs packet.bytes or a nic.protocol)
        bytes: Option<u64> = "8 bytes" => None,
        /// pairwise, bruck, scattered, or mpich (MPICH's choice by size: bruck up to 256 bytes a pair, scattered up to 32 KiB, pairwise above)
        algorithm: Option<Alltoall> = "pairwise" => None,
    }
}

fn build(cx: &super::MotifCtx) -> crate::error::SpecResult<Exchange> {
    let keys: Keys = cx.own_keys()?;
    let (n, bytes) = (cx.ranks(), cx.message_bytes(keys.bytes)?);
    let algorithm = keys.algorithm.unwrap_or(Alltoall::Pairwise).resolve(n, bytes);
    if algorithm == Alltoall::Bruck && n > 1 {
        let blocks = (0..usize::BITS).map(|b| 1usize << b).take_while(|&k| k < n).map(|k| bruck_blocks(n, k)).max().unwrap_or(1);
        cx.product_bytes("bytes", bytes, "a Bruck round's message (blocks x bytes)", &[blocks, bytes])?;
    }
    Ok(Exchange { n, bytes, algorithm, compute: cx.compute() })
}

pub struct Exchange {
    pub n: usize,
    pub bytes: u64,
    pub algorithm: Alltoall,
    pub compute: u64,
}

impl Motif for Exchange {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        self.algorithm.ops(self.n, rank, |i| i as u32, self.bytes, ops);
        ops.push(Op::Compute(self.compute));
    }
    fn adaptive_mode(&self) -> AriesMode {
        AriesMode::IncreasinglyMinimal
    }
}
