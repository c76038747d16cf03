//! Allreduce. Ring: a reduce-scatter then an allgather around the ring, 2(n - 1) steps, each
//! sending one n-th of the vector to the right neighbour and waiting for the left one's.
//! Recursive doubling: log2(n) steps, each exchanging the whole vector with the rank whose
//! number differs in that step's bit.

use super::{Motif, MotifInfo, Op, BYTES};
use crate::error::{SpecError, SpecResult};
use serde::{Deserialize, Serialize};

pub const KIND: MotifInfo = MotifInfo {
    name: "allreduce",
    about: "allreduce of a vector, ring or recursive doubling",
    keys: &[
        crate::spec::Key { name: "algorithm", default: "ring", meaning: "ring or recursive_doubling" },
        BYTES,
        crate::spec::Key { name: "elements", default: "none", meaning: "the vector's size in elements instead of bytes" },
        super::ELEMENT_BYTES,
    ],
    defaults: crate::spec::defaults_of::<Keys>,
    typed: super::typed::<Keys>,
    check: |cx| vector_bytes(cx, &cx.own_keys()?).map(drop),
    build: |cx| {
        let keys: Keys = cx.own_keys()?;
        let (n, total, compute) = (cx.ranks(), vector_bytes(cx, &keys)?, cx.compute());
        Ok(Some(match keys.algorithm.unwrap_or(Algorithm::Ring) {
            Algorithm::Ring => Box::new(Ring { n, chunk: total.div_ceil(n as u64).max(1), compute }),
            Algorithm::RecursiveDoubling if n.is_power_of_two() => Box::new(RecursiveDoubling { n, bytes: total, compute }),
            Algorithm::RecursiveDoubling => return Err(SpecError::new(cx.key("ranks"), n, "recursive_doubling needs a power-of-two number of ranks")),
        }))
    },
};

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    /// Default: ring.
    #[serde(default)]
    algorithm: Option<Algorithm>,
    /// The whole vector's size (default 8 bytes).
    #[serde(default)]
    bytes: Option<u64>,
    /// Or the vector's size in elements of `element_bytes`.
    #[serde(default)]
    elements: Option<u64>,
    #[serde(default = "super::eight")]
    element_bytes: u64,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    Ring,
    RecursiveDoubling,
}

/// The vector's size: `elements` x `element_bytes`, or `bytes`.
fn vector_bytes(cx: &super::MotifCtx, keys: &Keys) -> SpecResult<u64> {
    let bytes = cx.message_bytes(keys.bytes)?;
    match keys.elements {
        Some(e) if keys.bytes.is_some() => Err(SpecError::new(cx.key("workload.elements"), e, "give either workload.bytes or workload.elements, not both")),
        Some(e) => cx.product_bytes("elements", e, "the vector (elements x element_bytes)", &[e, keys.element_bytes]),
        None => Ok(bytes),
    }
}

pub struct Ring {
    pub n: usize,
    pub chunk: u64,
    pub compute: u64,
}

impl Motif for Ring {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        ring(self.n, rank, |i| i as u32, self.chunk, ops);
        ops.push(Op::Compute(self.compute));
    }
}

pub struct RecursiveDoubling {
    pub n: usize,
    pub bytes: u64,
    pub compute: u64,
}

impl Motif for RecursiveDoubling {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        recursive_doubling(self.n, rank, |i| i as u32, self.bytes, ops);
        ops.push(Op::Compute(self.compute));
    }
}

/// An allreduce of `bytes` among `n` members (`member(i)`: the rank of the i-th), run by
/// member `me`: what the skeletons call for their dot products and termination tests.
pub fn allreduce(algorithm: Algorithm, n: usize, me: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
    match algorithm {
        Algorithm::Ring => ring(n, me, member, bytes.div_ceil(n as u64).max(1), ops),
        Algorithm::RecursiveDoubling => recursive_doubling(n, me, member, bytes, ops),
    }
}

/// The ring among `n` members, chunks of `chunk` bytes.
pub fn ring(n: usize, me: usize, member: impl Fn(usize) -> u32, chunk: u64, ops: &mut Vec<Op>) {
    if n > 1 {
        let (right, left) = (member((me + 1) % n), member((me + n - 1) % n));
        for _ in 0..2 * (n - 1) {
            ops.push(Op::Send { to: right, bytes: chunk });
            ops.push(Op::Recv { from: left });
        }
    }
}

/// Recursive doubling among `n` members. When `n` is not a power of two, as in MPICH, each
/// member from the largest power of two p on first hands its vector to member i - p and
/// gets the result back at the end, so that p members double.
pub fn recursive_doubling(n: usize, me: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
    let p = if n.is_power_of_two() { n } else { n.next_power_of_two() / 2 };
    if me >= p {
        let partner = member(me - p);
        ops.push(Op::Send { to: partner, bytes });
        ops.push(Op::Recv { from: partner });
        return;
    }
    let extra = (me + p < n).then(|| member(me + p));
    if let Some(e) = extra {
        ops.push(Op::Recv { from: e });
    }
    let mut mask = 1;
    while mask < p {
        let peer = member(me ^ mask);
        ops.push(Op::Send { to: peer, bytes });
        ops.push(Op::Recv { from: peer });
        mask <<= 1;
    }
    if let Some(e) = extra {
        ops.push(Op::Send { to: e, bytes });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn recursive_doubling_folds_in_the_ranks_beyond_a_power_of_two() {
        for n in 1..=13usize {
            let p = if n.is_power_of_two() { n } else { n.next_power_of_two() / 2 };
            // Members are every other rank, so member indices and ranks differ.
            let member = |i: usize| (2 * i) as u32;
            let (mut sends, mut recvs) = (HashMap::new(), HashMap::new());
            for me in 0..n {
                let mut ops = Vec::new();
                recursive_doubling(n, me, member, 8, &mut ops);
                for op in ops {
                    match op {
                        Op::Send { to, .. } => *sends.entry((member(me), to)).or_insert(0) += 1,
                        Op::Recv { from } => *recvs.entry((from, member(me))).or_insert(0) += 1,
                        Op::Compute(_) => {}
                    }
                }
            }
            assert_eq!(sends, recvs, "n = {n}: every message has its receive");
            // Each extra member hands its vector in and gets the result back; p members
            // exchange log2(p) times.
            let messages: u32 = sends.values().sum();
            assert_eq!(messages as usize, 2 * (n - p) + p * p.trailing_zeros() as usize, "n = {n}");
        }
    }
}
