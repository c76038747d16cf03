//! Open-loop traffic among a job's ranks: not a program of iterations, so it builds no
//! `Motif`; `workload::jobs` draws its messages (`Work::OpenLoop`).

use super::{MotifInfo, BYTES};
use crate::error::SpecError;

pub const KIND: MotifInfo = MotifInfo {
    name: "bernoulli",
    about: "open loop: messages to a random other rank of the job",
    keys: &[crate::spec::Key { name: "load", default: "required", meaning: "phits per rank per cycle, in (0, 1]" }, BYTES],
    check: |cx| match cx.workload().load {
        Some(l) if l > 0.0 && l <= 1.0 => Ok(()),
        l => Err(SpecError::new(cx.key("workload.load"), format!("{l:?}"), "bernoulli needs a load in (0, 1] phits per rank per cycle")),
    },
    build: |_| Ok(None),
};
