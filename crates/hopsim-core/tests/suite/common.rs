#![allow(dead_code)]
use hopsim_core::{simulate, spec, RunResult};

/// Parse a TOML spec and run it, checking the invariants every run must keep.
pub fn run(toml: &str) -> RunResult {
    let spec = spec::from_toml_str(toml).unwrap_or_else(|e| panic!("bad spec: {e}\n{toml}"));
    let r = simulate(&spec).unwrap_or_else(|e| panic!("bad spec: {e}"));
    assert!(r.metrics.phits_conserved, "phits not conserved: {}", r.metrics.deadlock_where);
    assert!(r.metrics.credits_conserved, "credits not conserved: {}", r.metrics.deadlock_where);
    assert!(r.links.load.iter().all(|&l| l <= 1.0 + 1e-9), "a channel carried more than 1 phit per cycle");
    r
}

pub fn torus(dims: &str, extra: &str) -> String {
    format!("[topology]\nkind = \"torus\"\ndims = {dims}\n{extra}")
}
