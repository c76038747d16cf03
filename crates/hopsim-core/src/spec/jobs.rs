//! `[[jobs]]`: applications on the network. Each job places its ranks on servers
//! (`allocation`), runs a workload (an MPI-like motif, or open-loop traffic) and sends its
//! messages with one routing mode (or lets application-aware routing choose per message).
//! Checks that need the network (does the allocation fit?) are made when the jobs are built
//! (`workload::jobs`), and those of a motif by the motif (`workload::motifs`); the ones
//! here need only the file.

use super::Key;
use crate::error::{SpecError, SpecResult};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    pub name: String,
    pub ranks: usize,
    #[serde(default)]
    pub allocation: AllocationSpec,
    pub workload: JobWorkloadSpec,
    /// An Aries routing mode (`routing.mode` names), `default` (Cray MPI's per operation) or
    /// `app_aware`; default: the run's `routing.mode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_mode: Option<String>,
    /// Cross traffic: runs (repeating its motif) until the other jobs are done, and is not
    /// measured as the application.
    #[serde(default)]
    pub background: bool,
    /// Cycle at which its ranks start.
    #[serde(default)]
    pub start: u64,
    #[serde(default)]
    pub app_aware: AppAwareSpec,
    /// Record each rank's calls (sends, receives with their waits, computation, iterations)
    /// at their simulated times, for an OTF2 export of the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timeline: bool,
}

/// `jobs[].allocation`: the policy, and its keys as written; the policies read and check
/// theirs (`workload::alloc::own_keys`), since serde cannot tell one policy's from another's.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AllocationSpec {
    /// `linear`, `random`, `spread`, `per_group`, `routers`, `explicit`.
    #[serde(default = "linear")]
    pub policy: String,
    /// The policies' own keys (`offset`, `groups`, ...), as written.
    #[serde(flatten, default)]
    pub policy_keys: std::collections::BTreeMap<String, serde_json::Value>,
}

impl Default for AllocationSpec {
    fn default() -> Self {
        AllocationSpec { policy: linear(), policy_keys: Default::default() }
    }
}

/// The allocation table's keys every policy reads.
pub const ALLOCATION_TABLE_KEYS: &[Key] = &[Key { name: "policy", default: "\"linear\"", meaning: "how the job's ranks are placed" }];

/// `jobs[].workload`: the keys every motif reads, and the motifs' own keys as written. The
/// motifs and their keys are the workload layer's (`workload::motifs::MOTIFS`, each motif's
/// key type in its file), which reads and checks them: the spec cannot name the code it
/// describes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct JobWorkloadSpec {
    /// A motif (`ping_pong`, `allreduce`, `alltoall`, `barrier`, `bcast`, `halo3d`,
    /// `sweep3d`) or `bernoulli` (open-loop traffic among the job's ranks).
    pub motif: String,
    #[serde(default = "ten")]
    pub iterations: u32,
    /// Cycles of computation after each iteration's communication (`sweep3d`: per block).
    #[serde(default)]
    pub compute: u64,
    /// End every iteration with a dissemination barrier among the job's ranks, as benchmark
    /// loops do: without it a rank done early (a bcast's root) starts the next iteration at
    /// once and successive iterations overlap.
    #[serde(default)]
    pub barrier: bool,
    /// The motifs' own keys (`bytes`, `grid`, `root`, ...), as written.
    #[serde(flatten, default)]
    pub motif_keys: std::collections::BTreeMap<String, serde_json::Value>,
}

/// The `jobs[].workload` keys of every motif.
pub const JOB_WORKLOAD_KEYS: &[Key] = &[
    Key { name: "motif", default: "required", meaning: "what the job's ranks run" },
    Key { name: "iterations", default: "10", meaning: "iterations of the motif" },
    Key { name: "compute", default: "0", meaning: "cycles of computation after each iteration's communication" },
    Key { name: "barrier", default: "false", meaning: "end every iteration with a barrier among the job's ranks" },
];

/// Application-aware routing (the paper's Algorithm 1).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppAwareSpec {
    /// Bytes sent since the last decision below which messages go with high bias.
    #[serde(default = "four_kib")]
    pub threshold_bytes: u64,
    /// High-bias latency and stall ratio estimated from adaptive's (and back, dividing):
    /// L_bs = latency_scale x L_ad, s_bs = stall_scale x s_ad.
    #[serde(default = "latency_scale")]
    pub latency_scale: f64,
    #[serde(default = "stall_scale")]
    pub stall_scale: f64,
    /// Decisions after which a mode's last sample is forgotten.
    #[serde(default = "forget_after")]
    pub forget_after: u32,
}

impl Default for AppAwareSpec {
    fn default() -> Self {
        AppAwareSpec { threshold_bytes: four_kib(), latency_scale: latency_scale(), stall_scale: stall_scale(), forget_after: forget_after() }
    }
}

fn linear() -> String {
    "linear".into()
}
fn ten() -> u32 {
    10
}
fn four_kib() -> u64 {
    4096
}
/// Defaults as the SC'19 paper derives its scaling factors, the median case over many
/// microbenchmarks: the medians of L_bs / L_ad (0.932, 43 cases) and s_bs / s_ad (2.225, 33
/// cases) over the idle microbenchmarks of docs/studies/aries-noise.md on the full-size
/// Piz Daint- and Cori-like machines, High Bias against Default (`paper_scale page`).
fn latency_scale() -> f64 {
    0.93
}
fn stall_scale() -> f64 {
    2.23
}
fn forget_after() -> u32 {
    16
}

impl JobSpec {
    /// Checks that need only the job's table, but not its motif (the motif's own are
    /// `workload::motifs::check`); `i` is its index in `jobs`.
    pub fn validate(&self, i: usize) -> SpecResult<()> {
        let key = |k: &str| format!("jobs[{i}].{k}");
        if self.ranks == 0 {
            return Err(SpecError::new(key("ranks"), 0, "must be at least 1"));
        }
        let w = &self.workload;
        if let Some(m) = &self.routing_mode {
            if !job_routing_modes().iter().any(|(name, _)| name == m) {
                let names: Vec<_> = job_routing_modes().into_iter().map(|(name, _)| name).collect();
                return Err(SpecError::new(key("routing_mode"), format!("{m:?}"), format!("allowed: {}", names.join(", "))));
            }
        }
        // A rank that never waits (a bcast's root) runs its iterations within one cycle,
        // each iteration's messages queued at once.
        if w.iterations == 0 || w.iterations > MAX_ITERATIONS {
            return Err(SpecError::new(key("workload.iterations"), w.iterations, format!("must be between 1 and {MAX_ITERATIONS}")));
        }
        // Cycles are added to the current cycle: beyond a run's length they would wrap.
        let most = super::validate::MAX_CYCLES;
        if w.compute > most {
            return Err(SpecError::new(key("workload.compute"), w.compute, format!("must be between 0 and {most} cycles (a run lasts less than 2^31 cycles)")));
        }
        if self.start > most {
            return Err(SpecError::new(key("start"), self.start, format!("must be between 0 and {most} cycles (a run lasts less than 2^31 cycles)")));
        }
        let p = &self.app_aware;
        for (k, v) in [("latency_scale", p.latency_scale), ("stall_scale", p.stall_scale)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(SpecError::new(key(&format!("app_aware.{k}")), v, "must be a positive factor"));
            }
        }
        if p.forget_after == 0 {
            return Err(SpecError::new(key("app_aware.forget_after"), 0, "must be at least 1 decision"));
        }
        Ok(())
    }
}

/// Most iterations of a job's motif.
pub const MAX_ITERATIONS: u32 = 1 << 20;

/// The mode that lets each message of a job choose (the paper's Algorithm 1).
pub const APP_AWARE: &str = "app_aware";

/// Cray MPI's default, which the paper calls Default: a mode per operation.
pub const CRAY_DEFAULT: &str = "default";

/// What `jobs[].routing_mode` may name, with one line on each: the Aries modes and
/// `app_aware`.
pub fn job_routing_modes() -> Vec<(&'static str, &'static str)> {
    let mut modes: Vec<_> = super::AriesMode::ALL.iter().map(|m| (m.name(), m.about())).collect();
    modes.push((CRAY_DEFAULT, "Cray MPI's default: increasingly_minimal for alltoall messages, adaptive for the others"));
    modes.push((APP_AWARE, "application-aware: each message between adaptive and high bias, from what the rank measured (jobs[].app_aware keys)"));
    modes
}

/// The `app_aware` keys, which only `routing_mode = "app_aware"` reads.
pub const APP_AWARE_KEYS: [&str; 4] = ["threshold_bytes", "latency_scale", "stall_scale", "forget_after"];

impl AppAwareSpec {
    /// Its keys given other than their defaults, with their values.
    fn given(&self) -> Vec<(&'static str, serde_json::Value)> {
        let (mine, default) = (serde_json::to_value(self).expect("serialises"), serde_json::to_value(Self::default()).expect("serialises"));
        APP_AWARE_KEYS.into_iter().filter(|k| mine[k] != default[k]).map(|k| (k, mine[k].clone())).collect()
    }
}

/// Refuse job `i`'s `app_aware` keys when its routing mode is not `app_aware`, unless the
/// experiment sweeps the job's mode (one table then serves every mode).
pub fn refuse_unread_app_aware(spec: &super::Spec) -> SpecResult<()> {
    for (i, j) in spec.jobs.iter().enumerate() {
        let selector = format!("jobs[{i}].routing_mode");
        if j.routing_mode.as_deref() == Some("app_aware") || !spec.keys_left_to_others(&selector, APP_AWARE_KEYS.into_iter()).is_empty() {
            continue;
        }
        if let Some((key, value)) = j.app_aware.given().into_iter().next() {
            let chosen = format!("{selector} = {:?}", j.routing_mode.as_deref().unwrap_or("(routing.mode)"));
            return Err(super::unknown_key(&format!("jobs[{i}].app_aware"), key, value, &chosen, &["none (only routing_mode = \"app_aware\" reads this table)"]));
        }
    }
    Ok(())
}

/// Checks across the jobs.
pub fn validate_jobs(jobs: &[JobSpec]) -> SpecResult<()> {
    for (i, j) in jobs.iter().enumerate() {
        j.validate(i)?;
        if jobs[..i].iter().any(|o| o.name == j.name) {
            return Err(SpecError::new(format!("jobs[{i}].name"), format!("{:?}", j.name), "each job needs its own name"));
        }
    }
    if !jobs.is_empty() {
        if jobs.iter().all(|j| j.background) {
            return Err(SpecError::new("jobs[].background", "true", "needs at least one job that is not the background (the application)"));
        }
    }
    Ok(())
}
