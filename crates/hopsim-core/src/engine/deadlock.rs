//! Deadlock detection on the wait-for graph of blocked input VCs.
//!
//! A deadlock is a set of input VCs whose front flits can never move because each waits only
//! for VCs of the same set: a cycle of full buffers each waiting for the next. The watchdog
//! (nothing moved for `run.watchdog` cycles) sees it only when the whole network stops; a
//! deadlock that wedges part of a torus while other flows still move is found here.
//!
//! Every `interval` cycles the detector builds the graph. An input VC whose front flit is
//! ready waits, if it is a head without an output VC, for every output VC its candidates
//! allow: one owned by another packet waits for the input VC holding that packet, one whose
//! buffer is full waits for the downstream input VC its credits come from. A routed front
//! waits for its own output VC the same way. Any option with room, credits, a link to a
//! server or a packet still arriving means the VC may move: it is not blocked. The blocked
//! VCs all of whose successors are blocked, repeatedly (the largest such set), can never
//! move if the state is settled; the set is non-empty only if it holds a cycle.
//!
//! Credits and flits in flight can make a VC look blocked for a few cycles, so a VC counts
//! only if it was in the set at the previous check too, more than the calendar's horizon
//! earlier, with the same flit at its front: it has not moved since, no credit for it is
//! still on its way, and the set of such VCs is closed under waiting. Slow progress under
//! heavy load never qualifies: some VC of every chain of waits moves.

use super::Simulation;
use crate::router::Peer;
use std::collections::HashMap;

/// Cycles between checks (at least twice the calendar horizon, see above): rare enough that
/// the check, which looks at every input VC, stays small beside a saturated run's own work
/// (docs/model.md has the measurements).
const INTERVAL: u64 = 1024;

/// What the front flit of an input VC looked like at a check: packet slot, flit, hops taken
/// and creation cycle (a slot is reused by later packets; a packet may pass a VC twice).
type Front = (u32, u16, u16, u64);

/// A deadlock found: the cycle by which it had formed and the channels of one cycle of it.
pub struct Found {
    pub formed: u64,
    pub detected: u64,
    /// Input VCs (numbered in the whole network) of one cycle of the wait-for graph, each
    /// waiting for the next.
    pub cycle: Vec<u32>,
    /// Input VCs that can never move (the cycle and those waiting on it).
    pub stuck: usize,
}

#[derive(serde::Serialize, serde::Deserialize)]
pub struct Detector {
    interval: u64,
    pub next_at: u64,
    /// Input VCs blocked at the last check, in input-VC order, with their front then and the
    /// first check that saw them blocked with that front.
    prev: Vec<(u32, Front, u64)>,
    /// The output VCs owned by a packet at an input VC's front, ascending, each with that
    /// input VC. Sorted lists searched by halving instead of an array indexed by VC: the
    /// graph holds the few VCs that are routed or blocked, while two arrays indexed by VC
    /// cost 8 bytes per VC of the network for the whole run (112 MB on the million-node
    /// torus).
    owners: Vec<(u32, u32)>,
    /// The wait-for graph of the last check.
    graph: Graph,
}

/// The wait-for graph, or one part's share of it (the switches of an MPI rank: the parts of
/// consecutive ranges, put end to end, are the whole graph, `Graph::joined`).
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Graph {
    /// Blocked input VCs, ascending (the graph's nodes are numbered in this order).
    nodes: Vec<u32>,
    /// Successors of node i: `succ[succ_start[i]..succ_start[i + 1]]` (input VCs).
    succ_start: Vec<u32>,
    succ: Vec<u32>,
    /// Each node's front flit. Not in a checkpoint, which keeps the graph of the last check
    /// as it always has (it is built again at the next check).
    #[serde(skip)]
    fronts: Vec<Front>,
}

impl Graph {
    /// The part as a rank sends it to the others, fronts included.
    pub fn encode(&self) -> Vec<u8> {
        bincode::serialize(&(&self.nodes, &self.succ_start, &self.succ, &self.fronts)).expect("a graph serialises")
    }
    pub fn decode(bytes: &[u8]) -> bincode::Result<Graph> {
        let (nodes, succ_start, succ, fronts) = bincode::deserialize(bytes)?;
        Ok(Graph { nodes, succ_start, succ, fronts })
    }

    /// The graph of consecutive ranges of switches from their parts, in order.
    pub fn joined(parts: impl IntoIterator<Item = Graph>) -> Graph {
        let mut g = Graph::default();
        for p in parts {
            let offset = g.succ.len() as u32;
            g.nodes.extend(p.nodes);
            g.succ_start.extend(p.succ_start[..p.succ_start.len() - 1].iter().map(|&k| k + offset));
            g.succ.extend(p.succ);
            g.fronts.extend(p.fronts);
        }
        g.succ_start.push(g.succ.len() as u32);
        g
    }
}

/// Whether an input VC's front may move, or is blocked (its successors then pushed).
enum Wait {
    MayMove,
    Blocked,
}

impl Detector {
    pub fn new(sim: &Simulation) -> Self {
        let interval = INTERVAL.max(2 * sim.cal.horizon());
        Detector {
            interval,
            next_at: interval,
            prev: Vec::new(),
            owners: Vec::new(),
            graph: Graph::default(),
        }
    }

    /// The periodic check: a deadlock confirmed over two checks, if any.
    pub fn check(&mut self, sim: &Simulation, now: u64) -> Option<Found> {
        self.graph = self.part(sim, now, 0..sim.parts.topo.num_switches());
        self.confirm(now)
    }

    /// `check` on the graph of a run's parts (`part` of each, in order of their switches).
    pub fn check_parts(&mut self, parts: impl IntoIterator<Item = Graph>, now: u64) -> Option<Found> {
        self.graph = Graph::joined(parts);
        self.confirm(now)
    }

    /// A deadlock confirmed over two checks in the graph just built.
    fn confirm(&mut self, now: u64) -> Option<Found> {
        // Checks are skipped while the network is empty or the engine jumps over idle
        // cycles: confirm only against a check one interval before.
        if now >= self.next_at + self.interval {
            self.prev.clear();
        }
        self.next_at = now + self.interval;
        let blocked = self.closed_set(vec![true; self.graph.nodes.len()]);
        // Nodes come in input-VC order, as `prev` does: merge the two lists.
        let mut seen = Vec::new();
        let mut confirmed = vec![false; self.graph.nodes.len()];
        let mut k = 0;
        for (i, &gv) in self.graph.nodes.iter().enumerate() {
            if !blocked[i] {
                continue;
            }
            let front = self.graph.fronts[i];
            while k < self.prev.len() && self.prev[k].0 < gv {
                k += 1;
            }
            let since = match self.prev.get(k) {
                Some(&(g, f, since)) if g == gv && f == front => since,
                _ => now,
            };
            confirmed[i] = since < now;
            seen.push((gv, front, since));
        }
        self.prev = seen;
        let stuck = self.closed_set(confirmed);
        let cycle = self.cycle_in(&stuck)?;
        let since = |gv: &u32| self.prev.binary_search_by_key(gv, |p| p.0).map_or(now, |k| self.prev[k].2);
        let formed = cycle.iter().map(since).max().unwrap_or(now);
        Some(Found { formed, detected: now, cycle, stuck: stuck.iter().filter(|&&s| s).count() })
    }

    /// A cycle of the wait-for graph now, unconfirmed (when the watchdog has seen nothing
    /// move for `run.watchdog` cycles the state is settled anyway).
    pub fn cycle_now(&mut self, sim: &Simulation, now: u64) -> Option<Found> {
        self.graph = self.part(sim, now, 0..sim.parts.topo.num_switches());
        self.unconfirmed(now)
    }

    /// `cycle_now` on the graph of a run's parts.
    pub fn cycle_now_in_parts(&mut self, parts: impl IntoIterator<Item = Graph>, now: u64) -> Option<Found> {
        self.graph = Graph::joined(parts);
        self.unconfirmed(now)
    }

    fn unconfirmed(&self, now: u64) -> Option<Found> {
        let stuck = self.closed_set(vec![true; self.graph.nodes.len()]);
        let cycle = self.cycle_in(&stuck)?;
        Some(Found { formed: now, detected: now, cycle, stuck: stuck.iter().filter(|&&s| s).count() })
    }

    /// The input VC whose front packet owns output VC `gov`, if one does (network VCs).
    fn owner_of(&self, gov: usize) -> Option<u32> {
        let k = self.owners.binary_search_by_key(&(gov as u32), |&(owned, _)| owned).ok()?;
        Some(self.owners[k].1)
    }

    /// Input VC `gv`'s place among the blocked ones, if it is blocked.
    fn node_of(&self, gv: u32) -> Option<usize> {
        self.graph.nodes.binary_search(&gv).ok()
    }

    /// The blocked input VCs of `switches` and what each waits for: their share of the
    /// wait-for graph. Every wait at a switch but for the downstream buffer is within the
    /// switch, so the shares of a run's parts join into its graph.
    pub fn part(&mut self, sim: &Simulation, now: u64, switches: std::ops::Range<usize>) -> Graph {
        let r = sim.switch_side.routers();
        let vcs = r.vcs;
        let mut g = Graph::default();
        self.owners.clear();
        for s in switches.clone() {
            let base = r.first_port(s);
            for gp in r.ports_of(s) {
                let mut routed = r.ports[gp].flits_with_vc();
                while routed != 0 {
                    let v = routed.trailing_zeros() as usize;
                    routed &= routed - 1;
                    let q = &r.vc[gp * vcs + v];
                    let gov = (base + q.route_port as usize) * vcs + q.route_vc as usize;
                    self.owners.push((r.network_vc_of(gov) as u32, r.network_vc_of(gp * vcs + v) as u32));
                }
            }
        }
        self.owners.sort_unstable();
        for s in switches {
            for gp in r.ports_of(s) {
                let mut nonempty = r.ports[gp].in_vcs_nonempty;
                while nonempty != 0 {
                    let v = nonempty.trailing_zeros() as usize;
                    nonempty &= nonempty - 1;
                    let start = g.succ.len();
                    match self.waits(sim, s, gp, v, now, &mut g.succ) {
                        Wait::Blocked => {
                            let gv = gp * vcs + v;
                            let nv = r.network_vc_of(gv) as u32;
                            debug_assert!(g.nodes.last().is_none_or(|&last| last < nv));
                            g.nodes.push(nv);
                            g.succ_start.push(start as u32);
                            g.fronts.push(front(sim, gv));
                        }
                        Wait::MayMove => g.succ.truncate(start),
                    }
                }
            }
        }
        g.succ_start.push(g.succ.len() as u32);
        g
    }

    /// Whether the front of input VC `v` of global port `gp` (of `switch`) is blocked;
    /// if so its successors (network VCs) are pushed onto `succ`.
    fn waits(&self, sim: &Simulation, switch: usize, gp: usize, v: usize, now: u64, succ: &mut Vec<u32>) -> Wait {
        let r = sim.switch_side.routers();
        let vcs = r.vcs;
        let base = r.first_port(switch);
        let q = &r.vc[gp * vcs + v];
        let Some(e) = q.input.front() else { return Wait::MayMove };
        if e.ready as u64 > now {
            return Wait::MayMove;
        }
        if r.ports[gp].routed_vcs >> v & 1 == 1 {
            let gov = (base + q.route_port as usize) * vcs + q.route_vc as usize;
            return match drain_of(sim, gov) {
                Some(d) => {
                    succ.push(d);
                    Wait::Blocked
                }
                None => Wait::MayMove,
            };
        }
        let mask = if vcs >= 32 { u32::MAX } else { (1u32 << vcs) - 1 };
        if sim.packets.candidates(e.packet).is_empty() {
            // Arrived behind another and not yet routed at the front
            // (`NextHeadRouting::AtFront`): its switch routes it at its next step.
            return Wait::MayMove;
        }
        for c in sim.packets.candidates(e.packet) {
            let mut allowed = c.vcs & mask;
            while allowed != 0 {
                let ov = allowed.trailing_zeros() as usize;
                allowed &= allowed - 1;
                let gov = (base + c.hop.port as usize) * vcs + ov;
                let next = if r.vc[gov].flag(crate::router::Vc::OUT_OWNED) { self.owner_of(r.network_vc_of(gov)) } else { drain_of(sim, gov) };
                match next {
                    Some(n) => succ.push(n),
                    None => return Wait::MayMove,
                }
            }
        }
        Wait::Blocked
    }

    /// The largest set of nodes, among those `inside` admits, whose successors are all in
    /// the set (a node with one successor outside may move once that one does).
    fn closed_set(&self, mut inside: Vec<bool>) -> Vec<bool> {
        let n = self.graph.nodes.len();
        let edges = |i: usize| &self.graph.succ[self.graph.succ_start[i] as usize..self.graph.succ_start[i + 1] as usize];
        // Predecessors in compressed rows: count, prefix sums, fill.
        let mut pred_start = vec![0u32; n + 1];
        let mut out = Vec::new();
        for i in 0..n {
            for &to in edges(i) {
                match self.node_of(to) {
                    None => out.push(i as u32),
                    Some(j) => pred_start[j + 1] += 1,
                }
            }
        }
        for j in 0..n {
            pred_start[j + 1] += pred_start[j];
        }
        let mut fill = pred_start.clone();
        let mut preds = vec![0u32; pred_start[n] as usize];
        for i in 0..n {
            for &to in edges(i) {
                if let Some(j) = self.node_of(to) {
                    preds[fill[j] as usize] = i as u32;
                    fill[j] += 1;
                }
            }
        }
        out.extend((0..n as u32).filter(|&i| !inside[i as usize]));
        for &i in &out {
            inside[i as usize] = false;
        }
        while let Some(j) = out.pop() {
            for &i in &preds[pred_start[j as usize] as usize..pred_start[j as usize + 1] as usize] {
                if inside[i as usize] {
                    inside[i as usize] = false;
                    out.push(i);
                }
            }
        }
        inside
    }

    /// One cycle inside a closed set: every node there has a successor there, so following
    /// successors must come back to a node already visited.
    fn cycle_in(&self, inside: &[bool]) -> Option<Vec<u32>> {
        let start = inside.iter().position(|&b| b)?;
        let mut order: Vec<u32> = Vec::new();
        let mut at: HashMap<u32, usize> = HashMap::new();
        let mut i = start as u32;
        loop {
            if let Some(&k) = at.get(&i) {
                return Some(order[k..].iter().map(|&j| self.graph.nodes[j as usize]).collect());
            }
            at.insert(i, order.len());
            order.push(i);
            let succ = &self.graph.succ[self.graph.succ_start[i as usize] as usize..self.graph.succ_start[i as usize + 1] as usize];
            i = succ.iter().filter_map(|&to| self.node_of(to)).find(|&j| inside[j])? as u32;
        }
    }
}

/// The downstream input VC (a network VC) a full output VC `gov` waits for, or `None` if it
/// has room for a flit (counting the flit its link is finishing) or can send one (credits,
/// or a server).
fn drain_of(sim: &Simulation, gov: usize) -> Option<u32> {
    let r = sim.switch_side.routers();
    let prm = &sim.parts.params;
    let vcs = r.vcs;
    let (gp, ov) = (gov / vcs, gov % vcs);
    let port = &r.ports[gp];
    let q = &r.vc[gov];
    let leaving = if port.tx_pending && port.tx_vc as usize == ov { port.tx_phits as u32 } else { 0 };
    // Room for the shortest flit, or credits for the flit at the front.
    let next = q.output.front()?;
    if prm.out_cap - (q.out_used as u32 - leaving) >= prm.flit_phits(prm.min_packet_phits) as u32 || q.credits >= next.phits {
        return None;
    }
    match port.peer {
        Peer::Switch { switch, port } => Some((r.network_port(switch as usize, port as usize) * vcs + ov) as u32),
        Peer::Server(_) | Peer::Unconnected => None,
    }
}

/// The front of a blocked input VC (`gv`, an index into the VC arrays), to tell at the next
/// check whether it moved.
fn front(sim: &Simulation, gv: usize) -> Front {
    let r = sim.switch_side.routers();
    let q = &r.vc[gv];
    let e = q.input.front().expect("a blocked input VC holds a flit");
    let p = sim.packets.get(e.packet);
    // A head counts its next hop once it has an output VC (router/step.rs, `count_hop`):
    // winning one is not moving, so the hops are those it had when it reached this VC.
    let gp = gv / r.vcs;
    let routed = r.ports[gp].routed_vcs >> (gv % r.vcs) & 1 == 1;
    let counted = routed && e.flit.is_head() && {
        let out = r.first_port(r.switch_of_port(gp)) + q.route_port as usize;
        matches!(r.ports[out].peer, Peer::Switch { .. })
    };
    (e.packet, e.flit.index(), p.state.hops - counted as u16, p.created)
}

/// `deadlock_where`: when it formed and the channels of the cycle, each `upstream switch ->
/// switch vc v`, each waiting for the next and the last for the first. From the topology, so
/// that an MPI rank describes VCs of switches it does not hold.
pub fn describe(sim: &Simulation, f: &Found) -> String {
    let r = sim.switch_side.routers();
    let topo = sim.parts.topo.as_ref();
    let vcs = r.vcs;
    let name = |s: usize| {
        let c = topo.coordinates(s);
        if c.is_empty() {
            format!("switch {s}")
        } else {
            format!("switch {s} {c:?}")
        }
    };
    let shown: Vec<String> = f
        .cycle
        .iter()
        .take(64)
        .map(|&nv| {
            let np = nv as usize / vcs;
            let s = r.switch_of_network_port(np);
            let p = np - r.network_port(s, 0);
            let from = if p < topo.network_ports(s) {
                topo.neighbour(s, p).map_or_else(|| "?".into(), |up| name(up.switch as usize))
            } else {
                format!("server {}", sim.parts.servers.server(s, p - topo.network_ports(s)))
            };
            format!("{from} -> {} vc {}", name(s), nv as usize % vcs)
        })
        .collect();
    let more = if f.cycle.len() > shown.len() { format!("; ... {} more", f.cycle.len() - shown.len()) } else { String::new() };
    format!(
        "wait-for cycle formed by cycle {} (detected at {}; {} input VCs can never move): {} channels, each full and waiting for the next: {}{more}",
        f.formed,
        f.detected,
        f.stuck,
        f.cycle.len(),
        shown.join("; ")
    )
}
