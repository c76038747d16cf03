//! Conservation checks run at the end of every run: they recount what the counters claim from
//! the buffers and the events still in flight.

use crate::calendar::Event;
use super::Simulation;
use crate::router::{Peer, Ring};

pub struct Conservation {
    pub phits_in_flight: u64,
    pub phits_queued: u64,
    pub phits_conserved: bool,
    pub credits_conserved: bool,
    pub first_violation: Option<String>,
}

/// Recount the whole run (one process).
pub fn check(sim: &Simulation) -> Conservation {
    conclude(sim, [account(sim)])
}

/// What one part of a run holds, for the conservation check: the whole run on one process,
/// or the switches and servers of one MPI rank (engine/ranks), whose parts `conclude` adds up.
/// VCs are numbered in the whole network (`Routers::network_vc_of`).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Accounting {
    /// The part's first input VC; the part's VCs follow it.
    first_vc: u32,
    /// Per input VC of the part: phits held for it in this part (in its buffer, on the link
    /// towards it, as credits on their way back upstream).
    held: Vec<u32>,
    /// Per input VC of the part: the credits its upstream output VC (or NIC) holds, if this
    /// part owns that one.
    upstream_credits: Vec<u32>,
    /// The same two for input VCs of other parts, ascending by VC, one entry each.
    foreign: Vec<(u32, u32, u32)>,
    /// The part's ports with no link, ascending (network numbering).
    unconnected: Vec<u32>,
    /// Output VCs of this part whose reserved space is not their queued flits plus the flit
    /// on their link, ascending.
    out_wrong: Vec<u32>,
    in_flight: u64,
    queued: u64,
    generated: u64,
    delivered: u64,
    /// A broken allocation set among this part's switches (`allocation_sets`), or a backlog
    /// kept for routing that is not the port's (`Routers::observed_stale`).
    sets: Option<String>,
}

/// The share of the check of the switches the run's process holds, with their servers, and of
/// the events in its calendar.
pub fn account(sim: &Simulation) -> Accounting {
    let r = sim.switch_side.routers();
    let vcs = r.vcs;
    let held_switches = r.held();
    // A flit's phits, from the flit itself (buffers) or from its packet (events).
    let flit_phits = |packet: u32| sim.parts.params.flit_phits(sim.packets.get(packet).phits) as u32;
    let mut held = vec![0u32; r.vc.len()];
    let mut upstream_credits = vec![0u32; r.vc.len()];
    let mut foreign = std::collections::BTreeMap::<u32, (u32, u32)>::new();
    let mut unconnected = Vec::new();
    let mut out_wrong = Vec::new();
    let mut in_flight = 0u64;
    // Network VC `nv`'s two counts, in this part's arrays or among the foreign ones.
    let mut add = |nv: usize, phits: u32, credits: u32| match r.held_vc(nv) {
        Some(gv) => {
            held[gv] += phits;
            upstream_credits[gv] += credits;
        }
        None => {
            let e = foreign.entry(nv as u32).or_default();
            e.0 += phits;
            e.1 += credits;
        }
    };
    for sw in held_switches.clone() {
        for gp in r.ports_of(sw) {
            let port = &r.ports[gp];
            if let Peer::Unconnected = port.peer {
                unconnected.push(r.network_port_of(gp) as u32);
            }
            for v in 0..vcs {
                let gv = gp * vcs + v;
                let q = &r.vc[gv];
                let queued: u64 = q.input.iter(&r.in_store, Ring::of(gv, r.in_slots)).map(|e| e.phits as u64).sum();
                add(r.network_vc_of(gv), queued as u32, 0);
                in_flight += queued;
                let out_held = q.output.iter(&r.out_store, Ring::of(gv, r.out_slots)).map(|e| e.phits as u64).sum::<u64>();
                in_flight += out_held;
                // Output side: reserved space = queued flits + the flit on the link.
                let on_link = if port.tx_pending && port.tx_vc as usize == v { port.tx_phits as u64 } else { 0 };
                if q.out_used as u64 != out_held + on_link {
                    out_wrong.push(r.network_vc_of(gv) as u32);
                }
                if let Peer::Switch { switch, port: peer_port } = port.peer {
                    add(r.network_port(switch as usize, peer_port as usize) * vcs + v, 0, q.credits as u32);
                }
            }
        }
    }
    let nics = sim.server_side.nics();
    // The NICs held are those of the servers of the switches held.
    for (i, nic) in nics.nics.iter().enumerate() {
        for v in 0..vcs {
            add(r.network_port(nic.switch as usize, nic.port as usize) * vcs + v, 0, nics.credits[i * vcs + v]);
        }
    }
    for ev in sim.cal.pending_events() {
        match *ev {
            Event::FlitArrive { switch, port, vc, packet, .. } => {
                let u = flit_phits(packet);
                add(r.network_port(switch as usize, port as usize) * vcs + vc as usize, u, 0);
                in_flight += u as u64;
            }
            Event::Eject { packet, .. } => in_flight += flit_phits(packet) as u64,
            Event::Credit { switch, port, vc, phits } => {
                let gp = r.global_port(switch as usize, port as usize);
                if let Peer::Switch { switch: down, port: down_port } = r.ports[gp].peer {
                    add(r.network_port(down as usize, down_port as usize) * vcs + vc as usize, phits as u32, 0);
                }
            }
            Event::NicCredit { server, vc, phits } => {
                let nic = nics.nic(server as usize);
                add(r.network_port(nic.switch as usize, nic.port as usize) * vcs + vc as usize, phits as u32, 0);
            }
        }
    }
    let queued = nics.queued_phits() + sim.server_side.backlog_phits(&sim.parts.params);
    let st = sim.server_side.stats();
    let sets = allocation_sets(r).err().or_else(|| r.observed_stale(sim.parts.params.queue_reach));
    let foreign = foreign.into_iter().map(|(nv, (h, c))| (nv, h, c)).collect();
    let first_vc = r.network_vc_of(0) as u32;
    Accounting { first_vc, held, upstream_credits, foreign, unconnected, out_wrong, in_flight, queued, generated: st.phits_generated, delivered: st.phits_delivered, sets }
}

/// The check of the whole run from its parts' shares (`account`), in the order of their
/// switches.
pub fn conclude(sim: &Simulation, parts: impl IntoIterator<Item = Accounting>) -> Conservation {
    let parts: Vec<Accounting> = parts.into_iter().collect();
    let (mut in_flight, mut queued, mut generated, mut delivered) = (0u64, 0u64, 0u64, 0u64);
    let mut out_wrong = Vec::new();
    let mut foreign = Vec::new();
    let mut sets = None;
    for p in &parts {
        in_flight += p.in_flight;
        queued += p.queued;
        generated += p.generated;
        delivered += p.delivered;
        out_wrong.extend_from_slice(&p.out_wrong);
        foreign.extend_from_slice(&p.foreign);
        sets = sets.or(p.sets.clone());
    }
    out_wrong.sort_unstable();
    foreign.sort_unstable_by_key(|&(nv, _, _)| nv);
    let mut first_violation = None;
    let phits_conserved = generated == delivered + in_flight + queued;
    if !phits_conserved {
        first_violation = Some(format!("phits generated {generated} != delivered {delivered} + in flight {in_flight} + queued {queued}"));
    }
    let vcs = sim.switch_side.routers().vcs;
    let cap = sim.parts.params.in_cap as u64;
    let mut credits_conserved = true;
    let mut other = foreign.iter().peekable();
    for p in &parts {
        for (i, (&held, &credits)) in p.held.iter().zip(&p.upstream_credits).enumerate() {
            let nv = p.first_vc as usize + i;
            let (mut held, mut credits) = (held as u64, credits as u64);
            while let Some(&&(f, h, c)) = other.peek() {
                if f as usize > nv {
                    break;
                }
                if f as usize == nv {
                    held += h as u64;
                    credits += c as u64;
                }
                other.next();
            }
            let (np, v) = (nv / vcs, nv % vcs);
            if p.unconnected.binary_search(&(np as u32)).is_ok() {
                continue;
            }
            let out_ok = out_wrong.binary_search(&(nv as u32)).is_err();
            if held + credits != cap || !out_ok {
                credits_conserved = false;
                if first_violation.is_none() {
                    first_violation = Some(format!("global port {np} vc {v}: held {held} + upstream credits {credits} != capacity {cap} (output ok: {out_ok})"));
                }
            }
        }
    }
    // The allocators' port bit sets are buffer bookkeeping too: a port left out of
    // `PortSets::va` while a head in it needs an output VC would never be allocated.
    if let Some(e) = sets {
        credits_conserved = false;
        first_violation.get_or_insert(e);
    }
    Conservation { phits_in_flight: in_flight, phits_queued: queued, phits_conserved, credits_conserved, first_violation }
}

/// Every port with a head that needs an output VC is in its switch's `PortSets::va`, a port's
/// `out_vcs_nonempty` names exactly its output VCs that hold a flit (the link stage sends
/// from no other), and every output VC with waiting heads is marked as waited on (else they
/// would never be woken).
fn allocation_sets(r: &crate::router::Routers) -> Result<(), String> {
    for sw in r.held() {
        for p in 0..r.num_ports(sw) {
            let port = &r.ports[r.global_port(sw, p)];
            let (word, bit) = r.port_bit(sw, p);
            if port.heads_needing_vc() != 0 && r.port_sets[word].va & bit == 0 {
                return Err(format!("switch {sw} port {p}: heads needing an output VC but not in its va port set"));
            }
            let gp = r.global_port(sw, p);
            let holding = (0..r.vcs).filter(|&v| !r.vc[gp * r.vcs + v].output.is_empty()).fold(0u32, |m, v| m | 1 << v);
            if port.out_vcs_nonempty != holding {
                return Err(format!("switch {sw} port {p}: output VCs marked {:#b} but holding flits {holding:#b}", port.out_vcs_nonempty));
            }
        }
    }
    let w = r.waiter_words;
    if let Some(gov) = (0..r.vc.len()).find(|&gov| !r.vc[gov].flag(crate::router::Vc::WAITED_ON) && r.va_waiters[gov * w..(gov + 1) * w].iter().any(|&b| b != 0)) {
        return Err(format!("output VC {gov}: heads wait for it but it is not marked as waited on"));
    }
    Ok(())
}
