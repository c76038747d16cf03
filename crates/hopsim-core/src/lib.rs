//! hopsim-core: a cycle-accurate simulator of supercomputer interconnection networks.
//!
//! The model (routers with input and output buffers per VC, credits, virtual cut-through or
//! wormhole, separable allocation) is described in `docs/model.md`. Entry points:
//! [`simulate`] for a parsed [`Spec`], and the JSON functions used by the Python package.

// Every `unsafe` lives in `unsafe_parts`, beside the invariants it relies on.
#![deny(unsafe_code)]

// The registration and key-declaration macros, before the modules that use them.
#[macro_use]
pub mod component;
pub mod calendar;
pub mod deadlock_freedom;
pub mod engine;
pub mod error;
pub mod free_cores;
pub mod huge_pages;
pub mod link;
pub mod message;
pub mod nic;
pub mod packet;
pub mod params;
pub mod prefetch;
pub mod protocol;
pub mod random;
pub mod router;
pub mod round_robin;
pub mod route;
pub mod routing;
pub mod slab;
pub mod spec;
pub mod staging;
pub mod allocation;
pub mod stats;
pub mod topology;
pub mod traffic;
#[allow(unsafe_code)]
mod unsafe_parts;
pub mod vc;
pub mod workload;

pub use error::SpecError;
pub use spec::Spec;
pub use stats::RunResult;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Build the network described by `spec` and run it.
pub fn simulate(spec: &spec::Validated) -> Result<RunResult, SpecError> {
    simulate_with_progress(spec, None)
}

/// `simulate`, publishing the cycles simulated so far in `cycles` (if given) as it goes.
pub fn simulate_with_progress(spec: &spec::Validated, cycles: Option<Arc<AtomicU64>>) -> Result<RunResult, SpecError> {
    Ok(start(spec, cycles, None)?.run())
}

fn start(spec: &spec::Validated, cycles: Option<Arc<AtomicU64>>, cancel: Option<Arc<AtomicBool>>) -> Result<engine::Simulation, SpecError> {
    Ok(followed(engine::Simulation::new(spec)?, cycles, cancel))
}

/// `sim` publishing its progress in `cycles` and stopping when `cancel` is set.
fn followed(mut sim: engine::Simulation, cycles: Option<Arc<AtomicU64>>, cancel: Option<Arc<AtomicBool>>) -> engine::Simulation {
    if let Some(c) = cycles {
        sim.report_progress(c);
    }
    if let Some(c) = cancel {
        sim.cancel_on(c);
    }
    sim
}

/// One run: spec as JSON in, result as JSON out (docs/engine-contract.md); `cycles`, if
/// given, follows the run's progress. The spec is validated once, as it becomes a
/// `spec::Validated`.
pub fn simulate_json(spec_json: &str, cycles: Option<Arc<AtomicU64>>) -> Result<String, SpecError> {
    let spec = spec::Validated::new(spec::parse_json(spec_json)?)?;
    let result = start(&spec, cycles, None)?.run();
    Ok(serde_json::to_string(&result).expect("results serialise"))
}

/// `simulate_json` that stops soon after `cancel` is set (from another thread); a stopped
/// run returns `Ok(None)`: its partial result is dropped, never returned as if complete.
/// `max_threads` caps the threads the run uses (`run.threads` or the automatic choice), so
/// that several runs at once share the cores without oversubscribing them.
/// With `with_spec`, the result also holds `spec`, the spec with the engine's defaults filled
/// in (what `validate_json` returns), so that one call both validates and runs.
/// With `seal` (what `prepare_json` returned for this very text), the spec is not validated
/// again. With `rows_to` (a folder), the rows per link and per server go to files there
/// (`engine::rows`), listed in the result under `written`, rather than into the result.
#[allow(clippy::too_many_arguments)]
pub fn simulate_json_cancellable(
    spec_json: &str,
    cycles: Option<Arc<AtomicU64>>,
    cancel: Arc<AtomicBool>,
    max_threads: Option<usize>,
    with_spec: bool,
    seal: Option<&str>,
    checkpoint: Option<&Checkpointing>,
    rows_to: Option<&std::path::Path>,
) -> Result<Option<String>, RunError> {
    simulate_validated(&checked(spec_json, seal)?, cycles, cancel, max_threads, with_spec, checkpoint, rows_to)
}

/// Why a run gave no result: its spec (or a checkpoint it names), or a file of its rows that
/// could not be written (`rows_to`).
#[derive(Debug)]
pub enum RunError {
    Spec(SpecError),
    Write(engine::rows::WriteError),
}

impl From<SpecError> for RunError {
    fn from(e: SpecError) -> Self {
        RunError::Spec(e)
    }
}

/// Where a run keeps its checkpoints (`run.checkpoint_every`), and whether it goes on from
/// the one there.
pub struct Checkpointing {
    pub path: std::path::PathBuf,
    /// Go on from the checkpoint at `path` if there is one. A checkpoint that cannot be
    /// resumed from (another spec, another hopsim, cut short) is said on stderr, and the run
    /// starts from its first cycle and replaces it; a file that is not a checkpoint is an
    /// error, never written over.
    pub resume: bool,
}

use engine::checkpoint::CheckpointError;

/// The run of `spec`, from its checkpoint when `checkpoint` says so and one can be resumed.
fn start_or_resume(spec: &spec::Validated, checkpoint: Option<&Checkpointing>) -> Result<engine::Simulation, SpecError> {
    let Some(ck) = checkpoint else { return engine::Simulation::new(spec) };
    let mut sim = None;
    if ck.resume && ck.path.exists() {
        match engine::Simulation::resume_from(engine::Built::new(spec)?, &ck.path) {
            Ok(resumed) => {
                eprintln!("hopsim: going on from the checkpoint {} at cycle {}", ck.path.display(), resumed.cycle());
                sim = Some(resumed);
            }
            Err(e @ (CheckpointError::NotACheckpoint | CheckpointError::Unreadable(_))) => {
                return Err(SpecError::new("checkpoint", ck.path.display(), format!("is {e}: give the file of a hopsim checkpoint, or none (hopsim never writes over a file of another kind)")));
            }
            Err(e) => eprintln!("hopsim: the checkpoint {} is {e}: the run starts from its first cycle", ck.path.display()),
        }
    }
    let mut sim = match sim {
        Some(s) => s,
        None => engine::Simulation::new(spec)?,
    };
    sim.checkpoint_to(&ck.path);
    Ok(sim)
}

/// `simulate_json_cancellable` of a spec validated already (`prepare`): neither parsed nor
/// validated again.
#[allow(clippy::too_many_arguments)]
pub fn simulate_validated(
    spec: &spec::Validated,
    cycles: Option<Arc<AtomicU64>>,
    cancel: Arc<AtomicBool>,
    max_threads: Option<usize>,
    with_spec: bool,
    checkpoint: Option<&Checkpointing>,
    rows_to: Option<&std::path::Path>,
) -> Result<Option<String>, RunError> {
    let mut sim = followed(start_or_resume(spec, checkpoint)?, cycles, Some(cancel.clone()));
    if let Some(n) = max_threads {
        sim.limit_threads(n);
    }
    let result = match rows_to {
        Some(dir) => sim.run_writing_rows(dir).map_err(RunError::Write)?,
        None => sim.run(),
    };
    if cancel.load(Ordering::Relaxed) {
        return Ok(None);
    }
    Ok(Some(result_json(&result, with_spec.then_some(spec))))
}

/// A result as JSON, with the spec it ran (its defaults filled in) if given.
fn result_json(result: &RunResult, spec: Option<&spec::Validated>) -> String {
    let Some(spec) = spec else { return serde_json::to_string(result).expect("results serialise") };
    let mut v = serde_json::to_value(result).expect("results serialise");
    v["spec"] = serde_json::to_value(normalised(spec)).expect("specs serialise");
    v.to_string()
}

pub use engine::ranks::{Exchange, RankError, RankFailure, Sparse};

/// One rank's part of the run of `spec_json` over `exchange.ranks()` ranks (engine/ranks,
/// docs/parallel.md): `Ok(Some(result))` on rank 0, the same result JSON one process gives
/// (`simulate_json_cancellable`, with `with_spec` and `seal` as there), `Ok(None)` on the
/// others. Every rank is given the same spec, and every rank refuses it alike. `cycles`
/// publishes the cycles simulated so far, as on one process. With `checkpoint`, each rank
/// keeps its checkpoints beside its path (`engine::ranks::rank_checkpoint`). With `rows_to`
/// (a folder, on rank 0), the result's rows per link and per server are written there as
/// `links.csv` and `counters.csv`, with `topology.json`, rather than held, and the result
/// lists them under `written` (engine/rows.rs).
pub fn simulate_on_rank(spec_json: &str, exchange: &mut dyn Exchange, cycles: Option<Arc<AtomicU64>>, with_spec: bool, seal: Option<&str>, checkpoint: Option<&Checkpointing>, rows_to: Option<&std::path::Path>) -> Result<Option<String>, RankError> {
    let spec = checked(spec_json, seal)?;
    let Some(result) = engine::Simulation::run_on_rank(&spec, exchange, cycles, checkpoint, rows_to)? else { return Ok(None) };
    Ok(Some(result_json(&result, with_spec.then_some(&spec))))
}

/// Check a spec completely (names, ranges, combinations) without running it; returns it
/// normalised with defaults filled in. Validated once, by `prepare`.
pub fn validate_json(spec_json: &str) -> Result<String, SpecError> {
    Ok(prepare_json(spec_json)?.0)
}

/// `validate_json`, and the engine's seal of `spec_json` (`spec::seal`): given back with
/// this very text to `simulate_json_cancellable`, `topology_json` or `switch_roles_json`,
/// in this process or another, it spares them validating the spec again.
pub fn prepare_json(spec_json: &str) -> Result<(String, String), SpecError> {
    let p = prepare(spec_json)?;
    Ok((p.normalised_json, p.seal))
}

/// A run's spec parsed and checked completely, once: `simulate_validated` runs it in this
/// process; another process gets its text and `seal`.
pub struct Prepared {
    pub spec: spec::Validated,
    /// The spec with the engine's defaults filled in (`validate_json`'s answer).
    pub normalised_json: String,
    pub seal: String,
    /// Bytes the run will add to the process's memory (`engine::memory::estimate`).
    pub memory_run: u64,
}

pub fn prepare(spec_json: &str) -> Result<Prepared, SpecError> {
    prepare_on_ranks(spec_json, 1)
}

/// `prepare` for a run over `ranks` MPI ranks: `memory_run` is a rank's (the largest).
pub fn prepare_on_ranks(spec_json: &str, ranks: usize) -> Result<Prepared, SpecError> {
    let spec = spec::Validated::new(spec::parse_json(spec_json)?)?;
    // The checks that need the network and the registries; `Spec::validate` ran above.
    let memory_run = engine::Simulation::check_on_ranks(&spec, ranks)?;
    let normalised_json = serde_json::to_string(&normalised(&spec)).expect("specs serialise");
    Ok(Prepared { spec, normalised_json, seal: spec::seal(spec_json), memory_run })
}

/// The spec of `spec_json`, validated unless `seal` is the engine's seal of that text.
fn checked(spec_json: &str, seal: Option<&str>) -> Result<spec::Validated, SpecError> {
    let spec = spec::parse_json(spec_json)?;
    match seal {
        Some(s) => spec::Validated::sealed(spec, spec_json, s),
        None => spec::Validated::new(spec),
    }
}

/// The spec with the defaults of every key the engine lists filled in: what `validate_json`
/// returns and what a run folder's `spec.json` keeps.
fn normalised(spec: &Spec) -> Spec {
    topology::with_listed_keys(vc::with_own_keys(routing::with_defaults(traffic::with_listed_keys(workload::with_defaults(spec)))))
}

/// A spec as this engine normalises it, without checking it: a run folder's `spec.json`
/// written by an older build (which lacks the keys added since, or lists its keys in an
/// older shape) is compared with a run's normalised spec in today's shape on `--resume`.
/// Keys added since are filled in with their defaults, which is what the older build ran.
pub fn normalise_json(spec_json: &str) -> Result<String, SpecError> {
    let spec = spec::parse_json(spec_json)?;
    Ok(serde_json::to_string(&normalised(&spec)).expect("specs serialise"))
}

/// Every registered component, from the registries themselves, each with the keys it reads
/// and their defaults: topology kinds, routing algorithms (with the kinds the deadlock-freedom
/// table defines them on), VC policies, traffic patterns, workloads and the motifs of jobs;
/// each family's `table_keys` are those every component of it reads. Also the metrics of a
/// run with their units. `hopsim list` prints it.
pub fn components_json() -> String {
    use spec::keys_json;
    let entry = |name: &str, about: &str, keys: &[spec::Key]| serde_json::json!({"name": name, "about": about, "keys": keys_json(keys)});
    let topologies: Vec<_> = topology::KINDS.iter().map(|k| serde_json::json!({"name": k.name, "about": k.about, "keys": topology::listed_keys(k)})).collect();
    let routings: Vec<_> = routing::Algorithm::ALL
        .iter()
        .map(|&a| {
            let k = a.kind();
            let mut e = entry(k.name, k.about, k.keys);
            e["topologies"] = deadlock_freedom::kinds_of(a).into();
            e
        })
        .collect();
    let workloads: Vec<_> = workload::WORKLOADS
        .iter()
        .map(|w| {
            let mut e = entry(w.name, w.about, w.keys);
            e["closed_loop"] = w.closed_loop.into();
            e
        })
        .collect();
    serde_json::json!({
        "topologies": topologies,
        "routing_algorithms": routings,
        "routing_table_keys": keys_json(routing::TABLE_KEYS),
        "vc_policies": vc::POLICIES.iter().map(|p| entry(p.name, p.about, p.keys)).collect::<Vec<_>>(),
        "traffic_patterns": traffic::PATTERNS.iter().map(|p| entry(p.name, p.about, p.keys)).collect::<Vec<_>>(),
        "traffic_table_keys": keys_json(traffic::TABLE_KEYS),
        "workloads": workloads,
        "workload_table_keys": keys_json(spec::workload::TABLE_KEYS),
        "motifs": workload::motifs::MOTIFS
            .iter()
            .map(|m| {
                let mut e = entry(m.name, m.about, m.keys);
                e["open_loop"] = workload::is_open_loop_motif(m.name).into();
                e
            })
            .collect::<Vec<_>>(),
        "motif_table_keys": keys_json(spec::JOB_WORKLOAD_KEYS),
        "routing_modes": spec::job_routing_modes().into_iter().map(|(name, about)| serde_json::json!({"name": name, "about": about, "keys": []})).collect::<Vec<_>>(),
        "allocation_policies": workload::alloc::policies_json(),
        "trace_collectives": workload::motifs::collectives::Collective::ALL,
        "metrics": stats::metric_units::METRICS.iter().map(|(name, unit)| serde_json::json!({"name": name, "unit": unit})).collect::<Vec<_>>(),
        "metric_families": stats::metric_units::METRIC_FAMILIES.iter().map(|(pattern, unit)| serde_json::json!({"pattern": pattern, "unit": unit})).collect::<Vec<_>>(),
    })
    .to_string()
}

/// Per switch of a spec's network, its group (`topology.group_of`; all 0 without groups) and
/// its tier (`Topology::tier`): what link maps need to draw groups and name links up or
/// down, without numbering the switches themselves.
pub fn switch_roles_json(spec_json: &str, seal: Option<&str>) -> Result<String, SpecError> {
    let spec = checked(spec_json, seal)?;
    let topo = topology::build(&spec)?;
    let switches = 0..topo.num_switches();
    let group: Vec<usize> = switches.clone().map(|s| topo.group_of(s)).collect();
    let tier: Vec<usize> = switches.map(|s| topo.tier(s)).collect();
    Ok(serde_json::json!({"kind": topo.kind(), "groups": topo.groups(), "group": group, "tier": tier}).to_string())
}

/// The memory a run of the spec needs (docs/model.md, "Memory"), part by part, and what
/// this process may still take: `{"parts": [{"what", "key", "bytes"}], "total", "run",
/// "available"}` (`run`: the parts the run adds to the process; `available`: null if unknown).
pub fn memory_estimate_json(spec_json: &str, seal: Option<&str>, ranks: usize) -> Result<String, SpecError> {
    let spec = checked(spec_json, seal)?;
    let topo = topology::build(&spec)?;
    let est = engine::memory::estimate_on_ranks(&spec, topo.as_ref(), ranks);
    let parts: Vec<serde_json::Value> =
        est.parts.iter().map(|p| serde_json::json!({"what": p.what, "key": p.key, "bytes": p.bytes})).collect();
    let v = serde_json::json!({
        "parts": parts,
        "total": est.total(),
        "run": est.run(),
        "available": engine::memory::available()?,
    });
    Ok(v.to_string())
}

/// Bytes this process may still take (`engine::memory::available`), or None if unknown.
pub fn memory_available() -> Result<Option<u64>, SpecError> {
    engine::memory::available()
}

/// Facts about the topology of a spec, and a check of its wiring. Only what describes the
/// network is checked (`Spec::validate_topology`): a spec whose routing or traffic is wrong
/// still has a network to describe.
pub fn topology_json(spec_json: &str, seal: Option<&str>) -> Result<String, SpecError> {
    let spec = spec::parse_json(spec_json)?;
    if seal != Some(spec::seal(spec_json).as_str()) {
        spec.validate_topology()?;
    }
    let topo = topology::build(&spec)?;
    let servers = topology::ServerMap::new(topo.as_ref());
    let (links, wiring) = match topology::check_wiring(topo.as_ref()) {
        Ok(n) => (n, "ok".to_string()),
        Err(e) => (0, e),
    };
    let link_classes: serde_json::Map<String, serde_json::Value> =
        topology::class_counts(topo.as_ref()).into_iter().map(|(c, n)| (c.name().to_string(), n.into())).collect();
    let radix = (0..topo.num_switches()).map(|s| topo.network_ports(s) + topo.servers_at(s)).max().unwrap_or(0);
    let v = serde_json::json!({
        "kind": topo.kind(),
        "description": topo.description(),
        "switches": topo.num_switches(),
        "servers": servers.num_servers(),
        "links": links,
        "radix": radix,
        "diameter": topo.diameter(),
        "groups": topo.groups(),
        "wiring_ok": wiring == "ok",
        "wiring": wiring,
        "link_classes": link_classes,
    });
    Ok(v.to_string())
}
