//! Alltoall by pairwise exchange: n - 1 steps; in step k a rank sends to rank + k and waits
//! for rank - k's message (mod n).

use super::{Motif, MotifInfo, Op, BYTES};

pub const KIND: MotifInfo = MotifInfo {
    name: "alltoall",
    about: "pairwise exchange, bytes per pair",
    keys: &[BYTES],
    check: |_| Ok(()),
    build: |cx| Ok(Some(Box::new(Pairwise { n: cx.ranks(), bytes: cx.bytes(), compute: cx.compute() }))),
};
use crate::routing::AriesMode;

pub struct Pairwise {
    pub n: usize,
    pub bytes: u64,
    pub compute: u64,
}

impl Motif for Pairwise {
    fn iteration(&self, rank: usize, ops: &mut Vec<Op>) {
        let n = self.n;
        for k in 1..n {
            ops.push(Op::Send { to: ((rank + k) % n) as u32, bytes: self.bytes });
            ops.push(Op::Recv { from: ((rank + n - k) % n) as u32 });
        }
        ops.push(Op::Compute(self.compute));
    }
    fn adaptive_mode(&self) -> AriesMode {
        AriesMode::IncreasinglyMinimal
    }
}
