//! Topologies: how switches are wired and where servers attach.
//!
//! Ports of a switch are numbered network ports first (`0..network_ports(s)`), then one port
//! per attached server. A link is a pair of channels: port `p` of switch `s` sends to port
//! `q` of switch `t` exactly when port `q` of `t` sends to port `p` of `s`.

mod cartesian;
mod mesh;
mod torus;

pub use cartesian::Cartesian;

use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;
use std::sync::Arc;

/// The far end of a network port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortPeer {
    pub switch: u32,
    pub port: u16,
}

pub trait Topology: Send + Sync {
    fn kind(&self) -> &'static str;
    fn num_switches(&self) -> usize;
    /// Network ports of a switch, connected or not (mesh borders leave some unconnected).
    fn network_ports(&self, switch: usize) -> usize;
    /// Servers attached to a switch.
    fn servers_at(&self, switch: usize) -> usize;
    fn neighbour(&self, switch: usize, port: usize) -> Option<PortPeer>;
    /// Minimal number of switch-to-switch hops.
    fn distance(&self, a: usize, b: usize) -> usize;
    fn diameter(&self) -> usize;
    /// Dimension of a network port, for link-load maps and dimension-aware policies.
    fn port_dimension(&self, _switch: usize, _port: usize) -> Option<usize> {
        None
    }
    /// +1 / -1 for ports of cartesian topologies, 0 otherwise.
    fn port_direction(&self, _switch: usize, _port: usize) -> i8 {
        0
    }
    /// Coordinates of a switch, if the topology has them.
    fn coordinates(&self, _switch: usize) -> Vec<usize> {
        Vec::new()
    }
    fn dims(&self) -> Vec<usize> {
        Vec::new()
    }
    fn description(&self) -> String;
    /// The grid view, for routings and patterns defined on coordinates.
    fn cartesian(&self) -> Option<&Cartesian> {
        None
    }
}

/// Server numbering helper shared by all topologies: servers are numbered switch by switch.
#[derive(Debug, Clone)]
pub struct ServerMap {
    /// First server of each switch, plus the total at the end.
    first: Vec<u32>,
    switch_of: Vec<u32>,
}

impl ServerMap {
    pub fn new(topo: &dyn Topology) -> Self {
        let n = topo.num_switches();
        let mut first = Vec::with_capacity(n + 1);
        let mut switch_of = Vec::new();
        let mut acc = 0u32;
        for s in 0..n {
            first.push(acc);
            let k = topo.servers_at(s) as u32;
            switch_of.extend(std::iter::repeat(s as u32).take(k as usize));
            acc += k;
        }
        first.push(acc);
        ServerMap { first, switch_of }
    }
    pub fn num_servers(&self) -> usize {
        *self.first.last().unwrap() as usize
    }
    pub fn switch_of(&self, server: usize) -> usize {
        self.switch_of[server] as usize
    }
    /// Index of the server among those of its switch.
    pub fn local_index(&self, server: usize) -> usize {
        server - self.first[self.switch_of(server)] as usize
    }
    pub fn server(&self, switch: usize, local: usize) -> usize {
        self.first[switch] as usize + local
    }
    pub fn servers_at(&self, switch: usize) -> usize {
        (self.first[switch + 1] - self.first[switch]) as usize
    }
}

pub const TOPOLOGIES: &str = "torus, mesh";

pub fn build(spec: &Spec) -> SpecResult<Arc<dyn Topology>> {
    let t = &spec.topology;
    match t.kind.as_str() {
        "torus" => Ok(Arc::new(torus::build(spec)?)),
        "mesh" => Ok(Arc::new(mesh::build(spec)?)),
        other => Err(SpecError::new("topology.kind", format!("{other:?}"), format!("unknown topology; allowed: {TOPOLOGIES}"))),
    }
}

/// Check that every link is a pair of channels and count links; used by `hopsim topology`.
pub fn check_wiring(topo: &dyn Topology) -> Result<usize, String> {
    let mut channels = 0usize;
    for s in 0..topo.num_switches() {
        for p in 0..topo.network_ports(s) {
            if let Some(peer) = topo.neighbour(s, p) {
                channels += 1;
                let back = topo.neighbour(peer.switch as usize, peer.port as usize);
                if back != Some(PortPeer { switch: s as u32, port: p as u16 }) {
                    return Err(format!("switch {s} port {p} -> {peer:?} is not answered by the same link back"));
                }
            }
        }
    }
    Ok(channels / 2)
}
