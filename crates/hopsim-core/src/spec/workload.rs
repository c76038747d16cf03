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

/// `[workload]`: the kind, and the keys the kinds read, as written. The kinds and their keys
/// are the workload layer's (`workload::WORKLOADS`, each kind's key type in its file), which
/// reads and checks them (`workload::check`): the spec cannot name the code it describes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkloadSpec {
    #[serde(default = "bernoulli")]
    pub kind: String,
    /// The kinds' own keys (`iterations`, `window`, ...), as written.
    #[serde(flatten, default)]
    pub kind_keys: std::collections::BTreeMap<String, serde_json::Value>,
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec { kind: bernoulli(), kind_keys: Default::default() }
    }
}

/// The `[workload]` keys of every kind.
pub const TABLE_KEYS: &[Key] = &[Key { name: "kind", default: "\"bernoulli\"", meaning: "what servers send and when" }];

fn bernoulli() -> String {
    "bernoulli".into()
}
