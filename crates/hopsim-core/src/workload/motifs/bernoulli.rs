//! Open-loop traffic among a job's ranks: not a program of iterations, so it builds no
//! `Motif`; `workload::jobs` draws its messages (`Work::OpenLoop`) at the rate `open_loop`
//! gives.

use super::{MotifCtx, MotifInfo};
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;

pub const KIND: MotifInfo = MotifInfo {
    name: "bernoulli",
    about: "open loop: messages to a random other rank of the job",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    typed: super::typed::<Keys>,
    check: |cx| read(cx).map(drop),
    build: |_| Ok(None),
};

keys! {
    struct Keys {
        /// phits per rank per cycle, in (0, 1]
        load: Option<f64> = "required" => None,
        /// message size in bytes (given, it needs packet.bytes or a nic.protocol)
        bytes: Option<u64> = "8 bytes" => None,
    }
}

/// Its load (phits per rank per cycle) and message size.
fn read(cx: &MotifCtx) -> SpecResult<(f64, u64)> {
    let keys: Keys = cx.own_keys()?;
    let bytes = cx.message_bytes(keys.bytes)?;
    match keys.load {
        Some(l) if l > 0.0 && l <= 1.0 => {
            // Below this rate the gaps between messages cannot be drawn (as `traffic.load`'s).
            let phits = crate::workload::jobs::Jobs::message_phits(cx.spec, bytes);
            let per_cycle = l / phits as f64;
            if per_cycle < crate::spec::MIN_MESSAGE_RATE {
                return Err(SpecError::new(
                    cx.key("workload.load"),
                    l,
                    format!("too small: {per_cycle:e} messages per rank per cycle (messages of {phits} phits); at least {:e}", crate::spec::MIN_MESSAGE_RATE),
                ));
            }
            Ok((l, bytes))
        }
        Some(l) => Err(SpecError::new(cx.key("workload.load"), l, "bernoulli needs a load in (0, 1] phits per rank per cycle")),
        None => Err(SpecError::new(cx.key("workload.load"), "", "missing; bernoulli needs a load in (0, 1] phits per rank per cycle")),
    }
}

/// Job `i`'s load (phits per rank per cycle) and message size in bytes.
pub fn open_loop(spec: &Spec, i: usize) -> SpecResult<(f64, u64)> {
    read(&MotifCtx { spec, i, cycle_ns: None })
}
