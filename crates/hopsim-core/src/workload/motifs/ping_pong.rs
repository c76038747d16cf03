//! Ping-pong: rank i < n/2 sends to rank i + n/2, which sends the message back.

use super::{BytesKeys, Motif, MotifInfo, Op};

pub const KIND: MotifInfo = MotifInfo {
    name: "ping_pong",
    about: "rank i with rank i + ranks/2",
    keys: BytesKeys::KEYS,
    defaults: BytesKeys::defaults,
    typed: super::typed::<BytesKeys>,
    check: |cx| {
        cx.own_message_bytes()?;
        if cx.ranks() % 2 != 0 {
            return Err(crate::error::SpecError::new(cx.key("ranks"), cx.ranks(), "ping_pong pairs rank i with rank i + ranks / 2: needs an even number of ranks"));
        }
        Ok(())
    },
    build: |cx| {
        let bytes = cx.own_message_bytes()?;
        Ok(Some(Box::new(PingPong { half: cx.ranks() / 2, bytes, compute: cx.compute() })))
    },
};

pub struct PingPong {
    pub half: usize,
    pub bytes: u64,
    pub compute: u64,
}

impl Motif for PingPong {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        let (peer, first) = if rank < self.half { (rank + self.half, true) } else { (rank - self.half, false) };
        let (send, recv) = (Op::Send { to: peer as u32, bytes: self.bytes }, Op::Recv { from: peer as u32 });
        ops.extend(if first { [send, recv] } else { [recv, send] });
        ops.push(Op::Compute(self.compute));
    }
}
