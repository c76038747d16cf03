//! Minimal routing from a topology's wiring alone, for topologies that bring no minimal step
//! of their own and no grid (e.g. Slim Fly): a next-hop table filled by one breadth-first
//! search per destination. Each (switch, destination) pair has one next hop, a port on a
//! shortest path (the first the search finds), so a packet's path is fixed by its two ends.
//! The table has one entry per pair of switches: topologies that use it keep to
//! `topology::MAX_WIRING_ROUTED_SWITCHES`.

use super::{Hop, MinimalStep, RouteState, Rng, NO_DIM};
use crate::topology::{Topology, MAX_WIRING_ROUTED_SWITCHES as MAX_SWITCHES};
use std::collections::VecDeque;

/// The wiring's step registered for the networks of `topology`, a kind without a grid or a
/// structure of its own to route by.
pub const fn on(topology: &'static crate::topology::Kind) -> super::MinimalStepKind {
    super::MinimalStepKind { topology, build: |topo| std::sync::Arc::new(GraphMinimal::new(&**topo)) }
}

pub struct GraphMinimal {
    switches: usize,
    /// `next[target * switches + cur]`: the port of `cur` towards `target`.
    next: Vec<u16>,
}

impl GraphMinimal {
    pub fn new(topo: &dyn Topology) -> Self {
        let n = topo.num_switches();
        assert!(n <= MAX_SWITCHES, "graph_minimal: {n} switches; the topology should refuse more than {MAX_SWITCHES}");
        // Incoming channels of each switch: (neighbour, the neighbour's port towards it).
        let mut into: Vec<Vec<(u32, u16)>> = vec![Vec::new(); n];
        for s in 0..n {
            for p in 0..topo.network_ports(s) {
                if let Some(peer) = topo.neighbour(s, p) {
                    into[peer.switch as usize].push((s as u32, p as u16));
                }
            }
        }
        let mut next = vec![u16::MAX; n * n];
        let mut seen = vec![false; n];
        let mut queue = VecDeque::new();
        for target in 0..n {
            seen.iter_mut().for_each(|v| *v = false);
            seen[target] = true;
            queue.push_back(target);
            while let Some(v) = queue.pop_front() {
                for &(u, p) in &into[v] {
                    let u = u as usize;
                    if !seen[u] {
                        seen[u] = true;
                        next[target * n + u] = p;
                        queue.push_back(u);
                    }
                }
            }
        }
        GraphMinimal { switches: n, next }
    }
}

impl MinimalStep for GraphMinimal {
    #[inline]
    fn hop(&self, cur: usize, target: usize, _state: &RouteState, _rng: &mut Rng) -> Hop {
        let port = self.next[target * self.switches + cur];
        debug_assert!(port != u16::MAX, "switch {cur} cannot reach {target}");
        Hop { port, dim: NO_DIM, ..Default::default() }
    }
}
