//! `[message]` and `[workload]`: what servers send, beyond single packets at a fixed rate.

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
        self.kind == "bernoulli"
    }
}

fn bernoulli() -> String {
    "bernoulli".into()
}
fn ten() -> u32 {
    10
}
