//! Every shortest next hop, from the wiring (`routing.valiant_paths = "all_shortest"`): at each
//! switch the candidates are all ports whose far end is one hop nearer the target, and the
//! allocator takes the one with most room. This is how CAMINOS's `Shortest` routing moves
//! each Valiant phase, and what a general-graph router with a distance table can do. On a
//! dragonfly it adds paths beyond local-global-local (global-local-global through a third
//! group, where that is as short), so its paths fit only the hop ladders
//! (`deadlock_freedom::policy`).

use super::{Candidates, Hop, NO_DIM};
use crate::topology::{LinkClass, Topology};

pub struct AllShortest {
    switches: usize,
    /// `dist[target * switches + cur]`: hops from `cur` to `target`.
    dist: Vec<u8>,
    /// Per switch, its network ports: (port, far-end switch, global link).
    ports: Vec<Vec<(u16, u32, bool)>>,
}

impl AllShortest {
    pub fn new(topo: &dyn Topology) -> Self {
        let n = topo.num_switches();
        let ports: Vec<Vec<(u16, u32, bool)>> = (0..n)
            .map(|s| {
                (0..topo.network_ports(s))
                    .filter_map(|p| topo.neighbour(s, p).map(|peer| (p as u16, peer.switch, topo.link_class(s, p) == LinkClass::Global)))
                    .collect()
            })
            .collect();
        // Links are bidirectional, so distances towards a target are distances from it.
        let dist = crate::topology::hop_distances(n, |v| ports[v].iter().map(|&(_, u, _)| u as usize)).expect("the networks routed by their wiring have short paths");
        AllShortest { switches: n, dist, ports }
    }

    /// Hops from `cur` to `target`.
    pub fn distance(&self, cur: usize, target: usize) -> u8 {
        self.dist[target * self.switches + cur]
    }

    /// Every hop from `cur` (`!= target`) to a switch one hop nearer `target`, as equal
    /// candidates, in port order (at most one per port: `routing::every_port`).
    pub fn hops(&self, cur: usize, target: usize, out: &mut Candidates) {
        let here = self.distance(cur, target);
        debug_assert!(here != u8::MAX && here > 0, "switch {cur} cannot reach {target}");
        for &(port, next, global) in &self.ports[cur] {
            if self.distance(next as usize, target) + 1 == here {
                out.push(Hop { port, dim: NO_DIM, class: u8::from(global), ..Default::default() }, 0);
            }
        }
    }
}
