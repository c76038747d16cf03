//! Broadcast down a binomial tree (as MPICH's): numbered from the root, a rank receives from
//! the rank that differs in its lowest set bit, then sends to rank + 2^k for each 2^k below
//! that bit, largest first.

use super::{Motif, MotifInfo, Op};

pub const KIND: MotifInfo = MotifInfo {
    name: "bcast",
    about: "binomial broadcast from a root",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    typed: super::typed::<Keys>,
    check: |cx| cx.message_bytes(cx.own_keys::<Keys>()?.bytes).map(drop),
    build: |cx| {
        let Keys { bytes, root } = cx.own_keys()?;
        let n = cx.ranks();
        if root >= n {
            return Err(crate::error::SpecError::new(cx.key("workload.root"), root, format!("must be a rank of the job, below {n}")));
        }
        Ok(Some(Box::new(Binomial { n, root, bytes: cx.message_bytes(bytes)?, compute: cx.compute() })))
    },
};

keys! {
    struct Keys {
        /// message size in bytes (given, it needs packet.bytes or a nic.protocol)
        bytes: Option<u64> = "8 bytes" => None,
        /// the root rank
        root: usize = 0,
    }
}

pub struct Binomial {
    pub n: usize,
    pub root: usize,
    pub bytes: u64,
    pub compute: u64,
}

impl Motif for Binomial {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        super::collectives::binomial_bcast(self.n, rank, self.root, |i| i as u32, self.bytes, ops);
        ops.push(Op::Compute(self.compute));
    }
}
