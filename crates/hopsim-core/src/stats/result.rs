//! The result of one run, as the Python layer and Rust users receive it (docs/engine-contract.md).

use serde::Serialize;

#[derive(Debug, Clone, Serialize, Default)]
pub struct Metrics {
    pub offered_load: f64,
    pub generated_load: f64,
    pub accepted_load: f64,
    pub packet_latency_mean: f64,
    pub packet_latency_p50: f64,
    pub packet_latency_p99: f64,
    pub packet_latency_max: f64,
    pub network_latency_mean: f64,
    pub queueing_latency_mean: f64,
    pub hops_mean: f64,
    /// Share of measured packets routed through an intermediate (non-minimally).
    pub nonminimal_fraction: f64,
    /// Analytic zero-load latency for the mean distance of this traffic (docs/model.md).
    pub zero_load_latency: f64,
    pub packets_generated: u64,
    pub packets_injected: u64,
    pub packets_delivered: u64,
    pub packets_measured_delivered: u64,
    pub packets_in_flight_end: u64,
    pub packets_queued_end: u64,
    /// Packets refused at their source because its queue held `nic.source_queue_limit`.
    pub packets_dropped_at_source: u64,
    pub phits_generated: u64,
    pub phits_delivered: u64,
    pub phits_in_flight_end: u64,
    pub phits_queued_end: u64,
    pub phit_hops: u64,
    pub phits_conserved: bool,
    pub credits_conserved: bool,
    pub deadlock: bool,
    pub deadlock_cycle: Option<u64>,
    pub deadlock_where: String,
    pub cycles: u64,
    pub warmup: u64,
    pub switches: u64,
    pub servers: u64,
    pub active_servers: u64,
    pub wall_seconds: f64,
    pub router_cycles_per_second: f64,
    pub phits_moved_per_second: f64,
    pub link_load_max: f64,
    pub link_load_mean: f64,
    pub link_load_cv: f64,
    /// Stability category (1 stable, 2 recovers from drops, 3 drops or oscillates; 0 too
    /// short to judge) of the accepted load over the measured bins (stats/stability.rs).
    pub stability_category: u8,
    /// Drop of the smoothed accepted load from its best window, 0..1.
    pub stability_drop: f64,
    pub stability_dips: u32,
    // Messages (a single packet is a message of one packet).
    pub messages_measured_delivered: u64,
    pub message_latency_mean: f64,
    pub message_latency_p50: f64,
    pub message_latency_p99: f64,
    pub message_latency_max: f64,
    /// Acknowledgements (ping_pong, bandwidth): their count and mean latency; the
    /// message_latency_* columns count data messages only.
    pub acks_measured_delivered: u64,
    pub ack_latency_mean: f64,
    /// Packets that reached their NIC before an earlier packet of the same message.
    pub packets_out_of_order: u64,
    /// Mean cycles a held packet waited in the reorder buffer for the gap to fill.
    pub reorder_delay_mean: f64,
    /// Most packets one NIC held in its reorder buffer at once.
    pub reorder_buffer_max: u64,
    pub workload: String,
    /// A closed-loop workload did all its iterations within run.cycles.
    pub workload_complete: bool,
    /// Samples of a closed-loop workload (round trips, windows) and their duration.
    pub samples: u64,
    pub sample_cycles_mean: f64,
    pub sample_cycles_p50: f64,
    pub sample_cycles_p99: f64,
    /// Mean payload rate of the samples (bandwidth test: per-pair bandwidth).
    pub sample_phits_per_cycle_mean: f64,
    /// Most switch-to-switch hops a measured packet took (the distribution: `hop_histogram`).
    pub hops_max: u64,
    /// NIC counters summed over the active servers (measured window): stalled cycles per
    /// request flit (the paper's s) and mean request-to-response latency (its L; NaN without
    /// a `nic.protocol`).
    pub nic_stalls_per_flit: f64,
    pub nic_request_latency_mean: f64,
    /// Over the whole run, all servers: requests sent (every packet without a protocol),
    /// responses sent and received, and the most requests one NIC had without a response.
    pub requests_sent: u64,
    pub responses_sent: u64,
    pub responses_received: u64,
    pub outstanding_max: u64,
    // Physical units, when link.gbytes_per_s and packet.bytes are given.
    pub message_latency_mean_us: Option<f64>,
    pub ack_latency_mean_us: Option<f64>,
    pub sample_mean_us: Option<f64>,
    pub sample_gbytes_per_s_mean: Option<f64>,
    pub cycle_ns: Option<f64>,
    pub packet_latency_mean_us: Option<f64>,
    pub packet_latency_p99_us: Option<f64>,
    pub accepted_gbytes_per_s: Option<f64>,
    /// Per routing mode (`aries`): `packets_<mode>` measured packets delivered and
    /// `nonminimal_fraction_<mode>`, for the modes that carried any.
    #[serde(flatten)]
    pub per_mode: std::collections::BTreeMap<String, f64>,
    /// Per link class of the topology (`row`, `column`, `global`, `dim0`, ...):
    /// `link_load_mean_<class>` and `link_load_max_<class>` over the measured window.
    #[serde(flatten)]
    pub per_link_class: std::collections::BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct HistogramTable {
    pub lower: Vec<u64>,
    pub upper: Vec<u64>,
    pub count: Vec<u64>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct Temporal {
    pub bin_cycles: u64,
    pub start: Vec<u64>,
    pub measured: Vec<bool>,
    pub offered_load: Vec<f64>,
    pub accepted_load: Vec<f64>,
    pub latency_mean: Vec<f64>,
    /// Of the packets that left their NIC in the bin (and were delivered), the share routed
    /// non-minimally (NaN for a bin with none): what adaptive routing decided, when.
    pub nonminimal_fraction: Vec<f64>,
}

/// Switch-to-switch channels and their load over the measured window.
#[derive(Debug, Clone, Serialize, Default)]
pub struct LinkTable {
    pub switch: Vec<u32>,
    pub port: Vec<u16>,
    /// The far end of the link: its switch and the input port it arrives on.
    pub to_switch: Vec<u32>,
    pub to_port: Vec<u16>,
    pub dim: Vec<i32>,
    /// The link's class (`LinkClass::name`: "dim0", "local", "global", "row", ...).
    pub class: Vec<&'static str>,
    pub direction: Vec<i8>,
    pub phits: Vec<u64>,
    pub load: Vec<f64>,
}

/// Per active server, over the measured window (`outstanding_max`: the whole run).
#[derive(Debug, Clone, Serialize, Default)]
pub struct CounterTable {
    pub server: Vec<u32>,
    pub request_flits: Vec<u64>,
    pub stalled_cycles: Vec<u64>,
    pub request_packets: Vec<u64>,
    pub responses_received: Vec<u64>,
    pub cumulative_request_latency: Vec<u64>,
    pub responses_sent: Vec<u64>,
    pub packets: Vec<u64>,
    pub cumulative_packet_latency: Vec<u64>,
    /// stalled_cycles / request_flits (s) and cumulative_request_latency / responses_received (L).
    pub stalls_per_flit: Vec<f64>,
    pub request_latency_mean: Vec<f64>,
    pub outstanding_max: Vec<u32>,
}

/// Measured packets delivered by the hops they took.
#[derive(Debug, Clone, Serialize, Default)]
pub struct HopTable {
    pub hops: Vec<u32>,
    pub packets: Vec<u64>,
}

/// One row per round trip (ping_pong) or window (bandwidth).
#[derive(Debug, Clone, Serialize, Default)]
pub struct SampleTable {
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub iteration: Vec<u32>,
    pub start: Vec<u64>,
    pub cycles: Vec<u64>,
    pub phits: Vec<u64>,
    pub phits_per_cycle: Vec<f64>,
    /// From the sample's start to its data complete (ping_pong: the message one way).
    pub message_cycles: Vec<u64>,
    /// The sender's counters over the sample: request packets (p), request flits (f), stalled
    /// cycles per flit (s), mean request-to-response latency (L), and the paper's estimate of
    /// the message time from them, (p + 512) / 1024 x L + f x (s + 1).
    pub request_packets: Vec<u64>,
    pub request_flits: Vec<u64>,
    pub stalls_per_flit: Vec<f64>,
    pub request_latency_mean: Vec<f64>,
    pub model_cycles: Vec<f64>,
    pub us: Vec<f64>,
    pub gbytes_per_s: Vec<f64>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct RunResult {
    pub metrics: Metrics,
    pub latency_histogram: HistogramTable,
    pub temporal: Temporal,
    pub links: LinkTable,
    pub switch_coords: Vec<Vec<usize>>,
    pub dims: Vec<usize>,
    pub counters: CounterTable,
    pub samples: SampleTable,
    pub hop_histogram: HopTable,
    /// One per `[[jobs]]` entry, in the file's order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<super::jobs::JobResult>,
    /// The run's files the engine wrote itself, by name (`links.csv`, `counters.csv`,
    /// `topology.json`: engine/rows.rs), to move into the run's folder; their tables and
    /// `switch_coords` are then empty here.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub written: std::collections::BTreeMap<String, String>,
}
