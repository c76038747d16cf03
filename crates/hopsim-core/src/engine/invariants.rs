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
    conclude(sim, [account(sim, |_| true)])
}

/// What one part of a run holds, for the conservation check: the whole run on one process,
/// or the switches and servers of one MPI rank (engine/ranks), whose parts `conclude` adds up.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Accounting {
    /// Per input VC of the network: phits held for it in this part (in its buffer, on the
    /// link towards it, as credits on their way back upstream).
    held: Vec<u64>,
    /// Per input VC: the credits its upstream output VC (or NIC) holds, if this part owns it.
    upstream_credits: Vec<u32>,
    /// Output VCs of this part whose reserved space is not their queued flits plus the flit
    /// on their link, ascending.
    out_wrong: Vec<u32>,
    in_flight: u64,
    queued: u64,
    generated: u64,
    delivered: u64,
    /// A broken allocation set among this part's switches (`allocation_sets`).
    sets: Option<String>,
}

/// The share of the check of the switches `owns` says are this part's, with their servers,
/// and of the events in this part's calendar.
pub fn account(sim: &Simulation, owns: impl Fn(usize) -> bool) -> Accounting {
    let r = sim.switch_side.routers();
    let vcs = r.vcs;
    // A flit's phits, from the flit itself (buffers) or from its packet (events).
    let flit_phits = |packet: u32| sim.parts.params.flit_phits(sim.packets.get(packet).phits) as u64;
    let mut held = vec![0u64; r.vc.len()];
    let mut upstream_credits = vec![0u32; r.vc.len()];
    let mut out_wrong = Vec::new();
    let mut in_flight = 0u64;
    for sw in (0..r.network_ports.len()).filter(|&sw| owns(sw)) {
        for gp in r.ports_of(sw) {
            let port = &r.ports[gp];
            for v in 0..vcs {
                let gv = gp * vcs + v;
                let q = &r.vc[gv];
                held[gv] += q.input.iter(&r.in_store, Ring::of(gv, r.in_slots)).map(|e| e.phits as u64).sum::<u64>();
                let out_held = q.output.iter(&r.out_store, Ring::of(gv, r.out_slots)).map(|e| e.phits as u64).sum::<u64>();
                in_flight += out_held;
                // Output side: reserved space = queued flits + the flit on the link.
                let on_link = if port.tx_pending && port.tx_vc as usize == v { port.tx_phits as u64 } else { 0 };
                if q.out_used as u64 != out_held + on_link {
                    out_wrong.push(gv as u32);
                }
                if let Peer::Switch { switch, port: peer_port } = port.peer {
                    upstream_credits[r.global_port(switch as usize, peer_port as usize) * vcs + v] = q.credits as u32;
                }
            }
        }
    }
    in_flight += held.iter().sum::<u64>();
    let nics = sim.server_side.nics();
    for (s, nic) in nics.nics.iter().enumerate().filter(|(_, nic)| owns(nic.switch as usize)) {
        for v in 0..vcs {
            upstream_credits[r.global_port(nic.switch as usize, nic.port as usize) * vcs + v] = nics.credits[s * vcs + v];
        }
    }
    for ev in sim.cal.pending_events() {
        match *ev {
            Event::FlitArrive { switch, port, vc, packet, .. } => {
                let u = flit_phits(packet);
                held[r.global_port(switch as usize, port as usize) * vcs + vc as usize] += u;
                in_flight += u;
            }
            Event::Eject { packet, .. } => in_flight += flit_phits(packet),
            Event::Credit { switch, port, vc, phits } => {
                let gp = r.global_port(switch as usize, port as usize);
                if let Peer::Switch { switch: down, port: down_port } = r.ports[gp].peer {
                    held[r.global_port(down as usize, down_port as usize) * vcs + vc as usize] += phits as u64;
                }
            }
            Event::NicCredit { server, vc, phits } => {
                let nic = &nics.nics[server as usize];
                held[r.global_port(nic.switch as usize, nic.port as usize) * vcs + vc as usize] += phits as u64;
            }
        }
    }
    let queued = nics.queued_phits() + sim.server_side.backlog_phits(&sim.parts.params);
    let st = sim.server_side.stats();
    let sets = allocation_sets(r, &owns).err();
    Accounting { held, upstream_credits, out_wrong, in_flight, queued, generated: st.phits_generated, delivered: st.phits_delivered, sets }
}

/// The check of the whole run from its parts' shares (`account`).
pub fn conclude(sim: &Simulation, parts: impl IntoIterator<Item = Accounting>) -> Conservation {
    let mut parts = parts.into_iter();
    let mut all = parts.next().expect("a run has at least one part");
    for p in parts {
        all.held.iter_mut().zip(&p.held).for_each(|(a, b)| *a += b);
        all.upstream_credits.iter_mut().zip(&p.upstream_credits).for_each(|(a, b)| *a += b);
        all.out_wrong.extend(p.out_wrong);
        all.in_flight += p.in_flight;
        all.queued += p.queued;
        all.generated += p.generated;
        all.delivered += p.delivered;
        all.sets = all.sets.or(p.sets);
    }
    all.out_wrong.sort_unstable();
    let Accounting { held, upstream_credits, out_wrong, in_flight, queued, generated, delivered, sets } = all;
    let mut first_violation = None;
    let phits_conserved = generated == delivered + in_flight + queued;
    if !phits_conserved {
        first_violation = Some(format!("phits generated {generated} != delivered {delivered} + in flight {in_flight} + queued {queued}"));
    }
    let r = sim.switch_side.routers();
    let vcs = r.vcs;
    let cap = sim.parts.params.in_cap as u64;
    let mut credits_conserved = true;
    for gp in 0..r.ports.len() {
        if let Peer::Unconnected = r.ports[gp].peer {
            continue;
        }
        for v in 0..vcs {
            let gv = gp * vcs + v;
            let out_ok = out_wrong.binary_search(&(gv as u32)).is_err();
            if held[gv] + upstream_credits[gv] as u64 != cap || !out_ok {
                credits_conserved = false;
                if first_violation.is_none() {
                    first_violation = Some(format!(
                        "global port {gp} vc {v}: held {} + upstream credits {} != capacity {cap} (output ok: {out_ok})",
                        held[gv], upstream_credits[gv]
                    ));
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
fn allocation_sets(r: &crate::router::Routers, owns: impl Fn(usize) -> bool) -> Result<(), String> {
    for sw in (0..r.network_ports.len()).filter(|&sw| owns(sw)) {
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
