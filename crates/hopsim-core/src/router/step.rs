//! One cycle of one switch: the output links send, then the separable allocator moves flits
//! from input buffers through the crossbar into output buffers.
//!
//! Timing (documented in docs/model.md): a head arriving at cycle `a` may be allocated from
//! `a + pipeline_delay`; granted at `t`, it is in the output buffer at `t + 1` and the link may
//! start it then; it reaches the next input buffer `link.latency` cycles after it starts.

use super::{Entry, Peer, Routers};
use crate::engine::calendar::{Calendar, Event, NEVER};
use crate::engine::Params;
use crate::packet::Arena;

pub struct StepCtx<'a> {
    pub routers: &'a mut Routers,
    pub packets: &'a mut Arena,
    pub cal: &'a mut Calendar,
    pub params: &'a Params,
    pub scratch: &'a mut Scratch,
    pub measuring: bool,
    pub last_progress: &'a mut u64,
    pub phit_hops: &'a mut u64,
}

/// Reused between steps so the allocator never allocates.
#[derive(Default)]
pub struct Scratch {
    requests: Vec<Request>,
    /// Best request index per output port of the switch being stepped.
    best: Vec<u32>,
}

#[derive(Clone, Copy)]
struct Request {
    in_port: u16,
    in_vc: u8,
    out_port: u16,
    out_vc: u8,
}

const NONE: u32 = u32::MAX;

pub fn step(switch: usize, now: u64, cx: &mut StepCtx) {
    let mut wake = NEVER;
    link_stage(switch, now, cx, &mut wake);
    allocation_stage(switch, now, cx, &mut wake);
    if wake != NEVER {
        cx.cal.wake_router(switch, wake);
    }
}

#[inline]
fn note(wake: &mut u64, t: u64) {
    if t < *wake {
        *wake = t;
    }
}

fn link_stage(switch: usize, now: u64, cx: &mut StepCtx, wake: &mut u64) {
    let r = &mut *cx.routers;
    let vcs = r.vcs;
    let u = cx.params.flit_phits;
    let base = r.port_base[switch] as usize;
    let end = r.port_base[switch + 1] as usize;
    for gp in base..end {
        let port = r.ports[gp];
        if port.tx_pending && port.link_free <= now {
            r.vc[gp * vcs + port.tx_vc as usize].out_used -= port.tx_phits as u32;
            r.ports[gp].tx_pending = false;
        }
        if port.out_flits == 0 {
            continue;
        }
        if port.link_free > now {
            note(wake, port.link_free);
            continue;
        }
        let is_server = matches!(port.peer, Peer::Server(_));
        for k in 0..vcs {
            let v = (port.rr_link_vc as usize + k) % vcs;
            let gv = gp * vcs + v;
            let Some(e) = r.vc[gv].output.front(&r.out_store) else { continue };
            if e.ready as u64 > now {
                note(wake, e.ready as u64);
                continue;
            }
            if !is_server && r.vc[gv].credits < u as u32 {
                continue; // a credit event will wake the switch
            }
            let e = r.vc[gv].output.pop(&r.out_store, r.out_slots);
            r.vc[gv].credits -= u as u32;
            let p = &mut r.ports[gp];
            p.out_flits -= 1;
            p.link_free = now + u as u64;
            p.tx_pending = true;
            p.tx_vc = v as u8;
            p.tx_phits = u;
            p.rr_link_vc = ((v + 1) % vcs) as u8;
            note(wake, now + u as u64);
            // Count the phits that cross the link inside the measured window.
            let (lo, hi) = (now.max(cx.params.window.0), (now + u as u64).min(cx.params.window.1));
            if hi > lo {
                r.link_phits[gp] += hi - lo;
            }
            *cx.last_progress = now;
            let lat = cx.params.latency as u64;
            match port.peer {
                Peer::Switch { switch: to, port: to_port } => {
                    *cx.phit_hops += u as u64;
                    cx.cal.schedule(
                        now + lat,
                        now,
                        Event::FlitArrive { switch: to, port: to_port, vc: v as u8, packet: e.packet, flit: e.flit },
                    );
                }
                Peer::Server(server) => {
                    cx.cal.schedule(now + lat + u as u64 - 1, now, Event::Eject { server, packet: e.packet, flit: e.flit });
                }
                Peer::Unconnected => unreachable!("routing sent a flit to an unconnected port"),
            }
            break;
        }
    }
}

fn allocation_stage(switch: usize, now: u64, cx: &mut StepCtx, wake: &mut u64) {
    let r = &mut *cx.routers;
    let vcs = r.vcs;
    let prm = cx.params;
    let u = prm.flit_phits as u32;
    let base = r.port_base[switch] as usize;
    let nports = r.port_base[switch + 1] as usize - base;
    let sc = &mut *cx.scratch;
    sc.requests.clear();
    if sc.best.len() < nports {
        sc.best.resize(nports, NONE);
    }

    // Input arbitration: each input port offers one request, VCs taken round-robin.
    for ip in 0..nports {
        let gp = base + ip;
        let port = r.ports[gp];
        if port.in_flits == 0 {
            continue;
        }
        if port.xbar_in_free > now {
            note(wake, port.xbar_in_free);
            continue;
        }
        for k in 0..vcs {
            let v = (port.rr_in_vc as usize + k) % vcs;
            let gv = gp * vcs + v;
            let Some(e) = r.vc[gv].input.front(&r.in_store) else { continue };
            if e.ready as u64 > now {
                note(wake, e.ready as u64);
                continue;
            }
            let choice = if r.vc[gv].routed {
                // Wormhole body flit: follows its head.
                let (op, ov) = (r.vc[gv].route_port as usize, r.vc[gv].route_vc as usize);
                let go = base + op;
                if r.ports[go].xbar_out_free > now {
                    note(wake, r.ports[go].xbar_out_free);
                    None
                } else if prm.out_cap - r.vc[go * vcs + ov].out_used >= u {
                    Some((op, ov))
                } else {
                    None
                }
            } else {
                choose_output(r, base, now, cx.packets.get(e.packet), prm, wake)
            };
            if let Some((op, ov)) = choice {
                let idx = sc.requests.len() as u32;
                sc.requests.push(Request { in_port: ip as u16, in_vc: v as u8, out_port: op as u16, out_vc: ov as u8 });
                // Output arbitration: round-robin over input ports, starting after the last winner.
                let rr = r.ports[base + op].rr_out as usize;
                let b = sc.best[op];
                let beats = b == NONE || {
                    let other = sc.requests[b as usize].in_port as usize;
                    (ip + nports - rr) % nports < (other + nports - rr) % nports
                };
                if beats {
                    sc.best[op] = idx;
                }
                break;
            }
        }
    }

    for i in 0..sc.requests.len() {
        let rq = sc.requests[i];
        if sc.best[rq.out_port as usize] != i as u32 {
            note(wake, now + 1); // lost the output: try again next cycle
            continue;
        }
        grant(r, cx.packets, cx.cal, prm, switch, now, rq, wake);
    }
    for rq in &sc.requests {
        sc.best[rq.out_port as usize] = NONE;
    }
}

/// The best (port, VC) for a head flit among its candidates: lowest priority class first,
/// then the most free space (join the shortest queue), among outputs that can take it now.
fn choose_output(r: &Routers, base: usize, now: u64, pkt: &crate::packet::Packet, prm: &Params, wake: &mut u64) -> Option<(usize, usize)> {
    let vcs = r.vcs;
    let u = prm.flit_phits as u32;
    let mut best: Option<(u8, u64, usize, usize)> = None;
    for c in pkt.candidates.as_slice() {
        if let Some((prio, _, _, _)) = best {
            if c.priority > prio {
                continue;
            }
        }
        let op = c.hop.port as usize;
        let go = base + op;
        if r.ports[go].xbar_out_free > now {
            note(wake, r.ports[go].xbar_out_free);
            continue;
        }
        let mut mask = c.vcs;
        while mask != 0 {
            let ov = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            if ov >= vcs {
                break;
            }
            let q = &r.vc[go * vcs + ov];
            if q.out_owned {
                continue;
            }
            let free = prm.out_cap - q.out_used;
            if free < u {
                continue;
            }
            let space = free as u64 + q.credits.min(prm.in_cap) as u64;
            let better = match best {
                None => true,
                Some((bp, bs, _, _)) => c.priority < bp || (c.priority == bp && space > bs),
            };
            if better {
                best = Some((c.priority, space, op, ov));
            }
        }
    }
    best.map(|(_, _, op, ov)| (op, ov))
}

#[allow(clippy::too_many_arguments)]
fn grant(r: &mut Routers, packets: &mut Arena, cal: &mut Calendar, prm: &Params, switch: usize, now: u64, rq: Request, wake: &mut u64) {
    let vcs = r.vcs;
    let base = r.port_base[switch] as usize;
    let (gi, go) = (base + rq.in_port as usize, base + rq.out_port as usize);
    let (gvi, gvo) = (gi * vcs + rq.in_vc as usize, go * vcs + rq.out_vc as usize);
    let u = prm.flit_phits as u64;
    let e = r.vc[gvi].input.pop(&r.in_store, r.in_slots);
    r.ports[gi].in_flits -= 1;

    // The crossbar moves `speedup` phits per cycle but cannot run ahead of the phits arriving.
    let xbar = u.div_ceil(prm.speedup as u64);
    let head_arrival = e.ready as u64 - prm.pipeline_delay as u64;
    let tail_leaves = (now + xbar - 1).max(head_arrival + u - 1);
    let link_may_start = (now + 1).max((tail_leaves + 2).saturating_sub(u));
    r.ports[gi].xbar_in_free = now + xbar;
    r.ports[go].xbar_out_free = now + xbar;
    r.ports[gi].rr_in_vc = ((rq.in_vc as usize + 1) % vcs) as u8;
    r.ports[go].rr_out = ((rq.in_port as usize + 1) % r.num_ports(switch)) as u16;
    note(wake, now + xbar);
    note(wake, link_may_start);

    r.vc[gvo].output.push(&mut r.out_store, r.out_slots, Entry { packet: e.packet, ready: link_may_start as u32, flit: e.flit });
    r.vc[gvo].out_used += u as u32;
    r.ports[go].out_flits += 1;

    // The space the flit held in the input buffer goes back upstream once its tail has left.
    let credit_at = tail_leaves + prm.latency as u64;
    match r.ports[gi].peer {
        Peer::Switch { switch: up, port: up_port } => {
            cal.schedule(credit_at, now, Event::Credit { switch: up, port: up_port, vc: rq.in_vc, phits: u as u16 })
        }
        Peer::Server(server) => cal.schedule(credit_at, now, Event::NicCredit { server, vc: rq.in_vc, phits: u as u16 }),
        Peer::Unconnected => unreachable!(),
    }

    let last = e.flit + 1 == prm.flits_per_packet;
    if e.flit == 0 {
        let pkt = packets.get_mut(e.packet);
        let hop = pkt
            .candidates
            .as_slice()
            .iter()
            .find(|c| c.hop.port == rq.out_port)
            .map(|c| c.hop)
            .expect("granted port is a candidate");
        let st = &mut pkt.state;
        if !hop.eject {
            st.hops += 1;
            if hop.class == 0 {
                st.local_hops = st.local_hops.saturating_add(1);
            } else {
                st.global_hops = st.global_hops.saturating_add(1);
            }
            if hop.wraps && hop.dim < 32 {
                st.wrapped |= 1 << hop.dim;
            }
        }
        st.vc = rq.out_vc;
        if !last {
            let vi = &mut r.vc[gvi];
            vi.routed = true;
            vi.route_port = rq.out_port;
            vi.route_vc = rq.out_vc;
            r.vc[gvo].out_owned = true;
        }
    } else if last {
        r.vc[gvi].routed = false;
        r.vc[gvo].out_owned = false;
    }
}
