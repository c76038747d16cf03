//! Alltoall by pairwise exchange: n - 1 steps; in step k a rank sends to rank + k and waits
//! for rank - k's message (mod n).

use super::{Motif, MotifInfo, Op, BYTES};
use crate::routing::AriesMode;
use serde::{Deserialize, Serialize};

pub const KIND: MotifInfo = MotifInfo {
    name: "alltoall",
    about: "pairwise exchange, bytes per pair",
    keys: &[BYTES],
    defaults: crate::spec::defaults_of::<Keys>,
    typed: super::typed::<Keys>,
    check: |cx| cx.message_bytes(cx.own_keys::<Keys>()?.bytes).map(drop),
    build: |cx| {
        let bytes = cx.message_bytes(cx.own_keys::<Keys>()?.bytes)?;
        Ok(Some(Box::new(Pairwise { n: cx.ranks(), bytes, compute: cx.compute() })))
    },
};

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[serde(default)]
    bytes: Option<u64>,
}

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
