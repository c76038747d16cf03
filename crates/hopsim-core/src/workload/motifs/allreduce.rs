//! Allreduce. Ring: a reduce-scatter then an allgather around the ring, 2(n - 1) steps, each
//! sending one n-th of the vector to the right neighbour and waiting for the left one's.
//! Recursive doubling: log2(n) steps, each exchanging the whole vector with the rank whose
//! number differs in that step's bit.

use super::collectives::{recursive_doubling, ring};
use super::{Motif, MotifInfo, Op};
use crate::error::{SpecError, SpecResult};
use serde::{Deserialize, Serialize};

pub const KIND: MotifInfo = MotifInfo {
    name: "allreduce",
    about: "allreduce of a vector, ring or recursive doubling",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    typed: super::typed::<Keys>,
    check: |cx| vector_bytes(cx, &cx.own_keys()?).map(drop),
    build: |cx| {
        let keys: Keys = cx.own_keys()?;
        let (n, total, compute) = (cx.ranks(), vector_bytes(cx, &keys)?, cx.compute());
        Ok(Some(match keys.algorithm.unwrap_or(Algorithm::Ring) {
            Algorithm::Ring => Box::new(Ring { n, chunk: total.div_ceil(n as u64).max(1), compute }),
            Algorithm::RecursiveDoubling => Box::new(RecursiveDoubling { n, bytes: total, compute }),
        }))
    },
};

keys! {
    struct Keys {
        /// ring or recursive_doubling
        algorithm: Option<Algorithm> = "ring" => None,
        /// message size in bytes (given, it needs packet.bytes or a nic.protocol)
        bytes: Option<u64> = "8 bytes" => None,
        /// the vector's size in elements instead of bytes
        elements: Option<u64> = "none" => None,
        /// bytes per element
        element_bytes: u64 = 8,
    }
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
        ring(self.n, rank, |i| i as u32, 2 * self.n.saturating_sub(1), self.chunk, ops);
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
        Algorithm::Ring => ring(n, me, member, 2 * n.saturating_sub(1), bytes.div_ceil(n as u64).max(1), ops),
        Algorithm::RecursiveDoubling => recursive_doubling(n, me, member, bytes, ops),
    }
}
