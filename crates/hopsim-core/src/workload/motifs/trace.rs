//! Replay of an application's recorded communication: each rank runs the sends, receives,
//! collectives and computation of the matching rank of an OTF2 trace, converted once by the
//! Python package (`workload::trace` reads the converted file and matches it). An iteration
//! is one span of the trace between entries of the region the conversion was told marks
//! iterations (the whole trace without one); a job running more iterations than the trace
//! has replays it again from its first.

use super::{Motif, MotifInfo, Op};
use crate::error::{SpecError, SpecResult};
use crate::workload::trace::file::{Header, TraceFile};
use crate::workload::trace::Trace;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub const KIND: MotifInfo = MotifInfo {
    name: "trace",
    about: "replay of an OTF2 trace's MPI communication and compute gaps",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    typed: super::typed::<Keys>,
    check: |cx| check(cx, &cx.own_keys()?).map(drop),
    build: |cx| {
        let keys: Keys = cx.own_keys()?;
        let header = check(cx, &keys)?;
        let key = cx.key("workload.trace");
        let path = keys.trace.as_deref().unwrap_or_default();
        let cycles_per_tick = if keys.compute_scale == 0.0 {
            0.0
        } else {
            let cycle_ns = cx.cycle_ns.ok_or_else(|| {
                SpecError::new(cx.key("workload.compute_scale"), keys.compute_scale, "turning the trace's compute time into cycles needs link.gbytes_per_s (with packet.bytes or a nic.protocol); or set compute_scale = 0")
            })?;
            keys.compute_scale * 1e9 / (header.timer_resolution as f64 * cycle_ns)
        };
        let trace = Trace::load(Path::new(path), &key, cycles_per_tick)?;
        cx.spec.check_message_fits(&key, format!("{path:?}"), trace.largest_message(), "the trace's largest message", false)?;
        Ok(Some(Box::new(Replay { trace })))
    },
};

keys! {
    struct Keys {
        /// the trace: an OTF2 archive's anchor file (traces.otf2, read with the hopsim[traces] extra) or its converted .hopsim-trace file
        trace: Option<String> = "required" => None,
        /// factor on the trace's time between MPI calls (0: no computation)
        compute_scale: f64 = 1.0,
        /// events the replay cannot run (one-sided MPI, I/O, unknown collectives): skip (counted in the results) or refuse
        unsupported: Option<Unsupported> = "skip" => None,
        /// the trace's region whose entries start an iteration (read when the archive is converted)
        iteration_region: Option<String> = "none" => None,
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Unsupported {
    Skip,
    Refuse,
}

/// What can be checked from the converted file's header, which it returns: it is there,
/// has the job's rank count, and has no event the replay cannot run when those are refused.
fn check(cx: &super::MotifCtx, keys: &Keys) -> SpecResult<Header> {
    let key = cx.key("workload.trace");
    let Some(path) = keys.trace.as_deref() else {
        return Err(SpecError::new(key, "", "required: the trace to replay (an OTF2 archive's traces.otf2)"));
    };
    if !(keys.compute_scale >= 0.0 && keys.compute_scale.is_finite()) {
        return Err(SpecError::new(cx.key("workload.compute_scale"), keys.compute_scale, "a finite number >= 0"));
    }
    if cx.job().workload.barrier {
        return Err(SpecError::new(cx.key("workload.barrier"), true, "a replayed trace has its own synchronisation: barrier must be false"));
    }
    if path.ends_with(".otf2") {
        return Err(SpecError::new(key, format!("{path:?}"), "an OTF2 archive is converted by hopsim's Python package (pip install 'hopsim[traces]'); the engine reads the converted file"));
    }
    let file = TraceFile::open(Path::new(path), &key)?;
    let path = file.shown().to_string();
    let header = file.header;
    if header.ranks != cx.ranks() {
        return Err(SpecError::new(cx.key("ranks"), cx.ranks(), format!("the trace {path:?} has {} ranks: set ranks = {}", header.ranks, header.ranks)));
    }
    let skipped: u64 = header.unsupported.values().sum();
    if keys.unsupported == Some(Unsupported::Refuse) && skipped > 0 {
        let kinds: Vec<String> = header.unsupported.iter().map(|(k, n)| format!("{n} {k}")).collect();
        return Err(SpecError::new(
            cx.key("workload.unsupported"),
            "\"refuse\"",
            format!("the trace {path:?} has events the replay cannot run: {}; set unsupported = \"skip\" to replay without them", kinds.join(", ")),
        ));
    }
    Ok(header)
}

struct Replay {
    trace: Trace,
}

impl Motif for Replay {
    fn iteration(&self, rank: usize, iteration: u32, ops: &mut Vec<Op>) {
        self.trace.iteration(rank, iteration, ops);
    }
    fn unsupported_events(&self) -> BTreeMap<String, u64> {
        self.trace.unsupported.clone()
    }
}
