//! Alltoall by pairwise exchange: n - 1 steps; in step k a rank sends to rank + k and waits
//! for rank - k's message (mod n).

use super::collectives::pairwise;
use super::{BytesKeys, Motif, MotifInfo, Op};
use crate::routing::AriesMode;

pub const KIND: MotifInfo = MotifInfo {
    name: "alltoall",
    about: "pairwise exchange, bytes per pair",
    keys: BytesKeys::KEYS,
    defaults: BytesKeys::defaults,
    typed: super::typed::<BytesKeys>,
    check: |cx| cx.own_message_bytes().map(drop),
    build: |cx| {
        let bytes = cx.own_message_bytes()?;
        Ok(Some(Box::new(Pairwise { n: cx.ranks(), bytes, compute: cx.compute() })))
    },
};

pub struct Pairwise {
    pub n: usize,
    pub bytes: u64,
    pub compute: u64,
}

impl Motif for Pairwise {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        pairwise(self.n, rank, |i| i as u32, |_| self.bytes, ops);
        ops.push(Op::Compute(self.compute));
    }
    fn adaptive_mode(&self) -> AriesMode {
        AriesMode::IncreasinglyMinimal
    }
}
