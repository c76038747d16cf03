//! HyperX: the Cartesian product of complete graphs K_s0 x K_s1 x ... (any side per
//! dimension). A switch links directly to every switch that differs from it in exactly one
//! coordinate, so one hop corrects a whole dimension and the diameter is the number of
//! dimensions. Ports: for each dimension d in order, `s_d - 1` ports, port j of dimension d
//! leading to coordinate j if j < own coordinate, else j + 1.

use super::{check_size, Cartesian, LinkClass, PortPeer, Topology};
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;

#[derive(Debug, Clone)]
pub struct HyperX {
    /// Coordinates (no wrap-around): `shift` traffic and link maps use them.
    pub grid: Cartesian,
    /// First port of each dimension.
    base: Vec<usize>,
    ports: usize,
    pub servers_per_switch: usize,
}

pub const KIND: super::Kind = super::Kind {
    name: "hyperx",
    about: "switches on a grid, each linked to every switch that differs in one coordinate",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    servers_per_switch: "1",
    build: |spec| Ok(std::sync::Arc::new(build(spec)?)),
};

keys! {
    /// The keys of a HyperX, read from `[topology]`.
    struct Keys {
        /// switches per dimension (S), e.g. [16, 16]; 1 to 16 dimensions of at least 2
        dims: Option<Vec<usize>> = "required" => None,
    }
}

pub fn build(spec: &Spec) -> SpecResult<HyperX> {
    let dims = super::own_keys::<Keys>(spec)?.dims.unwrap_or_default();
    if dims.is_empty() || dims.len() > 16 {
        return Err(SpecError::new("topology.dims", format!("{dims:?}"), "a hyperx needs 1 to 16 dimensions, e.g. [16, 16]"));
    }
    if let Some(&bad) = dims.iter().find(|&&s| !(2..=1 << 16).contains(&s)) {
        return Err(SpecError::new("topology.dims", format!("{dims:?}"), format!("every side of a hyperx needs 2 to 65536 switches (found {bad})")));
    }
    let switches: u128 = dims.iter().fold(1u128, |n, &s| n.saturating_mul(s as u128));
    let ports: usize = dims.iter().map(|s| s - 1).sum();
    let p = spec.topology.servers_per_switch_or(1);
    check_size("topology.dims", format!("{dims:?}"), switches, switches * p as u128, (ports + p) as u128)?;
    Ok(HyperX::new(dims, p))
}

impl HyperX {
    pub fn new(dims: Vec<usize>, servers_per_switch: usize) -> Self {
        let mut base = Vec::with_capacity(dims.len());
        let mut acc = 0;
        for &s in &dims {
            base.push(acc);
            acc += s - 1;
        }
        HyperX { grid: Cartesian::new(dims, false), base, ports: acc, servers_per_switch }
    }
    /// The port of `switch` that leads to coordinate `c` (not its own) along `dim`.
    #[inline]
    pub fn port_to(&self, switch: usize, dim: usize, c: usize) -> usize {
        let own = self.grid.coord(switch, dim);
        debug_assert_ne!(own, c);
        self.base[dim] + if c < own { c } else { c - 1 }
    }
    /// The coordinate, along the port's dimension, of the switch that network port `port`
    /// of `switch` leads to.
    #[inline]
    pub fn coord_through(&self, switch: usize, port: usize) -> usize {
        let dim = self.dim_of(port);
        let j = port - self.base[dim];
        if j < self.grid.coord(switch, dim) {
            j
        } else {
            j + 1
        }
    }
    /// Dimension of a network port.
    #[inline]
    pub fn dim_of(&self, port: usize) -> usize {
        self.base.partition_point(|&b| b <= port) - 1
    }
}

impl Topology for HyperX {
    fn kind(&self) -> &'static str {
        "hyperx"
    }
    fn num_switches(&self) -> usize {
        self.grid.size()
    }
    fn network_ports(&self, _switch: usize) -> usize {
        self.ports
    }
    fn servers_at(&self, _switch: usize) -> usize {
        self.servers_per_switch
    }
    fn neighbour(&self, switch: usize, port: usize) -> Option<PortPeer> {
        if port >= self.ports {
            return None;
        }
        let dim = self.dim_of(port);
        let j = port - self.base[dim];
        let own = self.grid.coord(switch, dim);
        let c = if j < own { j } else { j + 1 };
        let other = self.grid.with_coord(switch, dim, c);
        Some(PortPeer { switch: other as u32, port: self.port_to(other, dim, own) as u16 })
    }
    fn distance(&self, a: usize, b: usize) -> usize {
        (0..self.grid.n()).filter(|&d| self.grid.coord(a, d) != self.grid.coord(b, d)).count()
    }
    fn diameter(&self) -> usize {
        self.grid.n()
    }
    fn port_dimension(&self, _switch: usize, port: usize) -> Option<usize> {
        (port < self.ports).then(|| self.dim_of(port))
    }
    fn link_class(&self, _switch: usize, port: usize) -> LinkClass {
        LinkClass::dimension(self.dim_of(port))
    }
    fn coordinates(&self, switch: usize) -> Vec<usize> {
        self.grid.coords(switch)
    }
    fn dims(&self) -> Vec<usize> {
        self.grid.dims.clone()
    }
    fn description(&self) -> String {
        let dims: Vec<String> = self.grid.dims.iter().map(|k| k.to_string()).collect();
        format!("{} hyperx ({}D, complete graph per dimension) with {} server(s) per switch", dims.join("x"), self.grid.n(), self.servers_per_switch)
    }
    fn cartesian(&self) -> Option<&Cartesian> {
        Some(&self.grid)
    }
}
