//! Dissemination barrier: ceil(log2 n) rounds; in round k a rank signals rank + 2^k and
//! waits for rank - 2^k's signal (mod n).

use super::{BytesKeys, Motif, MotifInfo, Op};

pub const KIND: MotifInfo = MotifInfo {
    name: "barrier",
    about: "dissemination barrier",
    keys: BytesKeys::KEYS,
    defaults: BytesKeys::defaults,
    typed: super::typed::<BytesKeys>,
    check: |cx| cx.own_message_bytes().map(drop),
    build: |cx| {
        let bytes = cx.own_message_bytes()?;
        Ok(Some(Box::new(Dissemination { n: cx.ranks(), bytes, compute: cx.compute() })))
    },
};

pub struct Dissemination {
    pub n: usize,
    pub bytes: u64,
    pub compute: u64,
}

impl Motif for Dissemination {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        super::collectives::dissemination(self.n, rank, |i| i as u32, self.bytes, ops);
        ops.push(Op::Compute(self.compute));
    }
}
