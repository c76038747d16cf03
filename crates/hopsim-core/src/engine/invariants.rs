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

pub fn check(sim: &Simulation) -> Conservation {
    let r = sim.switch_side.routers();
    let vcs = r.vcs;
    // A flit's phits, from the flit itself (buffers) or from its packet (events).
    let flit_phits = |packet: u32| sim.parts.params.flit_phits(sim.packets.get(packet).phits) as u64;
    // Phits held for each input VC: in its buffer, on the link towards it, or as credits on
    // their way back upstream; and phits reserved in each output VC's buffer.
    let mut held = vec![0u64; r.vc.len()];
    let mut out_held = vec![0u64; r.vc.len()];
    let mut in_flight = 0u64;
    for (gv, q) in r.vc.iter().enumerate() {
        held[gv] += q.input.iter(&r.in_store, Ring::of(gv, r.in_slots)).map(|e| e.phits as u64).sum::<u64>();
        out_held[gv] = q.output.iter(&r.out_store, Ring::of(gv, r.out_slots)).map(|e| e.phits as u64).sum::<u64>();
        in_flight += held[gv] + out_held[gv];
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
                let nic = &sim.server_side.nics().nics[server as usize];
                held[r.global_port(nic.switch as usize, nic.port as usize) * vcs + vc as usize] += phits as u64;
            }
        }
    }
    let queued = sim.server_side.nics().queued_phits() + sim.server_side.backlog_phits(&sim.parts.params);
    let st = sim.server_side.stats();
    let mut first_violation = None;
    let phits_conserved = st.phits_generated == st.phits_delivered + in_flight + queued;
    if !phits_conserved {
        first_violation = Some(format!(
            "phits generated {} != delivered {} + in flight {} + queued {}",
            st.phits_generated, st.phits_delivered, in_flight, queued
        ));
    }

    let cap = sim.parts.params.in_cap as u64;
    let mut credits_conserved = true;
    for gp in 0..r.ports.len() {
        for v in 0..vcs {
            let gv = gp * vcs + v;
            let upstream_credits = match r.ports[gp].peer {
                Peer::Switch { switch, port } => r.vc[r.global_port(switch as usize, port as usize) * vcs + v].credits as u64,
                Peer::Server(s) => sim.server_side.nics().credits[s as usize * vcs + v] as u64,
                Peer::Unconnected => continue,
            };
            // Output side: reserved space = queued flits + the flit on the link.
            let port = &r.ports[gp];
            let on_link = if port.tx_pending && port.tx_vc as usize == v { port.tx_phits as u64 } else { 0 };
            let out_ok = r.vc[gv].out_used as u64 == out_held[gv] + on_link;
            if held[gv] + upstream_credits != cap || !out_ok {
                credits_conserved = false;
                if first_violation.is_none() {
                    first_violation = Some(format!(
                        "global port {gp} vc {v}: held {} + upstream credits {upstream_credits} != capacity {cap} (output ok: {out_ok})",
                        held[gv]
                    ));
                }
            }
        }
    }
    // The allocators' port bit sets are buffer bookkeeping too: a port left out of
    // `PortSets::va` while a head in it needs an output VC would never be allocated.
    if let Err(e) = allocation_sets(r) {
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
    for sw in 0..r.network_ports.len() {
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
