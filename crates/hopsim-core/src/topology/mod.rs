//! Topologies: how switches are wired and where servers attach.
//!
//! Ports of a switch are numbered network ports first (`0..network_ports(s)`), then one port
//! per attached server. A link is a pair of channels: port `p` of switch `s` sends to port
//! `q` of switch `t` exactly when port `q` of `t` sends to port `p` of `s`.

// The kinds' modules are public for their registry entries (`hyperx::KIND`), which the
// minimal steps and the deadlock-freedom table name.
pub mod aries;
mod cartesian;
pub mod dragonfly;
pub mod dragonfly_plus;
pub mod fat_tree;
mod global;
pub mod graph;
pub mod hyperx;
pub mod mesh;
pub mod slim_fly;
pub mod torus;
mod widths;

pub use aries::Aries;
pub use cartesian::Cartesian;
pub use dragonfly::Dragonfly;
pub use dragonfly_plus::DragonflyPlus;
pub use fat_tree::FatTree;
pub use global::Arrangement;
pub use hyperx::HyperX;
pub use crate::spec::{Key, LinkClass, LINK_CLASS_NAMES};

use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;
use std::sync::Arc;

/// The far end of a network port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortPeer {
    pub switch: u32,
    pub port: u16,
}

/// `Any`: the routings defined on one kind read its concrete topology (`concrete`).
pub trait Topology: std::any::Any + Send + Sync {
    fn kind(&self) -> &'static str;
    fn num_switches(&self) -> usize;
    /// Network ports of a switch, connected or not (mesh borders leave some unconnected).
    fn network_ports(&self, switch: usize) -> usize;
    /// Servers attached to a switch.
    fn servers_at(&self, switch: usize) -> usize;
    fn neighbour(&self, switch: usize, port: usize) -> Option<PortPeer>;
    /// Minimal number of switch-to-switch hops (on dragonflies: among paths with at most one
    /// global link, the dragonfly's notion of a minimal path).
    fn distance(&self, a: usize, b: usize) -> usize;
    /// Largest distance between two switches that have servers (all switches on grids).
    fn diameter(&self) -> usize;
    /// Class of network port `port` of `switch` (connected or not); server ports are
    /// `LinkClass::Injection`, which the engine knows without asking.
    fn link_class(&self, switch: usize, port: usize) -> LinkClass;
    /// A latency of this link's own, in cycles, in place of its class's (a network from a
    /// file may give one per link; `[link.<class>]` sets the others).
    fn link_latency(&self, _switch: usize, _port: usize) -> Option<u32> {
        None
    }
    /// The largest of the links' own latencies (`link_latency`), if any link has one: the
    /// event calendar must span it.
    fn max_link_latency(&self) -> Option<u32> {
        None
    }
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
    /// Groups of switches (dragonflies), numbered from 0; 0 when the topology has none.
    fn groups(&self) -> usize {
        0
    }
    fn group_of(&self, _switch: usize) -> usize {
        0
    }
    /// How far a switch sits from the servers: 0 for switches with servers (and on networks
    /// without tiers), 1 for a dragonfly+ spine, l for a fat-tree switch of level l. Maps and
    /// labels of links between tiers (up, down) read it.
    fn tier(&self, _switch: usize) -> usize {
        0
    }
    /// Global links per switch that carries them (h of a dragonfly); 0 if none.
    fn global_links_per_switch(&self) -> usize {
        0
    }
}

/// The concrete topology behind `topo`, if it is a `T`: for the routings and VC policies
/// defined on one kind, which read its own structure (a dragonfly's groups, a HyperX's ports).
pub fn concrete<T: Topology>(topo: &dyn Topology) -> Option<&T> {
    (topo as &dyn std::any::Any).downcast_ref()
}

/// A topology kind as the registry knows it, declared in its file: its `topology.kind`
/// name, one line on it, the `[topology]` keys it reads besides `kind` and
/// `servers_per_switch` (its key type's, read with `own_keys`) and how it is built.
pub struct Kind {
    pub name: &'static str,
    pub about: &'static str,
    pub keys: &'static [Key],
    /// Its key type's values when nothing is given (`KeyType::defaults`).
    pub defaults: fn() -> serde_json::Value,
    /// `servers_per_switch` when not given, as docs/experiment-file.md writes it.
    pub servers_per_switch: &'static str,
    pub build: fn(&Spec) -> SpecResult<Arc<dyn Topology>>,
}

registry! {
    /// The topology kinds, as `topology.kind` names them: one line each, its variant and its
    /// entry, declared in its file.
    enum KindName;
    /// Every topology kind, in the order `hopsim list` and error messages give them.
    const KINDS: [Kind] = {
        Torus => torus::KIND,
        Mesh => mesh::KIND,
        HyperX => hyperx::KIND,
        Dragonfly => dragonfly::KIND,
        DragonflyPlus => dragonfly_plus::KIND,
        FatTree => fat_tree::KIND,
        Aries => aries::KIND,
        SlimFly => slim_fly::KIND,
        Graph => graph::KIND,
    }
}

/// The `[topology]` keys every kind reads (the others are declared by the kinds that read
/// them); each kind gives `servers_per_switch` its own default (`Kind::servers_per_switch`).
pub const TABLE_KEYS: &[Key] = &[
    Key { name: "kind", default: "required", meaning: "the topology" },
    Key { name: "servers_per_switch", default: "by kind", meaning: "servers (NICs) attached to each switch that has servers" },
];

/// A kind's keys as `hopsim list` shows them: its own, then `servers_per_switch` with the
/// kind's default.
pub fn listed_keys(kind: &Kind) -> Vec<serde_json::Value> {
    let servers = Key { default: kind.servers_per_switch, ..TABLE_KEYS[1] };
    kind.keys.iter().chain([&servers]).map(Key::json).collect()
}

/// The kind `topology.kind` names.
pub fn kind(name: &str) -> Option<&'static Kind> {
    KindName::from_name(name).map(KindName::kind)
}

/// Every kind's name, comma-separated.
pub fn kind_names() -> String {
    KINDS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

/// The kind `topology.kind` names, or an error naming it and what is allowed.
fn chosen(spec: &Spec) -> SpecResult<&'static Kind> {
    let t = &spec.topology;
    kind(&t.kind).ok_or_else(|| SpecError::new("topology.kind", format!("{:?}", t.kind), format!("unknown topology; allowed: {}", kind_names())))
}

/// The chosen kind's own `[topology]` keys, read into its key type `T` (`spec::read_own_keys`):
/// a key of another kind is refused, unless the experiment sweeps `topology.kind`; a key
/// named like one of another kind (`groups`) is the chosen kind's all the same.
pub fn own_keys<T: serde::de::DeserializeOwned>(spec: &Spec) -> SpecResult<T> {
    let k = chosen(spec)?;
    let chosen = format!("topology.kind = {:?}", k.name);
    let others = spec.keys_left_to_others("topology.kind", KINDS.iter().flat_map(|k| k.keys.iter()).map(|k| k.name));
    crate::spec::read_own_keys("topology", &chosen, &spec.topology.kind_keys, TABLE_KEYS, k.keys, &others)
}

/// `spec` with its `[topology]` table as the normalised spec writes it (`spec::list_keys`):
/// the chosen kind's keys with their defaults, the other kinds' keys null.
pub fn with_listed_keys(mut spec: Spec) -> Spec {
    let own = kind(&spec.topology.kind).map_or(serde_json::Value::Null, |k| (k.defaults)());
    crate::spec::list_keys(&mut spec.topology.kind_keys, own, KINDS.iter().flat_map(|k| k.keys.iter()).map(|k| k.name));
    spec
}

/// Hops between every pair of the `n` switches, `[a * n + b]`, by one breadth-first search
/// per switch over `neighbours`; `u8::MAX` where no path joins them. Links are taken as
/// bidirectional, so the table is symmetric. An error when a path is longer than 254 hops.
pub fn hop_distances<I: IntoIterator<Item = usize>>(n: usize, neighbours: impl Fn(usize) -> I) -> Result<Vec<u8>, String> {
    let mut dist = vec![u8::MAX; n * n];
    let mut queue = std::collections::VecDeque::new();
    for a in 0..n {
        let d = &mut dist[a * n..(a + 1) * n];
        d[a] = 0;
        queue.push_back(a);
        while let Some(v) = queue.pop_front() {
            for u in neighbours(v) {
                if d[u] == u8::MAX {
                    d[u] = d[v].checked_add(1).filter(|&h| h < u8::MAX).ok_or("a path of more than 254 hops; hopsim keeps distances in a byte")?;
                    queue.push_back(u);
                }
            }
        }
    }
    Ok(dist)
}

/// Largest network of a kind without a minimal step of its own (or a grid): the routings
/// take its minimal paths from its wiring, a table of one next hop per pair of switches
/// (`routing::graph_minimal`; 4096^2 ports of 2 bytes, 32 MiB).
pub const MAX_WIRING_ROUTED_SWITCHES: usize = 4096;

/// Refuse networks too large to simulate (ports and servers are stored in 16 and 32 bits).
/// `topology.groups` of a dragonfly-like network: one global link per pair of groups allows
/// at most `max` = (switches with global links per group) x (global links each) + 1.
pub(crate) fn group_count(groups: Option<usize>, max: usize, formula: &str) -> SpecResult<usize> {
    let g = groups.unwrap_or(max);
    if g < 2 || g > max {
        return Err(SpecError::new("topology.groups", g, format!("must be between 2 and {formula} + 1 = {max}")));
    }
    Ok(g)
}

pub(crate) fn check_size(key: &str, value: String, switches: u128, servers: u128, radix: u128) -> SpecResult<()> {
    if servers > 1 << 28 || switches > 1 << 28 {
        return Err(SpecError::new(key, value, format!("{switches} switches and {servers} servers is more than the 2^28 supported")));
    }
    if radix > 60_000 {
        return Err(SpecError::new(key, value, format!("switch radix {radix} is more than the 60000 ports supported")));
    }
    Ok(())
}

/// Server numbering helper shared by all topologies: servers are numbered switch by switch.
///
/// Where every switch has the same number of servers (tori, HyperX, Dragonflies, Aries) the
/// numbering is arithmetic and the map holds no table: an MPI rank of a network of millions of
/// switches would otherwise keep 4 bytes of every server and switch of the network. Other
/// networks (fat-trees, Dragonfly+ and graphs, whose servers hang from some switches only)
/// keep the tables, shared between the map's copies.
#[derive(Debug, Clone)]
pub struct ServerMap {
    layout: Layout,
}

#[derive(Debug, Clone)]
enum Layout {
    /// `per` servers at each of `switches` switches.
    Uniform { per: u32, switches: u32 },
    /// The first server of each switch, plus the total at the end; and each server's switch.
    Listed { first: Arc<[u32]>, switch_of: Arc<[u32]> },
}

impl ServerMap {
    pub fn new(topo: &dyn Topology) -> Self {
        let n = topo.num_switches();
        if let Some(per) = Self::servers_per_switch(topo) {
            return ServerMap::uniform(per, n as u32);
        }
        let mut first = Vec::with_capacity(n + 1);
        let mut switch_of = Vec::new();
        let mut acc = 0u32;
        for s in 0..n {
            first.push(acc);
            let k = topo.servers_at(s) as u32;
            switch_of.extend(std::iter::repeat_n(s as u32, k as usize));
            acc += k;
        }
        first.push(acc);
        ServerMap { layout: Layout::Listed { first: first.into(), switch_of: switch_of.into() } }
    }

    fn uniform(per: u32, switches: u32) -> Self {
        ServerMap { layout: Layout::Uniform { per, switches } }
    }

    /// Bytes it holds for the network (the memory estimate, engine/memory).
    pub fn bytes(&self) -> u64 {
        match &self.layout {
            Layout::Uniform { .. } => 0,
            Layout::Listed { first, switch_of } => 4 * (first.len() + switch_of.len()) as u64,
        }
    }

    /// Bytes a map of `topo` would hold, without building it.
    pub fn bytes_for(topo: &dyn Topology) -> u64 {
        let n = topo.num_switches();
        match Self::servers_per_switch(topo) {
            Some(_) => 0,
            None => 4 * (n as u64 + 1 + (0..n).map(|s| topo.servers_at(s) as u64).sum::<u64>()),
        }
    }

    /// The servers of every switch, where all have as many (at least one).
    fn servers_per_switch(topo: &dyn Topology) -> Option<u32> {
        let n = topo.num_switches();
        let per = if n > 0 { topo.servers_at(0) } else { 0 };
        (per > 0 && (1..n).all(|s| topo.servers_at(s) == per)).then_some(per as u32)
    }

    pub fn num_servers(&self) -> usize {
        match &self.layout {
            Layout::Uniform { per, switches } => *per as usize * *switches as usize,
            Layout::Listed { first, .. } => *first.last().unwrap() as usize,
        }
    }
    #[inline]
    pub fn switch_of(&self, server: usize) -> usize {
        match &self.layout {
            Layout::Uniform { per, switches } => {
                assert!((server as u64) < *per as u64 * *switches as u64, "server {server} is not in the network");
                server / *per as usize
            }
            Layout::Listed { switch_of, .. } => switch_of[server] as usize,
        }
    }
    fn first(&self, switch: usize) -> usize {
        match &self.layout {
            Layout::Uniform { per, switches } => {
                assert!(switch <= *switches as usize, "switch {switch} is not in the network");
                switch * *per as usize
            }
            Layout::Listed { first, .. } => first[switch] as usize,
        }
    }
    /// Index of the server among those of its switch.
    pub fn local_index(&self, server: usize) -> usize {
        server - self.first(self.switch_of(server))
    }
    pub fn server(&self, switch: usize, local: usize) -> usize {
        self.first(switch) + local
    }
    pub fn servers_at(&self, switch: usize) -> usize {
        self.first(switch + 1) - self.first(switch)
    }
    /// The servers of the switches `switches`, numbered consecutively.
    pub fn of_switches(&self, switches: std::ops::Range<usize>) -> std::ops::Range<usize> {
        self.first(switches.start)..self.first(switches.end)
    }
}

pub fn build(spec: &Spec) -> SpecResult<Arc<dyn Topology>> {
    let k = chosen(spec)?;
    // Unknown keys and wrong types, for every kind (those without keys read none).
    own_keys::<serde_json::Value>(spec)?;
    (k.build)(spec)
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

/// The classes present in a topology, each with its number of links (a link = two channels;
/// injection links counted once per server), in `LinkClass` order.
pub fn class_counts(topo: &dyn Topology) -> Vec<(LinkClass, usize)> {
    let mut counts = std::collections::BTreeMap::new();
    let mut servers = 0;
    for s in 0..topo.num_switches() {
        for p in 0..topo.network_ports(s) {
            if topo.neighbour(s, p).is_some() {
                *counts.entry(topo.link_class(s, p)).or_insert(0usize) += 1;
            }
        }
        servers += topo.servers_at(s);
    }
    let mut out: Vec<(LinkClass, usize)> = counts.into_iter().map(|(c, channels)| (c, channels / 2)).collect();
    if servers > 0 {
        out.push((LinkClass::Injection, servers));
    }
    out.sort();
    out
}

#[cfg(test)]
mod server_map_tests {
    use super::ServerMap;

    /// The arithmetic numbering numbers servers switch by switch, for every server of small
    /// maps and for the largest 32-bit server numbers, whatever the servers per switch.
    #[test]
    fn uniform_numbering_divides_exactly() {
        for per in 1..=17u32 {
            let switches = 1000;
            let map = ServerMap::uniform(per, switches);
            assert_eq!(map.num_servers(), (per * switches) as usize);
            assert_eq!(map.bytes(), 0);
            for s in 0..map.num_servers() {
                let sw = s / per as usize;
                assert_eq!(map.switch_of(s), sw, "per {per}, server {s}");
                assert_eq!(map.local_index(s), s % per as usize);
                assert_eq!(map.server(sw, s % per as usize), s);
            }
            assert_eq!(map.servers_at(switches as usize - 1), per as usize);
            assert_eq!(map.of_switches(2..5), (2 * per as usize)..(5 * per as usize));
            let big = ServerMap::uniform(per, u32::MAX / per);
            for s in (u32::MAX / per * per - 1000..u32::MAX / per * per).step_by(7) {
                assert_eq!(big.switch_of(s as usize), (s / per) as usize, "per {per}, server {s}");
            }
        }
    }

    /// A network whose switches hold different numbers of servers keeps its tables, and its
    /// numbering is switch by switch all the same.
    #[test]
    fn listed_numbering_follows_the_switches() {
        let topo = super::fat_tree::FatTree::new(2, 3, 2);
        let map = ServerMap::new(&topo);
        assert!(map.bytes() > 0 && map.bytes() == ServerMap::bytes_for(&topo));
        let mut s = 0;
        for sw in 0..super::Topology::num_switches(&topo) {
            for local in 0..super::Topology::servers_at(&topo, sw) {
                assert_eq!((map.switch_of(s), map.local_index(s), map.server(sw, local)), (sw, local, s));
                s += 1;
            }
        }
        assert_eq!(s, map.num_servers());
    }
}
