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

/// Shortest hops from `src` to every switch by breadth-first search, over paths with at most
/// one global link on topologies with groups (their notion of a minimal path).
pub fn one_global_distances(topo: &dyn hopsim_core::topology::Topology, src: usize) -> Vec<usize> {
    let n = topo.num_switches();
    let grouped = topo.groups() > 0;
    // State: (switch, global links used).
    let mut dist = vec![[usize::MAX; 2]; n];
    dist[src][0] = 0;
    let mut queue = std::collections::VecDeque::from([(src, 0usize)]);
    while let Some((s, g)) = queue.pop_front() {
        for p in 0..topo.network_ports(s) {
            let Some(peer) = topo.neighbour(s, p) else { continue };
            let t = peer.switch as usize;
            let ng = g + usize::from(grouped && topo.group_of(s) != topo.group_of(t));
            if ng <= 1 && dist[t][ng] == usize::MAX {
                dist[t][ng] = dist[s][g] + 1;
                queue.push_back((t, ng));
            }
        }
    }
    dist.iter().map(|d| d[0].min(d[1])).collect()
}
