//! k-ary n-dimensional torus: a ring in every dimension (any n, any k >= 2 per dimension).

use super::{Cartesian, LinkClass, PortPeer, Topology};
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;

pub struct Grid {
    pub grid: Cartesian,
    pub servers_per_switch: usize,
    kind: &'static str,
}

pub const KIND: super::Kind = super::Kind {
    name: "torus",
    about: "k-ary n-cube: a ring of switches in every dimension",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    servers_per_switch: "1",
    build: |spec| Ok(std::sync::Arc::new(build(spec)?)),
};

keys! {
    /// The keys of a torus, read from `[topology]`.
    struct Keys {
        /// switches per dimension, e.g. [10, 10, 10]; 1 to 16 dimensions of at least 2
        dims: Option<Vec<usize>> = "required" => None,
    }
}

pub fn build(spec: &Spec) -> SpecResult<Grid> {
    let Keys { dims } = super::own_keys(spec)?;
    Grid::from_spec(spec, dims.unwrap_or_default(), true)
}

impl Grid {
    /// The grid of `dims` (a kind's `topology.dims`, empty when not given).
    pub(super) fn from_spec(spec: &Spec, dims: Vec<usize>, wrap: bool) -> SpecResult<Grid> {
        let t = &spec.topology;
        let kind = if wrap { "torus" } else { "mesh" };
        if dims.is_empty() || dims.len() > 16 {
            return Err(SpecError::new("topology.dims", format!("{dims:?}"), format!("a {kind} needs 1 to 16 dimensions, e.g. [8, 8]")));
        }
        let min = if wrap { 2 } else { 1 };
        if let Some(&bad) = dims.iter().find(|&&k| k < min || k > 1 << 20) {
            return Err(SpecError::new(
                "topology.dims",
                format!("{dims:?}"),
                format!("every dimension of a {kind} needs between {min} and 1048576 switches (found {bad})"),
            ));
        }
        // Saturating: 16 dimensions of 2^20 switches overflow even 128 bits.
        let switches: u128 = dims.iter().fold(1u128, |n, &k| n.saturating_mul(k as u128));
        let servers_per_switch = t.servers_per_switch_or(1);
        let servers = switches.saturating_mul(servers_per_switch as u128);
        if switches > 1 << 28 {
            return Err(SpecError::new("topology.dims", format!("{dims:?}"), format!("{switches} switches is more than the 2^28 supported")));
        }
        if servers > 1 << 28 {
            return Err(SpecError::new(
                "topology.servers_per_switch",
                servers_per_switch,
                format!("{servers} servers ({switches} switches) is more than the 2^28 supported: at most {} per switch", (1u128 << 28) / switches),
            ));
        }
        Ok(Grid { grid: Cartesian::new(dims, wrap), servers_per_switch, kind })
    }
}

impl Topology for Grid {
    fn kind(&self) -> &'static str {
        self.kind
    }
    fn num_switches(&self) -> usize {
        self.grid.size()
    }
    fn network_ports(&self, _switch: usize) -> usize {
        2 * self.grid.n()
    }
    fn servers_at(&self, _switch: usize) -> usize {
        self.servers_per_switch
    }
    fn neighbour(&self, switch: usize, port: usize) -> Option<PortPeer> {
        let dim = port / 2;
        let dir = if port.is_multiple_of(2) { 1 } else { -1 };
        let other = self.grid.step(switch, dim, dir)?;
        Some(PortPeer { switch: other as u32, port: Cartesian::port(dim, -dir) as u16 })
    }
    fn distance(&self, a: usize, b: usize) -> usize {
        self.grid.distance(a, b)
    }
    fn diameter(&self) -> usize {
        self.grid.diameter()
    }
    fn port_dimension(&self, _switch: usize, port: usize) -> Option<usize> {
        Some(port / 2)
    }
    fn link_class(&self, _switch: usize, port: usize) -> LinkClass {
        LinkClass::dimension(port / 2)
    }
    fn port_direction(&self, _switch: usize, port: usize) -> i8 {
        if port.is_multiple_of(2) {
            1
        } else {
            -1
        }
    }
    fn coordinates(&self, switch: usize) -> Vec<usize> {
        self.grid.coords(switch)
    }
    fn dims(&self) -> Vec<usize> {
        self.grid.dims.clone()
    }
    fn description(&self) -> String {
        let dims: Vec<String> = self.grid.dims.iter().map(|k| k.to_string()).collect();
        format!("{} {} with {} server(s) per switch", dims.join("x"), self.kind, self.servers_per_switch)
    }
    fn cartesian(&self) -> Option<&Cartesian> {
        Some(&self.grid)
    }
}
