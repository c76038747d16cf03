//! `[message]` and `[workload]`: what servers send, beyond single packets at a fixed rate.

use super::Key;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct MessageSpec {
    /// Message size in bytes; cut into packets of `packet.bytes` (the last one padded).
    #[serde(default)]
    pub bytes: Option<f64>,
    /// Or the message size in packets directly.
    #[serde(default)]
    pub packets: Option<usize>,
    /// Deliver the packets of a message to the application in order (reorder buffer at the NIC).
    #[serde(default)]
    pub in_order: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// `bernoulli` (open loop at traffic.load), `ping_pong`, `bandwidth`.
    #[serde(default = "bernoulli")]
    pub kind: String,
    /// `ping_pong`, `bandwidth`: round trips (or windows) per pair.
    #[serde(default = "ten")]
    pub iterations: u32,
    /// `bandwidth`: messages sent before waiting for one acknowledgement.
    #[serde(default = "ten")]
    pub window: u32,
    /// Size of an acknowledgement, in bytes (with packet.bytes) or packets; default one packet.
    #[serde(default)]
    pub ack_bytes: Option<f64>,
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec { kind: bernoulli(), iterations: 10, window: 10, ack_bytes: None }
    }
}

impl WorkloadSpec {
    /// Open-loop workloads offer `traffic.load`; closed-loop ones send when answered.
    pub fn is_open_loop(&self) -> bool {
        workload_kind(&self.kind).is_some_and(|k| !k.closed_loop)
    }

    /// The workload `kind` names, or an error naming `workload.kind` and what is allowed.
    pub fn workload(&self) -> crate::error::SpecResult<Workload> {
        Workload::from_name(&self.kind).ok_or_else(|| crate::error::SpecError::new("workload.kind", format!("{:?}", self.kind), format!("allowed: {}", workload_names())))
    }
}

/// A `workload.kind` as the registry knows it: its name, one line on it, whether it is
/// closed-loop (senders wait for answers; its results are samples of round trips or
/// windows) and the `[workload]` keys it reads. `workload::build` makes it; Python reads the
/// list through `components_json`.
pub struct WorkloadKind {
    pub name: &'static str,
    pub about: &'static str,
    pub closed_loop: bool,
    pub keys: &'static [Key],
}

const ITERATIONS: Key = Key { name: "iterations", default: "10", meaning: "round trips or windows per pair" };
const ACK_BYTES: Key = Key { name: "ack_bytes", default: "one packet", meaning: "size of an acknowledgement, in bytes" };

registry! {
    /// The workloads, as `workload.kind` names them: one line each, its variant (what
    /// `workload::build` matches on) and its entry.
    enum Workload;
    /// Every `workload.kind`, in the order `hopsim list` and error messages give them.
    const WORKLOADS: [WorkloadKind] = {
        Bernoulli => WorkloadKind { name: "bernoulli", about: "messages at traffic.load, at Bernoulli-drawn cycles", closed_loop: false, keys: &[] },
        PingPong => WorkloadKind { name: "ping_pong", about: "a message, answered by an acknowledgement; one sample per round trip", closed_loop: true, keys: &[ITERATIONS, ACK_BYTES] },
        Bandwidth => WorkloadKind {
            name: "bandwidth",
            about: "window messages, then one acknowledgement; one sample per window",
            closed_loop: true,
            keys: &[ITERATIONS, Key { name: "window", default: "10", meaning: "messages per window" }, ACK_BYTES],
        },
    }
}

/// The `[workload]` keys of every kind.
pub const TABLE_KEYS: &[Key] = &[Key { name: "kind", default: "\"bernoulli\"", meaning: "what servers send and when" }];

/// The workload `workload.kind` names.
pub fn workload_kind(name: &str) -> Option<&'static WorkloadKind> {
    WORKLOADS.iter().find(|k| k.name == name)
}

/// Every `workload.kind`, comma-separated.
pub fn workload_names() -> String {
    WORKLOADS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

fn bernoulli() -> String {
    "bernoulli".into()
}
fn ten() -> u32 {
    10
}
