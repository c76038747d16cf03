//! A network read from a file (`kind = "graph"`, `topology.file`): any undirected graph of
//! switches, as an edge list or as networkx's node-link JSON, which any graph tool writes.
//!
//! - **Edge list** (any name but `.json`): one link per line, `u v [class] [latency]`,
//!   switches numbered 0 to n - 1; `#` starts a comment.
//! - **Node-link JSON** (`.json`, `networkx.node_link_data`): `nodes` in switch order, each
//!   with an `id` and optionally `servers`; `links` (or `edges`) with `source`, `target` and
//!   optionally `class` and `latency`.
//!
//! A link's class (`local` by default, or any class name of `[link.<class>]`) sets its
//! bandwidth and, unless the link gives its own (1 to 10,000 cycles), its latency. A switch's ports are its links in the order the file lists them;
//! parallel links are separate ports. Servers per switch: the node's `servers`, else
//! `topology.servers_per_switch`, else 1.
//!
//! Routing: minimal paths and Valiant's phases from the wiring (`routing::graph_minimal`,
//! every shortest next hop under `minimal`), UGAL between them; the hop ladder makes them
//! deadlock-free (`deadlock_freedom`).

use super::{check_size, LinkClass, PortPeer, Topology, MAX_WIRING_ROUTED_SWITCHES};
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;
use std::collections::HashMap;

pub const KIND: super::Kind = super::Kind {
    name: "graph",
    about: "a network read from a file: an edge list or networkx's node-link JSON, links of any class",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    servers_per_switch: "the node's servers, else 1",
    build: |spec| Ok(std::sync::Arc::new(build(spec)?)),
};

keys! {
    /// The keys of a network from a file, read from `[topology]`.
    struct Keys {
        /// the graph: an edge list (u v [class] per line) or networkx node-link JSON (.json), relative to the experiment file
        file: String = required,
    }
}

const KEY: &str = "topology.file";

pub fn build(spec: &Spec) -> SpecResult<Graph> {
    let Keys { file } = super::own_keys(spec)?;
    let at = |what: String| SpecError::new(KEY, format!("{file:?}"), what);
    let text = std::fs::read_to_string(&file).map_err(|e| at(format!("cannot read it: {e}")))?;
    let parsed = if file.ends_with(".json") { node_link(&text) } else { edge_list(&text) }.map_err(at)?;
    let default_servers = spec.topology.servers_per_switch_or(1);
    Graph::new(parsed, default_servers).map_err(at)
}

/// A link as the file gives it: its ends, class, own latency and where it is written (a
/// line of an edge list, an index of `links`).
struct Link {
    ends: (usize, usize),
    class: LinkClass,
    latency: Option<u32>,
    at: usize,
}

/// Switches, their servers where the file gives them, and links.
struct Parsed {
    /// Node-link JSON (its links are named `links[i]`), else an edge list (by line).
    json: bool,
    switches: usize,
    servers: Vec<Option<usize>>,
    links: Vec<Link>,
}

/// The longest latency a link may have (`link.latency`'s bound).
const MAX_LATENCY: u64 = 10_000;

fn latency_of(value: u64, place: &str) -> Result<u32, String> {
    if (1..=MAX_LATENCY).contains(&value) {
        Ok(value as u32)
    } else {
        Err(format!("{place}: latency {value}; a link's latency is 1 to {MAX_LATENCY} cycles"))
    }
}

fn class_of(name: &str, line: usize) -> Result<LinkClass, String> {
    match LinkClass::from_name(name) {
        Some(LinkClass::Injection) | None => Err(format!("line {line}: link class {name:?}; allowed: {}", crate::spec::LINK_CLASS_NAMES.replace("injection, ", ""))),
        Some(c) => Ok(c),
    }
}

fn edge_list(text: &str) -> Result<Parsed, String> {
    let mut links = Vec::new();
    let mut switches = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let words: Vec<&str> = raw.split('#').next().unwrap_or("").split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        if !(2..=4).contains(&words.len()) {
            return Err(format!("line {line}: {raw:?}; a link is `u v`, then optionally its class and its latency"));
        }
        let id = |w: &str| w.parse::<usize>().map_err(|_| format!("line {line}: {w:?} is not a switch number (0, 1, 2, ...)"));
        let (u, v) = (id(words[0])?, id(words[1])?);
        // `u v 5` gives a latency, `u v global` a class, `u v global 5` both.
        let (class, latency) = match words[2..] {
            [] => (None, None),
            [x] if x.chars().all(|c| c.is_ascii_digit()) => (None, Some(x)),
            [c] => (Some(c), None),
            [c, x] => (Some(c), Some(x)),
            _ => unreachable!("2 to 4 words"),
        };
        let class = class.map_or(Ok(LinkClass::Local), |c| class_of(c, line))?;
        let latency = match latency {
            None => None,
            Some(x) => Some(latency_of(x.parse::<u64>().map_err(|_| format!("line {line}: latency {x:?} is not a number of cycles"))?, &format!("line {line}"))?),
        };
        switches = switches.max(u + 1).max(v + 1);
        links.push(Link { ends: (u, v), class, latency, at: line });
    }
    Ok(Parsed { json: false, switches, servers: vec![None; switches], links })
}

/// networkx's node-link JSON: `{"nodes": [{"id": ..}], "links": [{"source": .., "target": ..}]}`
/// (networkx 3.4 and later may write `edges`).
fn node_link(text: &str) -> Result<Parsed, String> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("line {}: not JSON: {e}", e.line()))?;
    let nodes = doc.get("nodes").and_then(|n| n.as_array()).ok_or("no \"nodes\" list; networkx's node-link JSON has one")?;
    let links = doc.get("links").or_else(|| doc.get("edges")).and_then(|l| l.as_array()).ok_or("no \"links\" (or \"edges\") list; networkx's node-link JSON has one")?;
    let mut index = HashMap::new();
    let mut servers = Vec::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        let id = node.get("id").ok_or(format!("nodes[{i}] has no \"id\""))?;
        if index.insert(id.to_string(), i).is_some() {
            return Err(format!("nodes[{i}]: id {id} appears twice"));
        }
        let s = match node.get("servers") {
            None => None,
            Some(v) => Some(v.as_u64().ok_or(format!("nodes[{i}].servers = {v}: a number of servers, 0 or more"))? as usize),
        };
        servers.push(s);
    }
    let mut out = Vec::with_capacity(links.len());
    for (i, link) in links.iter().enumerate() {
        let end = |key: &str| -> Result<usize, String> {
            let id = link.get(key).ok_or(format!("links[{i}] has no {key:?}"))?;
            index.get(&id.to_string()).copied().ok_or(format!("links[{i}].{key} = {id}: no node has that id"))
        };
        let class = match link.get("class") {
            None => LinkClass::Local,
            Some(c) => c.as_str().map_or_else(|| Err(format!("links[{i}].class = {c}: a class name")), |c| class_of(c, i).map_err(|e| e.replacen(&format!("line {i}"), &format!("links[{i}]"), 1)))?,
        };
        let latency = match link.get("latency") {
            None => None,
            Some(l) => Some(latency_of(l.as_u64().ok_or(format!("links[{i}].latency = {l}: a number of cycles"))?, &format!("links[{i}]"))?),
        };
        out.push(Link { ends: (end("source")?, end("target")?), class, latency, at: i });
    }
    Ok(Parsed { json: true, switches: nodes.len(), servers, links: out })
}

#[derive(Debug, Clone)]
pub struct Graph {
    /// Per switch, per port: the far end and its port there, the link's class and own latency.
    ports: Vec<Vec<(PortPeer, LinkClass, Option<u32>)>>,
    servers: Vec<usize>,
    /// `dist[a * n + b]`: hops between switches a and b.
    dist: Vec<u8>,
    diameter: usize,
    links: usize,
}

impl Graph {
    fn new(p: Parsed, default_servers: usize) -> Result<Graph, String> {
        let n = p.switches;
        let place = |at: usize| if p.json { format!("links[{at}]") } else { format!("line {at}") };
        if n < 2 {
            return Err(format!("{n} switches; a network needs at least 2 joined by links"));
        }
        if n > MAX_WIRING_ROUTED_SWITCHES {
            return Err(format!("{n} switches; at most {MAX_WIRING_ROUTED_SWITCHES} (routing keeps a table per pair of switches)"));
        }
        let mut ports: Vec<Vec<(PortPeer, LinkClass, Option<u32>)>> = vec![Vec::new(); n];
        for &Link { ends: (u, v), class, latency, at } in &p.links {
            if u == v {
                return Err(format!("{}: a link from switch {u} to itself", place(at)));
            }
            let (pu, pv) = (ports[u].len(), ports[v].len());
            ports[u].push((PortPeer { switch: v as u32, port: pv as u16 }, class, latency));
            ports[v].push((PortPeer { switch: u as u32, port: pu as u16 }, class, latency));
        }
        let servers: Vec<usize> = p.servers.iter().map(|s| s.unwrap_or(default_servers)).collect();
        let (radix, switch) = (0..n).map(|s| (ports[s].len() + servers[s], s)).max().expect("n >= 2");
        check_size(KEY, String::new(), n as u128, servers.iter().sum::<usize>() as u128, radix as u128).map_err(|e| format!("switch {switch}: {}", e.allowed))?;
        let dist = super::hop_distances(n, |v| ports[v].iter().map(|(peer, _, _)| peer.switch as usize))?;
        if let Some(cut) = dist[..n].iter().position(|&h| h == u8::MAX) {
            return Err(format!("the graph is not connected: no path from switch 0 to switch {cut}"));
        }
        if servers.iter().all(|&s| s == 0) {
            return Err("no switch has servers; give nodes \"servers\" or topology.servers_per_switch".into());
        }
        let diameter = *dist.iter().max().expect("n >= 2") as usize;
        Ok(Graph { ports, servers, dist, diameter, links: p.links.len() })
    }
}

impl Topology for Graph {
    fn kind(&self) -> &'static str {
        "graph"
    }
    fn num_switches(&self) -> usize {
        self.ports.len()
    }
    fn network_ports(&self, switch: usize) -> usize {
        self.ports[switch].len()
    }
    fn servers_at(&self, switch: usize) -> usize {
        self.servers[switch]
    }
    fn neighbour(&self, switch: usize, port: usize) -> Option<PortPeer> {
        self.ports[switch].get(port).map(|&(peer, _, _)| peer)
    }
    fn distance(&self, a: usize, b: usize) -> usize {
        self.dist[a * self.ports.len() + b] as usize
    }
    fn diameter(&self) -> usize {
        self.diameter
    }
    fn link_class(&self, switch: usize, port: usize) -> LinkClass {
        self.ports[switch][port].1
    }
    fn link_latency(&self, switch: usize, port: usize) -> Option<u32> {
        self.ports[switch][port].2
    }
    fn max_link_latency(&self) -> Option<u32> {
        self.ports.iter().flatten().filter_map(|p| p.2).max()
    }
    fn description(&self) -> String {
        let n = self.ports.len();
        let (lo, hi) = (self.ports.iter().map(Vec::len).min().unwrap_or(0), self.ports.iter().map(Vec::len).max().unwrap_or(0));
        let degree = if lo == hi { format!("{lo} network ports each") } else { format!("{lo} to {hi} network ports") };
        format!("graph from a file: {n} switches, {} links, {degree}, {} servers, diameter {}", self.links, self.servers.iter().sum::<usize>(), self.diameter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(text: &str, json: bool) -> Result<Graph, String> {
        Graph::new(if json { node_link(text)? } else { edge_list(text)? }, 1)
    }

    #[test]
    fn a_ring_from_an_edge_list_has_its_ports_distances_and_classes() {
        let g = graph("# ring of 4\n0 1\n1 2 global\n2 3 7\n3 0 local 9\n", false).unwrap();
        assert_eq!((g.link_latency(2, 1), g.link_latency(3, 0), g.link_latency(0, 1), g.max_link_latency()), (Some(7), Some(7), Some(9), Some(9)));
        assert_eq!(g.link_latency(0, 0), None);
        assert_eq!((g.num_switches(), g.diameter()), (4, 2));
        assert_eq!(g.distance(0, 2), 2);
        assert_eq!(g.neighbour(1, 1), Some(PortPeer { switch: 2, port: 0 }));
        assert_eq!(g.link_class(1, 1), LinkClass::Global);
        assert_eq!(g.link_class(0, 0), LinkClass::Local);
        assert_eq!(super::super::check_wiring(&g), Ok(4));
    }

    #[test]
    fn node_link_json_names_nodes_by_id_and_gives_servers() {
        let g = graph(r#"{"nodes": [{"id": "a", "servers": 2}, {"id": "b"}, {"id": "c", "servers": 0}], "links": [{"source": "a", "target": "b"}, {"source": "b", "target": "c", "class": "global"}]}"#, true).unwrap();
        assert_eq!((g.servers_at(0), g.servers_at(1), g.servers_at(2)), (2, 1, 0));
        assert_eq!(g.link_class(2, 0), LinkClass::Global);
    }

    #[test]
    fn bad_graphs_say_what_and_where() {
        let cases = [
            ("0 1\n1 1\n", false, "line 2: a link from switch 1 to itself"),
            ("0 1\n2 3\n", false, "not connected: no path from switch 0 to switch 2"),
            ("0 1\n1 x\n", false, "line 2: \"x\" is not a switch number"),
            ("0 1 local 3 4\n", false, "line 1: \"0 1 local 3 4\"; a link is"),
            ("0 1 global 0\n", false, "line 1: latency 0; a link's latency is 1 to 10000 cycles"),
            ("0 1 global x\n", false, "line 1: latency \"x\" is not a number of cycles"),
            ("0 1 fast\n", false, "line 1: link class \"fast\"; allowed: local, global"),
            ("{\"nodes\": [{\"id\": 0}], \"links\": [{\"source\": 0, \"target\": 7}]}", true, "links[0].target = 7: no node has that id"),
            ("{\"nodes\": [}", true, "line 1: not JSON"),
        ];
        for (text, json, want) in cases {
            let e = graph(text, json).err().unwrap_or_else(|| panic!("{text} accepted"));
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
