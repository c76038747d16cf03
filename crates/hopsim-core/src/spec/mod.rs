//! The experiment file (docs/experiment-file.md) as typed Rust values.
//!
//! Parsing goes through serde so that unknown keys and wrong types are caught with their
//! dotted path; `validate` then checks ranges and combinations and names the key at fault.

mod aries_mode;
mod jobs;
mod keys;
mod link;
mod link_class;
mod nic;
mod parse;
mod validate;
pub mod workload;

pub use aries_mode::AriesMode;
pub use jobs::{job_routing_modes, AllocationSpec, ALLOCATION_TABLE_KEYS, AppAwareSpec, JobSpec, JobWorkloadSpec, APP_AWARE, APP_AWARE_KEYS, CRAY_DEFAULT, JOB_WORKLOAD_KEYS};
pub use keys::{keys_json, list_keys, read_listed_keys, read_own_keys, unknown_key, Key};
pub use link::{check_bandwidth as link_check_bandwidth, LinkClassSpec};
pub use link_class::{LinkClass, LINK_CLASS_NAMES};
pub use nic::{EjectionVcs, InjectionRule, NicSpec, ProtocolKind, PROTOCOL_KEYS};
pub use parse::{from_json_str, from_toml_str, parse_json, parses};
pub use validate::{seal, validations, Validated, MIN_MESSAGE_RATE};
pub use workload::{MessageSpec, WorkloadSpec};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    #[serde(default = "default_name")]
    pub name: String,
    pub topology: TopologySpec,
    #[serde(default)]
    pub link: LinkSpec,
    #[serde(default)]
    pub router: RouterSpec,
    #[serde(default)]
    pub packet: PacketSpec,
    #[serde(default)]
    pub routing: RoutingSpec,
    /// Needed by the open-loop workload (its `load`); jobs and closed-loop workloads read
    /// its keys only when given.
    #[serde(default)]
    pub traffic: TrafficSpec,
    #[serde(default)]
    pub message: MessageSpec,
    #[serde(default)]
    pub workload: WorkloadSpec,
    #[serde(default)]
    pub nic: NicSpec,
    #[serde(default)]
    pub run: RunSpec,
    /// Applications on the network (`jobs.rs`); when given, they replace `[workload]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<JobSpec>,
    /// Sweeps are expanded by the Python layer, which leaves the table in each run's spec: a
    /// run ignores it but for which choices it sweeps (`keys_left_to_others`).
    #[serde(default, skip_serializing)]
    pub sweep: Option<serde_json::Value>,
}

fn default_name() -> String {
    "experiment".into()
}

/// `[topology]`: the keys every kind reads, and the kinds' own keys as written. Each kind
/// reads and checks its own with its key type (`topology::own_keys`); unknown keys are
/// refused there, since serde cannot tell them from a kind's here (a kind may name a key
/// `groups` or `k`: nothing here takes it).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TopologySpec {
    pub kind: String,
    /// Servers per switch: the kind's default unless given (4 on Aries, as on a Cray XC
    /// blade); read it with `servers_per_switch_or`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers_per_switch: Option<usize>,
    /// The kinds' own keys (`dims`, `groups`, `q`, ...), as written.
    #[serde(flatten, default)]
    pub kind_keys: std::collections::BTreeMap<String, serde_json::Value>,
}

impl TopologySpec {
    /// A kind's key as the experiment file gives it (`[4, 4]`), for messages that echo it;
    /// the kind itself reads its keys with its key type (`topology::own_keys`).
    pub fn given(&self, key: &str) -> Option<String> {
        self.kind_keys.get(key).filter(|v| !v.is_null()).map(keys::shown)
    }
}

/// Unknown keys are not refused by serde here: they land in `classes`, which `validate`
/// checks (a `[link.<class>]` table per link class, nothing else).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LinkSpec {
    /// Cycles for a phit to cross a link (switch-switch and server-switch); the default of
    /// every link class.
    #[serde(default = "one_u32")]
    pub latency: u32,
    /// Physical bandwidth of one channel; with `packet.bytes` turns cycles into seconds.
    #[serde(default)]
    pub gbytes_per_s: Option<f64>,
    /// `[link.<class>]` tables (`link::LinkClassSpec`), as written; see `LinkSpec::class_specs`.
    #[serde(flatten, default)]
    pub classes: std::collections::BTreeMap<String, serde_json::Value>,
}

impl Default for LinkSpec {
    fn default() -> Self {
        LinkSpec { latency: 1, gbytes_per_s: None, classes: Default::default() }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouterSpec {
    #[serde(default = "two")]
    pub vcs: usize,
    /// Packets per VC (virtual cut-through needs at least one).
    #[serde(default = "four")]
    pub input_buffer: usize,
    /// Packets per VC at each output port.
    #[serde(default = "two")]
    pub output_buffer: usize,
    /// Overrides `input_buffer` with a size in phits (wormhole studies use this).
    #[serde(default)]
    pub input_buffer_phits: Option<usize>,
    #[serde(default)]
    pub output_buffer_phits: Option<usize>,
    #[serde(default = "vct")]
    pub flow_control: String,
    /// Crossbar speedup: phits per cycle an input can push through the crossbar.
    #[serde(default = "one")]
    pub speedup: usize,
    /// Cycles from a head's arrival to its first allocation attempt (route computation).
    #[serde(default = "one_u32")]
    pub pipeline_delay: u32,
    /// Which of several VCs with equally much free space a head (or a server injecting)
    /// takes when joining the shortest queue: "lowest" (first candidate port, lowest VC) or
    /// "random" (uniformly among the tied, as CAMINOS's `Shortest` followed by `Random`).
    #[serde(default = "lowest")]
    pub jsq_tie_break: String,
    /// Whether VC allocation is a stage of its own before switch allocation (`staging::VcAllocation`).
    #[serde(default = "with_switch")]
    pub vc_allocation: String,
    /// When the next packet of an input VC is routed (`staging::NextHeadRouting`).
    #[serde(default = "on_arrival")]
    pub next_head_routing: String,
    /// Which allocator gives heads output VCs (`allocation::VcAllocator`).
    #[serde(default = "input_first")]
    pub vc_allocator: String,
    /// Which allocator matches input ports to output ports (`allocation::SwitchAllocator`).
    #[serde(default = "input_first")]
    pub switch_allocator: String,
    /// Rounds of iSLIP per allocation (for the allocators that are iSLIP).
    #[serde(default = "one_u32")]
    pub islip_iterations: u32,
}

impl Default for RouterSpec {
    fn default() -> Self {
        RouterSpec {
            vcs: 2,
            input_buffer: 4,
            output_buffer: 2,
            input_buffer_phits: None,
            output_buffer_phits: None,
            flow_control: "vct".into(),
            speedup: 1,
            pipeline_delay: 1,
            jsq_tie_break: lowest(),
            vc_allocation: with_switch(),
            next_head_routing: on_arrival(),
            vc_allocator: input_first(),
            switch_allocator: input_first(),
            islip_iterations: 1,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PacketSpec {
    #[serde(default = "sixteen")]
    pub phits: usize,
    /// Size of a packet in bytes; gives the bytes per phit for physical units.
    #[serde(default)]
    pub bytes: Option<f64>,
}

impl Default for PacketSpec {
    fn default() -> Self {
        PacketSpec { phits: 16, bytes: None }
    }
}

/// `[routing]`: the keys every algorithm reads, and the algorithms' own keys as written.
/// Each algorithm and VC policy reads and checks its own with its key type
/// (`routing::own_keys`, `vc::own_keys`); unknown keys are refused there, since serde cannot
/// tell them from a component's here.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoutingSpec {
    #[serde(default = "dor")]
    pub algorithm: String,
    #[serde(default = "auto_policy")]
    pub vc_policy: String,
    /// VCs a server may inject into in its switch's input buffer: "policy" (those the VC
    /// policy gives the first hop, e.g. VC 0 of the ladder) or "any" (every VC, as servers
    /// do in CAMINOS). Injection buffers take no part in deadlock, so both are safe.
    #[serde(default = "policy")]
    pub injection_vcs: String,
    /// VCs of a server's port a packet may take at its destination switch: "any" or
    /// "arrival" (`EjectionVcs`).
    #[serde(default = "any")]
    pub ejection_vcs: String,
    /// How far a switch's view of the queue behind its output ports reaches, for the
    /// routings that read queues: "next_input" or "own_output" (`QueueReach`).
    #[serde(default = "next_input")]
    pub queue_reach: String,
    /// The algorithms' and VC policies' own keys (`ugal_threshold`, `mode`,
    /// `ladder_vcs_per_step`, ...), as written.
    #[serde(flatten, default)]
    pub algorithm_keys: std::collections::BTreeMap<String, serde_json::Value>,
}

/// The `[routing]` keys of every algorithm and VC policy (the others are declared by the
/// components that read them).
pub const ROUTING_TABLE_KEYS: &[Key] = &[
    Key { name: "algorithm", default: "\"dor\"", meaning: "the routing algorithm" },
    Key { name: "vc_policy", default: "\"auto\"", meaning: "the VC policy (auto: the sound one for the algorithm)" },
    Key { name: "injection_vcs", default: "\"policy\"", meaning: "VCs a server injects into: policy, any, any_first, any_round_robin or any_random" },
    Key { name: "queue_reach", default: "\"next_input\"", meaning: "how far a switch's view of the queue behind its ports reaches, for routings that read queues: next_input (its output buffer plus the next input buffer as credits say) or own_output (its output buffer only, as SST Merlin's routers)" },
    Key { name: "ejection_vcs", default: "\"any\"", meaning: "VCs of a server's port a packet may take at its destination switch: any or policy (the VCs of the packet's class under the VC policy)" },
];

impl Default for RoutingSpec {
    fn default() -> Self {
        RoutingSpec { algorithm: "dor".into(), vc_policy: "auto".into(), injection_vcs: policy(), ejection_vcs: any(), queue_reach: next_input(), algorithm_keys: Default::default() }
    }
}

/// `[traffic]`: the keys every pattern reads, and the patterns' own keys as written. Each
/// pattern reads its own with its key type (`traffic::own_keys`); unknown keys are refused
/// there, since serde cannot tell them from a pattern's here.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TrafficSpec {
    #[serde(default = "uniform")]
    pub pattern: String,
    /// Offered phits per (active) server per cycle; required by open-loop workloads.
    #[serde(default)]
    pub load: Option<f64>,
    /// How many servers take part (any pattern).
    #[serde(default)]
    pub active_servers: Option<usize>,
    #[serde(default)]
    pub active_fraction: Option<f64>,
    /// A burst of other traffic: during `[start, start + cycles)` the open-loop workload
    /// sends `pattern` at `load` instead (to watch a network react to a transient).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<BurstSpec>,
    /// The patterns' own keys (`shift`, `adv_offset`, `hotspots`, ...), as written.
    #[serde(flatten, default)]
    pub pattern_keys: std::collections::BTreeMap<String, serde_json::Value>,
}

impl Default for TrafficSpec {
    fn default() -> Self {
        TrafficSpec { pattern: uniform(), load: None, active_servers: None, active_fraction: None, burst: None, pattern_keys: Default::default() }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BurstSpec {
    pub pattern: String,
    pub load: f64,
    /// First cycle of the burst.
    pub start: u64,
    pub cycles: u64,
}

/// The keys that decide how a run is carried out, never what it computes: two specs that
/// differ only in these have the same results, so a finished run or a checkpoint of one
/// stands for the other.
pub const NOT_IN_RESULTS: [&str; 2] = ["run.threads", "run.checkpoint_every"];

/// The spec as its results depend on it: without the keys of `NOT_IN_RESULTS`.
pub fn results_view(spec: &Spec) -> serde_json::Value {
    let mut v = serde_json::to_value(spec).expect("a spec always encodes");
    for key in NOT_IN_RESULTS {
        let (table, name) = key.split_once('.').expect("dotted");
        if let Some(t) = v.get_mut(table).and_then(|t| t.as_object_mut()) {
            t.remove(name);
        }
    }
    v
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    #[serde(default = "default_warmup")]
    pub warmup: u64,
    #[serde(default = "default_cycles")]
    pub cycles: u64,
    #[serde(default = "one_u64")]
    pub seed: u64,
    /// Cycles without any phit moving, with packets in the network, that count as deadlock.
    #[serde(default = "default_watchdog")]
    pub watchdog: u64,
    /// Width of the accepted-load-over-time bins.
    #[serde(default = "default_bin")]
    pub temporal_bin: u64,
    /// Threads that share one run (engine/parallel.rs); absent: chosen from the network's
    /// size and the cores free. Results do not depend on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Cycles the run may go on past the measured window, its sources still sending
    /// (unmeasured) unless `drain_quiet`, until every measured packet has been delivered, so
    /// that the mean latency counts the slowest of them too (BookSim2's `sim_type = latency`,
    /// "Draining all recorded packets", trafficmanager.cpp). 0, the default: the run ends
    /// with the window, and a measured packet still in flight then is left out of the
    /// latencies.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub drain: u64,
    /// Which packets the window measures: those generated in it (the default), those
    /// delivered in it (`"received"`), or those
    /// whose head leaves the source queue in it, each still timed from its generation
    /// (`"injected"`: BookSim2's `sim_type = throughput`, which makes a packet only when its
    /// source queue's previous one is out and records it by the cycle it is made,
    /// trafficmanager.cpp `_Inject` and `_GeneratePacket`; its end-of-run drain then waits
    /// for the recorded packets alone). With `drain`, the run goes on until every packet
    /// measured so is delivered; a source over its share then adds to the latencies the
    /// waits of the packets it sent in the window, not of those it queued in it.
    #[serde(default, skip_serializing_if = "Measure::is_generated")]
    pub measure: Measure,
    /// With `drain` and `measure = "injected"`: past the window no NIC starts a packet (none
    /// is measured any more), so the measured packets drain through a network emptying,
    /// as in BookSim2's end-of-run drain, which stops injecting (trafficmanager.cpp,
    /// "Draining remaining packets", `_empty_network`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drain_quiet: bool,
    /// Cycles between checkpoints of the run's whole state (engine/checkpoint.rs), from
    /// which a run that was stopped goes on with the results of one that was not; 0, the
    /// default: none. Like `threads`, it does not change the results.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub checkpoint_every: u64,
}

/// Which packets `run` measures (`run.measure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Generated in the window.
    #[default]
    Generated,
    /// Head injected (out of the source queue) in the window.
    Injected,
    /// Delivered in the window, whenever created (SST Merlin's offered-load endpoints,
    /// `offeredload/offered_load.cc`, average every packet received after the warm-up).
    Received,
}

impl Measure {
    fn is_generated(&self) -> bool {
        *self == Measure::Generated
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            warmup: default_warmup(),
            cycles: default_cycles(),
            seed: 1,
            watchdog: default_watchdog(),
            temporal_bin: default_bin(),
            threads: None,
            drain: 0,
            measure: Measure::Generated,
            drain_quiet: false,
            checkpoint_every: 0,
        }
    }
}

fn one() -> usize {
    1
}
fn two() -> usize {
    2
}
fn four() -> usize {
    4
}
fn sixteen() -> usize {
    16
}
fn one_u32() -> u32 {
    1
}
fn one_u64() -> u64 {
    1
}
fn vct() -> String {
    "vct".into()
}
fn next_input() -> String {
    "next_input".into()
}

fn any() -> String {
    "any".into()
}

fn policy() -> String {
    "policy".into()
}

fn with_switch() -> String {
    "with_switch".into()
}

fn on_arrival() -> String {
    "on_arrival".into()
}

fn input_first() -> String {
    "input_first".into()
}

fn lowest() -> String {
    "lowest".into()
}
fn dor() -> String {
    "dor".into()
}
/// The sound VC policy for the chosen algorithm (dateline for DOR, escape VCs for the
/// adaptive ones, phase x dateline for the two-phase ones).
fn auto_policy() -> String {
    "auto".into()
}
fn uniform() -> String {
    "uniform".into()
}
fn default_warmup() -> u64 {
    10_000
}
fn default_cycles() -> u64 {
    50_000
}
fn default_watchdog() -> u64 {
    20_000
}
fn default_bin() -> u64 {
    1_000
}

impl TopologySpec {
    /// `servers_per_switch`, or the topology's default when the spec does not give it.
    pub fn servers_per_switch_or(&self, default: usize) -> usize {
        self.servers_per_switch.unwrap_or(default)
    }
}

/// Flow control as the engine sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowControl {
    /// A packet moves on only when the next buffer has room for all of it.
    VirtualCutThrough,
    /// Per-phit credits; a packet may span several routers.
    Wormhole,
}

impl Spec {
    /// The keys of a table that the chosen component may leave to the others of its family:
    /// those they read (`family`) when the experiment sweeps the choice (`selector`, a dotted
    /// key such as `routing.algorithm` or `jobs[0].workload.motif`), so that one table
    /// serves every run of the sweep; none otherwise, and a key of another component is
    /// refused as one the chosen component does not read.
    pub fn keys_left_to_others<'k>(&self, selector: &str, family: impl Iterator<Item = &'k str>) -> Vec<&'k str> {
        let swept = self.sweep.as_ref().and_then(|s| s.as_object()).is_some_and(|table| {
            // The sweep names array entries as `jobs.0.workload.motif`.
            let plain = selector.replace('[', ".").replace(']', "");
            table.contains_key(selector) || table.contains_key(&plain)
        });
        if swept {
            family.collect()
        } else {
            Vec::new()
        }
    }

    pub fn flow_control(&self) -> FlowControl {
        if self.router.flow_control == "wormhole" {
            FlowControl::Wormhole
        } else {
            FlowControl::VirtualCutThrough
        }
    }

    /// Bytes a phit carries, if known: `nic.flit_bytes` under a NIC protocol (a flit is a
    /// phit), else `packet.bytes / packet.phits`.
    pub fn bytes_per_phit(&self) -> Option<f64> {
        if self.nic.kind() != ProtocolKind::None {
            Some(self.nic.flit_bytes as f64)
        } else {
            self.packet.bytes.map(|b| b / self.packet.phits as f64)
        }
    }

    /// Nanoseconds a cycle lasts, given the bandwidth of the network's fastest link class
    /// (one phit per cycle on it), when the phit's bytes are known.
    pub fn cycle_ns(&self, fastest_gbytes_per_s: Option<f64>) -> Option<f64> {
        fastest_gbytes_per_s.zip(self.bytes_per_phit()).map(|(g, b)| b / g)
    }

    /// The allocation staging the router keys name (`validate` refuses any other names).
    pub fn router_staging(&self) -> crate::staging::Staging {
        use crate::staging::{NextHeadRouting, VcAllocation};
        crate::staging::Staging {
            vc_allocation: VcAllocation::from_name(&self.router.vc_allocation).unwrap_or(VcAllocation::WithSwitch),
            next_head: NextHeadRouting::from_name(&self.router.next_head_routing).unwrap_or(NextHeadRouting::OnArrival),
        }
    }

    /// The VC allocator the router keys name (`validate` refuses any other).
    pub fn vc_allocator(&self) -> crate::allocation::VcAllocator {
        use crate::allocation::VcAllocator;
        VcAllocator::from_name(&self.router.vc_allocator, self.router.islip_iterations).unwrap_or(VcAllocator::InputFirst)
    }

    /// The switch allocator the router keys name (`validate` refuses any other).
    pub fn switch_allocator(&self) -> crate::allocation::SwitchAllocator {
        use crate::allocation::SwitchAllocator;
        SwitchAllocator::from_name(&self.router.switch_allocator, self.router.islip_iterations).unwrap_or(SwitchAllocator::InputFirst)
    }

    // The products only when no phits are given: `router.output_buffer` may then be any
    // number (it is not read), and multiplying it could overflow.
    pub fn input_buffer_phits(&self) -> usize {
        self.router.input_buffer_phits.unwrap_or_else(|| self.router.input_buffer * self.packet.phits)
    }

    pub fn output_buffer_phits(&self) -> usize {
        self.router.output_buffer_phits.unwrap_or_else(|| self.router.output_buffer * self.packet.phits)
    }
}
