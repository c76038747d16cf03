//! What a registered component (topology kind, routing algorithm, VC policy, traffic pattern,
//! workload, motif) declares about the keys it reads, next to its code: `hopsim list` prints
//! it and docs/experiment-file.md is checked against it (`tests/suite/docs_keys.rs`).

/// A key of an experiment-file table that a component reads.
#[derive(Debug)]
pub struct Key {
    pub name: &'static str,
    /// As written in an experiment file (and in docs/experiment-file.md's default column),
    /// or `required`.
    pub default: &'static str,
    pub meaning: &'static str,
}

impl Key {
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({"name": self.name, "default": self.default, "meaning": self.meaning})
    }
}

/// The keys as JSON, for `components_json`.
pub fn keys_json(keys: &[Key]) -> Vec<serde_json::Value> {
    keys.iter().map(Key::json).collect()
}
