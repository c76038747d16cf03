//! Allreduce. Ring: a reduce-scatter then an allgather around the ring, 2(n - 1) steps, each
//! sending one n-th of the vector to the right neighbour and waiting for the left one's.
//! Recursive doubling: log2(n) steps, each exchanging the whole vector with the rank whose
//! number differs in that step's bit.

use super::{Motif, MotifInfo, Op, BYTES};
use crate::error::SpecError;

pub const KIND: MotifInfo = MotifInfo {
    name: "allreduce",
    about: "allreduce of a vector, ring or recursive doubling",
    keys: &[
        crate::spec::Key { name: "algorithm", default: "\"ring\"", meaning: "ring or recursive_doubling" },
        BYTES,
        crate::spec::Key { name: "elements", default: "none", meaning: "the vector's size in elements instead of bytes" },
        super::ELEMENT_BYTES,
    ],
    check: |_| Ok(()),
    build: |cx| {
        let (w, n, compute) = (cx.workload(), cx.ranks(), cx.compute());
        let total = w.elements.map_or(cx.bytes(), |e| e * w.element_bytes);
        Ok(Some(match w.algorithm.as_deref().unwrap_or("ring") {
            "ring" => Box::new(Ring { n, chunk: total.div_ceil(n as u64).max(1), compute }),
            "recursive_doubling" if n.is_power_of_two() => Box::new(RecursiveDoubling { n, bytes: total, compute }),
            "recursive_doubling" => return Err(SpecError::new(cx.key("ranks"), n, "recursive_doubling needs a power-of-two number of ranks")),
            other => return Err(SpecError::new(cx.key("workload.algorithm"), format!("{other:?}"), "allowed: ring, recursive_doubling")),
        }))
    },
};

pub struct Ring {
    pub n: usize,
    pub chunk: u64,
    pub compute: u64,
}

impl Motif for Ring {
    fn iteration(&self, rank: usize, ops: &mut Vec<Op>) {
        let n = self.n;
        if n > 1 {
            let (right, left) = ((rank + 1) % n, (rank + n - 1) % n);
            for _ in 0..2 * (n - 1) {
                ops.push(Op::Send { to: right as u32, bytes: self.chunk });
                ops.push(Op::Recv { from: left as u32 });
            }
        }
        ops.push(Op::Compute(self.compute));
    }
}

pub struct RecursiveDoubling {
    pub n: usize,
    pub bytes: u64,
    pub compute: u64,
}

impl Motif for RecursiveDoubling {
    fn iteration(&self, rank: usize, ops: &mut Vec<Op>) {
        let mut mask = 1;
        while mask < self.n {
            let peer = (rank ^ mask) as u32;
            ops.push(Op::Send { to: peer, bytes: self.bytes });
            ops.push(Op::Recv { from: peer });
            mask <<= 1;
        }
        ops.push(Op::Compute(self.compute));
    }
}
