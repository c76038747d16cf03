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

/// A topology kind: its `topology.kind` name, its keys (besides `kind`) and how it is built.
/// One `KINDS` line per kind.
pub struct Kind {
    pub name: &'static str,
    pub about: &'static str,
    pub keys: &'static [Key],
    pub build: fn(&Spec) -> SpecResult<Arc<dyn Topology>>,
}

/// `servers_per_switch`, a key of every kind, with the default `default`.
macro_rules! servers_per_switch_key {
    ($default:literal) => {
        $crate::topology::Key { name: "servers_per_switch", default: $default, meaning: "servers (NICs) attached to each switch that has servers" }
    };
}
pub(crate) use servers_per_switch_key;

/// Every topology kind, in the order `hopsim list` and error messages give them.
pub const KINDS: &[Kind] = &[torus::KIND, mesh::KIND, hyperx::KIND, dragonfly::KIND, dragonfly_plus::KIND, fat_tree::KIND, aries::KIND, slim_fly::KIND, graph::KIND];

/// The kind `topology.kind` names.
pub fn kind(name: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.name == name)
}

/// Every kind's name, comma-separated.
pub fn kind_names() -> String {
    KINDS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

/// Refuse the `[topology]` keys that `kind` does not declare (those of another kind too,
/// unless the experiment sweeps `topology.kind`).
fn reject_unused(spec: &Spec, kind: &Kind) -> SpecResult<()> {
    let t = &spec.topology;
    let typed: [(&str, Option<String>); 12] = [
        ("dims", (!t.dims.is_empty()).then(|| format!("{:?}", t.dims))),
        ("groups", t.groups.map(|v| v.to_string())),
        ("switches_per_group", t.switches_per_group.map(|v| v.to_string())),
        ("global_links_per_switch", t.global_links_per_switch.map(|v| v.to_string())),
        ("global_arrangement", t.global_arrangement.as_ref().map(|v| format!("{v:?}"))),
        ("leaves_per_group", t.leaves_per_group.map(|v| v.to_string())),
        ("spines_per_group", t.spines_per_group.map(|v| v.to_string())),
        ("k", t.k.map(|v| v.to_string())),
        ("levels", t.levels.map(|v| v.to_string())),
        ("chassis", t.chassis.map(|v| v.to_string())),
        ("blades", t.blades.map(|v| v.to_string())),
        ("column_links", t.column_links.map(|v| v.to_string())),
    ];
    let left = spec.keys_left_to_others("topology.kind", KINDS.iter().flat_map(|k| k.keys.iter()).map(|k| k.name));
    let set = typed.into_iter().filter_map(|(key, v)| v.map(|v| (key, v))).chain(t.kind_keys.iter().map(|(k, v)| (k.as_str(), v.to_string())));
    for (key, value) in set {
        if kind.keys.iter().any(|k| k.name == key) || left.contains(&key) {
            continue;
        }
        let chosen = format!("topology.kind = {:?}", t.kind);
        let names: Vec<&str> = std::iter::once("kind").chain(kind.keys.iter().map(|k| k.name)).collect();
        return Err(crate::spec::unknown_key("topology", key, value, &chosen, &names));
    }
    Ok(())
}

/// A kind's own keys, read by serde from `[topology]` (those the engine has no field for):
/// the per-kind spec type of a kind added without touching the spec. Errors name the key.
pub fn own_keys<T: serde::de::DeserializeOwned>(spec: &Spec) -> SpecResult<T> {
    let keys = &spec.topology.kind_keys;
    let mut table: serde_json::Map<String, serde_json::Value> = keys.clone().into_iter().collect();
    // Keys the spec still reads into typed fields (`groups`, `dims`, `k`, ...) are a kind's
    // own as well when it declares them: a new kind may name a key `groups`.
    if let Ok(serde_json::Value::Object(typed)) = serde_json::to_value(&spec.topology) {
        for (k, v) in typed {
            let unset = v.is_null() || v.as_array().is_some_and(Vec::is_empty);
            if k != "kind" && !unset && !table.contains_key(&k) {
                table.insert(k, v);
            }
        }
    }
    let table = serde_json::Value::Object(table);
    T::deserialize(&table).map_err(|e| {
        let msg = e.to_string();
        if let Some(missing) = msg.strip_prefix("missing field `").and_then(|m| m.split('`').next()) {
            return SpecError::new(format!("topology.{missing}"), "", format!("missing; topology.kind = {:?} needs it", spec.topology.kind));
        }
        // A wrong value: serde names the type it wanted; the key is the one whose value it saw.
        let key = keys.iter().find(|(_, v)| msg.contains(&v.to_string())).map(|(k, _)| k.clone());
        let msg = msg.replace("invalid type: ", "wrong type: ").replace('`', "");
        match key {
            Some(k) => SpecError::new(format!("topology.{k}"), keys[&k].to_string(), msg),
            None => SpecError::new("topology", format!("{:?}", spec.topology.kind), msg),
        }
    })
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
            switch_of.extend(std::iter::repeat_n(s as u32, k as usize));
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

pub fn build(spec: &Spec) -> SpecResult<Arc<dyn Topology>> {
    let t = &spec.topology;
    let k = kind(&t.kind).ok_or_else(|| SpecError::new("topology.kind", format!("{:?}", t.kind), format!("unknown topology; allowed: {}", kind_names())))?;
    reject_unused(spec, k)?;
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
