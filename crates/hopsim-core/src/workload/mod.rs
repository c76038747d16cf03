//! Workloads: when servers send messages and to whom. Open-loop ones (bernoulli) offer a load;
//! closed-loop ones (ping_pong, bandwidth) send when answered and record one sample per
//! round trip or window. The engine only calls this trait.

pub mod alloc;
pub mod app_aware;
mod bandwidth;

pub use bandwidth::packets_at_once;
mod bernoulli;
mod periodic;
mod jobs;
pub mod motifs;
pub mod trace;

use crate::error::{SpecError, SpecResult};
use crate::routing::Rng;
use crate::spec::{Key, Spec};
use crate::traffic::Traffic;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// A message a workload wants sent now.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Post {
    pub src: u32,
    pub dst: u32,
    /// Packets, or requests under a `nic.protocol`.
    pub packets: u32,
    /// Bytes, which set the requests' lengths under a `nic.protocol`.
    pub bytes: u64,
    pub tag: u32,
    /// The Aries routing mode its packets (and their responses) take; `None`: the run's
    /// `routing.mode`.
    pub mode: Option<crate::routing::AriesMode>,
    /// Open-loop traffic, which a full source queue may drop (counted). A program's message
    /// is waited for, so it is never dropped: its rank sends at most one iteration's
    /// messages before it waits, which bounds the queue.
    pub droppable: bool,
}

/// The size of the messages a workload sends, as posts carry it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MessageSize {
    pub packets: u32,
    pub bytes: u64,
    /// Phits of the packets that carry its data (what offered load counts).
    pub data_phits: u64,
    /// Its payload in phits (what a bandwidth sample counts as moved).
    pub payload_phits: u64,
}

impl MessageSize {
    /// A message of `bytes` (protocol on) or `packets` packets (protocol off).
    fn new(spec: &Spec, packets: usize, bytes: u64) -> Self {
        let protocol = crate::nic::protocol::Protocol::from_spec(spec);
        if protocol.is_on() {
            MessageSize {
                packets: protocol.requests(bytes),
                bytes,
                data_phits: protocol.data_phits(bytes),
                payload_phits: protocol.message_payload_flits(bytes),
            }
        } else {
            let phits = (packets * spec.packet.phits) as u64;
            MessageSize { packets: packets as u32, bytes: 0, data_phits: phits, payload_phits: phits }
        }
    }

    fn post(&self, src: u32, dst: u32, tag: u32) -> Post {
        Post { src, dst, packets: self.packets, bytes: self.bytes, tag, mode: None, droppable: true }
    }
}

/// One measurement of a closed-loop workload: a round trip or a window.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    pub src: u32,
    pub dst: u32,
    pub iteration: u32,
    pub start: u64,
    pub cycles: u64,
    /// From `start` to the last data message complete (before the acknowledgement).
    pub message_cycles: u64,
    /// Payload phits the sample moved from src to dst.
    pub phits: u64,
    /// The sender's NIC counters over the sample (from `start` to its end).
    pub counters: crate::nic::Counters,
}

/// A message complete at its destination.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Delivered {
    pub src: u32,
    pub dst: u32,
    pub tag: u32,
    pub created: u64,
}

pub struct Ctx<'a> {
    pub now: u64,
    /// The servers' random streams. A workload draws from a server's stream only in that
    /// server's `timer` (and in `start`): on MPI ranks every rank runs a workload whose
    /// servers share state whole, and the rank owning a server sends the others its stream
    /// before its timers fire (engine/ranks); a rank running its own servers' part of one
    /// (`servers_independent`) holds their streams only (`Streams::get_mut` is `None` for
    /// the others, whose timers it does not keep).
    pub rng: &'a mut crate::random::Streams,
    pub posts: &'a mut Vec<Post>,
    /// (cycle, server): call `timer` for that server then.
    pub timers: &'a mut Vec<(u64, u32)>,
    pub samples: &'a mut Vec<Sample>,
    /// Each NIC's counters over the whole run so far (on an MPI rank, of its own servers).
    pub nic_totals: crate::nic::NicTotals<'a>,
}

pub trait Workload: Send {
    fn name(&self) -> &'static str;
    fn start(&mut self, cx: &mut Ctx);
    fn timer(&mut self, _server: usize, _cx: &mut Ctx) {}
    /// Whether `delivered` must be called for every complete message.
    fn wants_delivery(&self) -> bool {
        false
    }
    fn delivered(&mut self, _msg: &Delivered, _cx: &mut Ctx) {}
    /// Whether a message with this tag is an acknowledgement (counted apart from the data
    /// messages, whose latency is what the papers report).
    fn is_acknowledgement(&self, _tag: u32) -> bool {
        false
    }
    /// A closed-loop workload that has nothing more to send ends the run (on an MPI rank
    /// running its part, `partition`: that part has nothing more to send).
    fn finished(&self) -> bool {
        false
    }
    /// The cycle it finished at (`finished`), for a workload that tells: the engine then
    /// fixes, once the whole of it finished, the cycle from which what still sends stops
    /// (`stop`). One that does not tell ends the run as it finishes.
    fn finished_at(&self) -> Option<u64> {
        None
    }
    /// Whether some of it still sends once the rest finished (a background): it then stops
    /// the network's shortest switch-to-switch link latency after the end, which no MPI
    /// rank's window exceeds, rather than the next cycle.
    fn sends_after_finishing(&self) -> bool {
        false
    }
    /// The whole workload finished: what still sends stops from cycle `at`.
    fn stop(&mut self, _at: u64) {}
    /// The cycle `stop` fixed.
    fn stopping_at(&self) -> Option<u64> {
        None
    }
    /// On MPI ranks, for a workload whose servers share nothing but the run's end
    /// (`WorkloadKind::servers_independent`, `[[jobs]]`): this rank runs the part of the
    /// servers it `holds`, and `finished`, `finished_at` and `rank_part` speak of that part.
    fn partition(&mut self, _holds: &dyn Fn(u32) -> bool) {}
    /// A packet from `src` reached the application, `latency` cycles after its creation.
    fn packet_delivered(&mut self, _src: u32, _latency: u64) {}
    /// Per-job results (`[[jobs]]`), given each NIC's counters over the whole run.
    fn job_results(&self, _nic_totals: &[crate::nic::Counters]) -> Vec<crate::stats::jobs::JobResult> {
        Vec::new()
    }
    /// On an MPI rank: what only this rank knew of it, for rank 0 to add to its own at the
    /// end (`absorb_rank_part`): its part's results (`partition`), or, run whole on every
    /// rank, what it decided from a NIC's counters, which only the NIC's own rank decides.
    fn rank_part(&self) -> Vec<u8> {
        Vec::new()
    }
    /// Add another rank's `rank_part`.
    fn absorb_rank_part(&mut self, _part: &[u8]) -> bincode::Result<()> {
        Ok(())
    }
    /// What a checkpoint keeps of it (engine/checkpoint.rs): the fields that change as it
    /// runs, through `save_state`. What it was built with is built again from the spec.
    fn save(&self) -> Vec<u8>;
    /// Back to where `save` found it, on a workload built from the same spec.
    fn restore(&mut self, saved: &[u8]) -> bincode::Result<()>;
}

/// A workload's changing fields, encoded for a checkpoint (`Workload::save`).
pub fn save_state<T: serde::Serialize + ?Sized>(state: &T) -> Vec<u8> {
    bincode::serialize(state).expect("encoding into memory does not fail")
}

/// The fields `save_state` encoded (`Workload::restore`).
pub fn load_state<T: serde::de::DeserializeOwned>(saved: &[u8]) -> bincode::Result<T> {
    bincode::deserialize(saved)
}

/// A `workload.kind` as the registry knows it, declared in its file: its name, one line on
/// it, whether it is closed-loop (senders wait for answers; its results are samples of round
/// trips or windows), the `[workload]` keys it reads (its key type's fields, read with
/// `own_keys`), its checks that need no network and how it is built. Python reads the list
/// through `components_json`.
pub struct WorkloadKind {
    pub name: &'static str,
    pub about: &'static str,
    pub closed_loop: bool,
    /// Whether each server's part of it depends on no other server's but through the
    /// messages they exchange and the run's end: then a run on MPI ranks keeps only its own
    /// servers' timers and random streams and calls it for its own servers only
    /// (engine/ranks, `Workload::partition`); otherwise every rank runs it whole and calls it
    /// as one process does (`servers_independent`).
    pub servers_independent: bool,
    /// What it keeps for every server of the network, in bytes (on every MPI rank: the memory
    /// estimate, engine/memory).
    pub tables_per_server: u64,
    pub keys: &'static [Key],
    /// Its key type's values when nothing is given (`KeyType::defaults`), which a test
    /// compares with `keys`.
    pub defaults: fn() -> serde_json::Value,
    /// Its keys in range, and what it needs of the rest of the spec.
    pub check: fn(&Spec) -> SpecResult<()>,
    pub build: fn(&BuildCtx) -> SpecResult<Box<dyn Workload>>,
}

registry! {
    /// The workloads, as `workload.kind` names them: one line each, its variant and its
    /// entry, declared in its file.
    enum Kind;
    /// Every `workload.kind`, in the order `hopsim list` and error messages give them.
    const WORKLOADS: [WorkloadKind] = {
        Bernoulli => bernoulli::KIND,
        Periodic => periodic::KIND,
        PingPong => bandwidth::PING_PONG,
        Bandwidth => bandwidth::BANDWIDTH,
    }
}

/// What a workload is built from.
pub struct BuildCtx<'a> {
    pub spec: &'a Spec,
    pub traffic: &'a Traffic,
    /// The size of its messages (`[message]`).
    pub message: MessageSize,
}

/// The kind `workload.kind` names, or an error naming it and what is allowed.
pub fn kind(spec: &Spec) -> SpecResult<&'static WorkloadKind> {
    let name = &spec.workload.kind;
    Kind::from_name(name).map(Kind::kind).ok_or_else(|| {
        let names: Vec<_> = WORKLOADS.iter().map(|k| k.name).collect();
        SpecError::new("workload.kind", format!("{name:?}"), format!("allowed: {}", names.join(", ")))
    })
}

/// Open-loop workloads offer `traffic.load`; closed-loop ones send when answered. (With
/// `[[jobs]]`, the `[workload]` table's.)
pub fn is_open_loop(spec: &Spec) -> bool {
    Kind::from_name(&spec.workload.kind).is_some_and(|k| !k.kind().closed_loop)
}

/// Whether the run's workload has servers independent of each other
/// (`WorkloadKind::servers_independent`). `[[jobs]]` share only the run's end
/// (`Workload::partition`), unless a message completes away from its destination's rank (a
/// GET protocol completes it at its source, whose rank would have to call the destination's
/// program in the same cycle; so too for the closed loops) or App-Aware routing reads, without a `nic.protocol`, the
/// latency of its NIC's packets delivered at other ranks, which one process counts at once.
pub fn servers_independent(spec: &Spec) -> bool {
    use crate::nic::protocol::{Protocol, ProtocolKind};
    let protocol = Protocol::from_spec(spec);
    let get = protocol.kind == ProtocolKind::Get;
    if !spec.jobs.is_empty() {
        let app_aware = spec.jobs.iter().any(|j| j.routing_mode.as_deref() == Some("app_aware"));
        return !get && (!app_aware || protocol.is_on());
    }
    Kind::from_name(&spec.workload.kind).is_some_and(|k| k.kind().servers_independent && !(k.kind().closed_loop && get))
}

/// Bytes the workload keeps for every server of the network (`WorkloadKind::tables_per_server`;
/// `[[jobs]]`: `jobs::BYTES_PER_SERVER`), on every MPI rank.
pub fn table_bytes(spec: &Spec, servers: u64) -> u64 {
    let per = if spec.jobs.is_empty() { Kind::from_name(&spec.workload.kind).map_or(0, |k| k.kind().tables_per_server) } else { jobs::BYTES_PER_SERVER };
    per * servers
}

/// Bytes of the program state `[[jobs]]` keep for each server whose program a process runs
/// (`jobs::PROGRAM_BYTES`): its own servers', or every server's where the workload runs
/// whole on every MPI rank (`servers_independent`).
pub fn program_bytes(spec: &Spec) -> u64 {
    if spec.jobs.is_empty() {
        0
    } else {
        jobs::PROGRAM_BYTES
    }
}

/// Whether a job's motif is open-loop traffic (`bernoulli`): it sends until `run.cycles`,
/// has no iterations and never finishes, so it cannot be late either.
pub fn is_open_loop_motif(motif: &str) -> bool {
    motifs::MotifKind::from_name(motif) == Some(motifs::MotifKind::Bernoulli)
}

/// The chosen kind's own `[workload]` keys, read into its key type `T`.
pub fn own_keys<T: serde::de::DeserializeOwned>(spec: &Spec) -> SpecResult<T> {
    let k = kind(spec)?;
    let chosen = format!("workload.kind = {:?}", k.name);
    let others = spec.keys_left_to_others("workload.kind", WORKLOADS.iter().flat_map(|w| w.keys.iter()).map(|k| k.name));
    crate::spec::read_own_keys("workload", &chosen, &spec.workload.kind_keys, crate::spec::workload::TABLE_KEYS, k.keys, &others)
}

/// The checks of the workload (`[workload]`, or the motifs of `[[jobs]]`) that need no
/// network: the kind and its keys, and what it needs of `[traffic]` and `[nic]`.
pub fn check(spec: &Spec) -> SpecResult<()> {
    // A misspelt `[traffic]` key is named before the load it may have meant is missed.
    crate::traffic::own_keys::<serde_json::Value>(spec)?;
    refuse_workload_beside_jobs(spec)?;
    let k = kind(spec)?;
    (k.check)(spec)?;
    motifs::check(spec)?;
    if spec.traffic.burst.is_some() && k.closed_loop {
        return Err(SpecError::new("traffic.burst", "", "only used by the open-loop workload (workload.kind = \"bernoulli\")"));
    }
    Ok(())
}

/// `[[jobs]]` replace `[workload]`: a `[workload]` given beside them (a kind other than the
/// default, or a kind's key) would not run, so it is refused rather than ignored.
fn refuse_workload_beside_jobs(spec: &Spec) -> SpecResult<()> {
    if spec.jobs.is_empty() {
        return Ok(());
    }
    let w = &spec.workload;
    let default = crate::spec::WorkloadSpec::default();
    let why = "[[jobs]] replace [workload], which would not run: remove [workload] (each job's workload is its jobs[].workload table)";
    if w.kind != default.kind {
        return Err(SpecError::new("workload.kind", format!("{:?}", w.kind), why));
    }
    match w.kind_keys.iter().find(|(_, v)| !v.is_null()) {
        Some((k, v)) => Err(SpecError::new(format!("workload.{k}"), v, why)),
        None => Ok(()),
    }
}

/// `spec` with its `[workload]` table and each job's motif keys as the normalised spec
/// writes them (`spec::list_keys`): the chosen kind's keys with their defaults, the other
/// kinds' keys null.
pub fn with_defaults(spec: &Spec) -> Spec {
    let mut out = spec.clone();
    motifs::with_defaults(&mut out);
    alloc::with_defaults(&mut out);
    let own = kind(&out).map_or(serde_json::Value::Null, |k| (k.defaults)());
    crate::spec::list_keys(&mut out.workload.kind_keys, own, WORKLOADS.iter().flat_map(|k| k.keys.iter()).map(|k| k.name));
    out
}

pub fn build(spec: &Spec, traffic: &Traffic, topo: &dyn crate::topology::Topology, servers: &crate::topology::ServerMap) -> SpecResult<Box<dyn Workload>> {
    if !spec.jobs.is_empty() {
        return Ok(Box::new(jobs::Jobs::build(spec, topo, servers)?));
    }
    let message = MessageSize::new(spec, spec.packets_per_message(), spec.message_bytes());
    (kind(spec)?.build)(&BuildCtx { spec, traffic, message })
}

/// The papers' pairing: the communicating servers, split at random into senders and
/// receivers, paired one to one.
fn pairs(spec: &Spec, traffic: &Traffic) -> SpecResult<Vec<(u32, u32)>> {
    let n = traffic.active.len();
    if n < 2 {
        return Err(SpecError::new("traffic.active_servers", n, format!("a {} test needs at least 2 communicating servers", spec.workload.kind)));
    }
    let mut order = traffic.active.to_vec();
    let mut rng = Rng::seed_from_u64(crate::random::seed_for(spec.run.seed, 0x9a12, 0));
    order.shuffle(&mut rng);
    let half = n / 2;
    Ok((0..half).map(|i| (order[i], order[half + i])).collect())
}

/// Message tags of the closed-loop workloads: the pair and whether it is an acknowledgement.
pub fn tag(pair: usize, ack: bool) -> u32 {
    (pair as u32) << 1 | ack as u32
}

pub fn untag(tag: u32) -> (usize, bool) {
    ((tag >> 1) as usize, tag & 1 == 1)
}
