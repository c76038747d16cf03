//! Per-job results of a run with `[[jobs]]` (docs/engine-contract.md).

use serde::Serialize;

#[derive(Debug, Clone, Serialize, Default)]
pub struct JobResult {
    pub name: String,
    pub motif: String,
    /// Cross traffic, not the application.
    pub background: bool,
    /// The routing mode asked for (`app_aware`, an Aries mode, or `default`: the run's).
    pub routing_mode: String,
    pub ranks: u32,
    /// The allocation: rank i ran on `servers[i]`, in group `groups[i]`.
    pub servers: Vec<u32>,
    pub groups: Vec<u32>,
    /// All ranks did all iterations (the background: never).
    pub complete: bool,
    /// Per iteration: from its first rank starting it (or the previous iteration's end, if
    /// later: a rank done early starts the next one while others still work) to its last
    /// rank finishing it.
    pub iteration_start: Vec<u64>,
    pub iteration_cycles: Vec<u64>,
    /// Per rank: from the job's start to the rank's last iteration done (0 if not done).
    pub rank_cycles: Vec<u64>,
    /// Every message of the job (not the background's), creation to complete at its
    /// destination, in completion order.
    pub message_latency: Vec<u64>,
    pub messages: u64,
    pub bytes: u64,
    /// Quartiles and mean of the latency of the job's packets (creation to last phit ejected;
    /// requests and responses under a `nic.protocol`), over the whole run.
    pub packets: u64,
    pub packet_latency_q1: f64,
    pub packet_latency_median: f64,
    pub packet_latency_q3: f64,
    pub packet_latency_mean: f64,
    /// Bytes each routing mode carried, by mode name (app-aware: the share of each).
    pub mode_bytes: std::collections::BTreeMap<String, u64>,
    /// With `jobs[].timeline`: per rank, its calls in the order it made them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<Vec<Call>>,
    /// A replayed trace's events that could not be run, per kind (skipped, not simulated).
    pub unsupported_events: std::collections::BTreeMap<String, u64>,
    /// NIC counters of each rank's server over the whole run.
    pub request_flits: Vec<u64>,
    pub stalled_cycles: Vec<u64>,
    pub request_packets: Vec<u64>,
    pub responses_received: Vec<u64>,
    pub cumulative_request_latency: Vec<u64>,
}

/// What a rank was doing, as the timeline records it.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// An iteration starts at `start`; `end` is when the rank finished it.
    Iteration,
    /// A message of `value` bytes posted to rank `peer` (it does not block).
    Send,
    /// Waiting from `start` to `end` for message number `value` of those rank `peer` sends
    /// this rank.
    Recv,
    /// Computation from `start` to `end`.
    Compute,
}

/// One call of a rank, in cycles from the start of the run.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Call {
    pub call: CallKind,
    pub start: u64,
    pub end: u64,
    pub peer: u32,
    pub value: u64,
}
