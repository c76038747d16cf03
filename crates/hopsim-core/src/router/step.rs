//! One cycle of one switch: the output links send, then VC allocation gives waiting heads an
//! output VC and switch allocation moves flits through the crossbar into output buffers.
//!
//! Timing (documented in docs/model.md): a head arriving at cycle `a` may be allocated from
//! `a + pipeline_delay`; granted at `t`, it is in the output buffer at `t + 1` and the link may
//! start it then; it reaches the next input buffer `link.latency` cycles after it starts.
//! `Staging` (staging.rs) may hold a packet longer: a VC allocation stage before the
//! crossbar, and route computation of the next packet of an input VC only after the tail
//! ahead has crossed (each input VC's `stage_from`).

use super::allocators::{self, Matching, PortRequest};
use super::{OutEntry, Peer, Ring, Routers, Vc};
use crate::calendar::{Event, Schedule, NEVER};
use crate::round_robin::RoundRobin;
use crate::params::Params;
use crate::packet::Arena;
use crate::route::{Candidate, Rng, Selection};
use crate::vc::JsqTies;

pub struct StepCtx<'a, C: Schedule> {
    pub routers: &'a mut Routers,
    pub packets: &'a mut Arena,
    /// Where the step's events and its own next visit go: the calendar, or with several
    /// threads the stepping thread's outbox (engine/parallel.rs).
    pub cal: &'a mut C,
    pub params: &'a Params,
    pub scratch: &'a mut Scratch,
    pub measuring: bool,
    pub last_progress: &'a mut u64,
    pub phit_hops: &'a mut u64,
    /// Per-switch generators (random JSQ tie breaks draw from the stepped switch's).
    pub switch_rng: &'a mut [Rng],
    /// The run's routing, for heads that reach the front of their input VC unrouted
    /// (`Staging::routes_at_front`); `None` when every head is routed as it arrives.
    pub fronts: Option<&'a dyn RouteFront>,
}

/// Routes `packet`, whose head has reached the front of an input VC of `switch` unrouted,
/// as its arrival would have (`NextHeadRouting::AtFront`): the routing and VC policy are
/// the engine's, which the router does not see otherwise.
pub trait RouteFront {
    fn route(&self, routers: &Routers, switch: usize, rng: &mut Rng, packets: &mut Arena, packet: u32);
}

/// Reused between steps so the allocator never allocates.
#[derive(Default)]
pub struct Scratch {
    requests: Vec<Request>,
    /// The winning request's index per output (VC or port) of the switch being stepped
    /// (`Arbiter`).
    best: Vec<u32>,
    /// Heads that VC allocation looks at in this step.
    heads: Vec<Head>,
    /// `requests` as the allocators of router/allocators/ see them, and their working arrays.
    port_requests: Vec<PortRequest>,
    matching: Matching,
    /// LRU switch allocation: each input VC's request (`NONE` if none), the winners, and
    /// which ports are taken.
    lru_request: Vec<u32>,
    lru_winners: Vec<u16>,
    input_taken: Vec<bool>,
    output_taken: Vec<bool>,
}

/// A head at the front of an input VC that needs an output VC.
#[derive(Clone, Copy)]
struct Head {
    in_port: u16,
    in_vc: u8,
    /// The head flit's phits, from its buffer entry: the packet's length sits in a cache
    /// line of the packet that VC allocation would otherwise load for this alone.
    phits: u16,
    packet: u32,
}

impl Head {
    /// Its request for VC `ov` of output port `op`.
    #[inline(always)]
    fn request(self, op: usize, ov: usize) -> Request {
        Request { in_port: self.in_port, in_vc: self.in_vc, out_port: op as u16, out_vc: ov as u8, packet: self.packet }
    }
}

#[derive(Clone, Copy)]
struct Request {
    in_port: u16,
    in_vc: u8,
    out_port: u16,
    out_vc: u8,
    /// The packet whose head asks.
    packet: u32,
}

const NONE: u32 = u32::MAX;

// Inlined into the engine's cycle loop, with its stages and `choose_output`: left to the
// inliner, whether they are depends on which codegen unit the rest of the crate puts them in,
// so a change anywhere in the crate could split `step` and `choose_output` out of the loop and
// add instructions to every step. docs/benchmark-log.md has the counts.
#[inline]
fn step<const V: usize, const W: usize, C: Schedule>(switch: usize, now: u64, cx: &mut StepCtx<C>) {
    let mut wake = NEVER;
    let at = At::new::<W>(cx.routers, switch);
    link_stage::<V, _>(at, now, cx, &mut wake);
    allocation_stage::<V, _>(at, now, cx, &mut wake);
    if wake != NEVER {
        cx.cal.wake_router(switch, wake);
    }
}

/// Step the switches of `visit` in its order, asking before each step for the records of
/// those to come (`Routers::prefetch_visits`).
///
/// The step is compiled apart for the common shapes of switch: 1, 2, 4 or 8 VCs a port and
/// at most 64 ports (one word of each port bit set). With both known to the compiler a VC's
/// index is a shift, the loops over a port's VCs unroll and the walks over the port bit sets
/// are one word long, which takes instructions and time out of every step
/// (docs/benchmark-log.md has the measurements). Other switches take the general step
/// (`V = W = 0`).
#[inline]
pub fn step_each<C: Schedule>(visit: &[u32], now: u64, cx: &mut StepCtx<C>) {
    match (cx.routers.vcs, cx.routers.port_words) {
        (1, 1) => step_each_with::<1, 1, C>(visit, now, cx),
        (2, 1) => step_each_with::<2, 1, C>(visit, now, cx),
        (4, 1) => step_each_with::<4, 1, C>(visit, now, cx),
        (8, 1) => step_each_with::<8, 1, C>(visit, now, cx),
        _ => step_each_with::<0, 0, C>(visit, now, cx),
    }
}

#[inline]
fn step_each_with<const V: usize, const W: usize, C: Schedule>(visit: &[u32], now: u64, cx: &mut StepCtx<C>) {
    for (i, &s) in visit.iter().enumerate() {
        cx.routers.prefetch_visits(visit, i, now);
        step::<V, W, C>(s as usize, now, cx);
    }
}

/// VCs per port: `V` when the step was compiled for that count, else the routers' own.
#[inline(always)]
fn vcs<const V: usize>(r: &Routers) -> usize {
    if V == 0 {
        r.vcs
    } else {
        debug_assert_eq!(r.vcs, V);
        V
    }
}

/// Where the stepped switch's records are: read once per step rather than by every stage.
#[derive(Clone, Copy)]
struct At {
    switch: usize,
    /// The switch's first global port, and its number of ports.
    base: usize,
    nports: usize,
    /// Its words of the port bit sets (`Routers::port_words` from `first_word`).
    first_word: usize,
    words: usize,
}

impl At {
    #[inline(always)]
    fn new<const W: usize>(r: &Routers, switch: usize) -> Self {
        let ports = r.ports_of(switch);
        let words = if W == 0 { r.port_words } else { W };
        At { switch, base: ports.start, nports: ports.len(), first_word: (switch - r.held.start) * words, words }
    }

    /// Where port `port` of the switch is in its port sets: its word and its bit there
    /// (`Routers::port_bit`, without reading the words per switch again).
    #[inline(always)]
    fn port_bit(self, port: usize) -> (usize, u64) {
        (self.first_word + port / 64, 1 << (port % 64))
    }
}

/// `i % n` for `i < 2n`, without a division (round-robin pointers are on the hot path).
#[inline(always)]
fn wrap(i: usize, n: usize) -> usize {
    if i >= n {
        i - n
    } else {
        i
    }
}

/// The switch must be stepped again by cycle `t`. A minimum rather than a test: which of
/// the two is earlier changes from call to call, and a mispredicted branch costs more.
#[inline(always)]
fn note(wake: &mut u64, t: u64) {
    *wake = (*wake).min(t);
}

#[inline]
fn link_stage<const V: usize, C: Schedule>(at: At, now: u64, cx: &mut StepCtx<C>, wake: &mut u64) {
    // Only ports with a flit in their output buffer or on their link (`busy_outputs`): the
    // others have nothing to send or release.
    for k in 0..at.words {
        let w = at.first_word + k;
        let mut busy = cx.routers.port_sets[w].busy_outputs;
        while busy != 0 {
            let op = busy.trailing_zeros() as usize;
            busy &= busy - 1;
            if link_port::<V, _>(at.switch, at.base + k * 64 + op, now, cx, wake) {
                // Idle now; a grant marks it again.
                cx.routers.port_sets[w].busy_outputs &= !(1 << op);
            }
        }
    }
}

/// The output link of global port `gp`: the flit on it gives its buffer space back once
/// sent, and the next flit (round-robin over the VCs) starts when the link is free. Whether
/// the port is left with nothing for the link stage (`PortSets::busy_outputs`).
#[inline]
fn link_port<const V: usize, C: Schedule>(switch: usize, gp: usize, now: u64, cx: &mut StepCtx<C>, wake: &mut u64) -> bool {
    let r = &mut *cx.routers;
    let vcs = vcs::<V>(r);
    // Fields are read one by one, not the port copied: most ports only need two looked at.
    let p = &r.ports[gp];
    if p.tx_pending {
        if p.link_free as u64 <= now {
            give_back::<V>(r, switch, gp, now, cx.params);
        } else if tx_watched::<V>(r, gp, cx.params) {
            note(wake, r.ports[gp].link_free as u64);
        }
    }
    let p = &r.ports[gp];
    if p.out_flits == 0 {
        // A flit on the link that someone waits for keeps the port visited until its space
        // is back; any other is given back later (`gone_phits`).
        return !p.tx_pending || !tx_watched::<V>(r, gp, cx.params);
    }
    if p.link_free as u64 > now {
        note(wake, p.link_free as u64);
        return false;
    }
    for v in RoundRobin::new(p.out_vcs_nonempty, p.rr_link_vc as usize) {
        let gv = gp * vcs + v;
        let Some(e) = r.vc[gv].output.front() else { unreachable!("output VC {v} marked but empty") };
        if e.ready as u64 > now {
            note(wake, e.ready as u64);
            continue;
        }
        if !credits_cover(r, gv, e.phits) {
            continue; // a credit event will wake the switch
        }
        send_flit::<V, _>(r, cx.cal, cx.params, Sent { progress: cx.last_progress, phit_hops: cx.phit_hops }, gp, v, now, now, wake);
        return r.ports[gp].out_flits == 0 && !release_needed(r, gv, cx.params);
    }
    false
}

/// The flit on port `gp`'s link has left it: its space in its output VC comes back, and
/// heads waiting for that VC are woken if it is now free (whether it woke any). The link
/// stage does this at its first visit after the flit has left (in that very cycle when
/// someone waits for the space, `release_needed`), and `start_flit` when the port starts
/// its next flit. Until then whatever reads the VC's space counts the flit's phits as free
/// (`gone_phits`), so that no port is visited only to give back space nobody waits for.
#[inline(always)]
fn give_back<const V: usize>(r: &mut Routers, switch: usize, gp: usize, now: u64, prm: &Params) -> bool {
    let v = return_space::<V>(r, gp);
    r.ports[gp].tx_pending = false;
    wake_if_free::<V>(r, switch, gp, v, now, prm)
}

/// The bookkeeping of `give_back`: the space the flit on port `gp`'s link holds in its
/// output VC (`tx_vc`) is free again. Returns that VC.
#[inline(always)]
fn return_space<const V: usize>(r: &mut Routers, gp: usize) -> usize {
    let p = &r.ports[gp];
    let (v, phits) = (p.tx_vc as usize, p.tx_phits);
    let gv = gp * vcs::<V>(r) + v;
    r.vc[gv].out_used -= phits;
    r.mark_queue(gp);
    v
}

/// Phits of output VC `ov` of port `go` that its link has finished sending by `now` but not
/// yet given back (`give_back`): readers of the VC's space count them as free. When routing
/// reads the queues every flit's space is given back as it leaves (`release_needed`), so
/// there are none.
#[inline(always)]
fn gone_phits(r: &Routers, go: usize, ov: usize, now: u64, prm: &Params) -> u32 {
    let p = &r.ports[go];
    let gone = || p.tx_pending && p.tx_vc as usize == ov && p.link_free as u64 <= now;
    if prm.routing_reads_queues {
        debug_assert!(!gone(), "a flit left unwatched while routing reads the queues");
        0
    } else if gone() {
        p.tx_phits as u32
    } else {
        0
    }
}

/// Whether output VC `ov` of port `go` has room for `phits` more at `now`, counting a flit
/// that has left as gone (`gone_phits`, read only when the VC looks full without it).
/// Written as a sum: `out_used` may exceed the buffer while such a flit is not given back.
#[inline(always)]
fn has_room<const V: usize>(r: &Routers, go: usize, ov: usize, phits: u32, now: u64, prm: &Params) -> bool {
    let need = r.vc[go * vcs::<V>(r) + ov].out_used as u32 + phits;
    need <= prm.out_cap || need <= prm.out_cap + gone_phits(r, go, ov, now, prm)
}

/// Whether the space of the flit leaving output VC `gv` must come back in the very cycle
/// its link finishes it, which takes a step of the switch then and keeps the port among
/// those the link stage visits. Otherwise it comes back later (`give_back`), and the
/// allocators count it free from that cycle on (`gone_phits`). Only two things need the
/// exact cycle: routing that reads queues on arrival, before any step, and heads waiting
/// for the VC, which only its change wakes (`choose_or_wait` asks for that cycle itself
/// when a head starts waiting, `note_space_back`).
#[inline(always)]
fn release_needed(r: &Routers, gv: usize, prm: &Params) -> bool {
    prm.routing_reads_queues || r.vc[gv].flag(Vc::WAITED_ON)
}

/// `release_needed` for the flit on port `gp`'s link (`tx_vc`).
#[inline(always)]
fn tx_watched<const V: usize>(r: &Routers, gp: usize, prm: &Params) -> bool {
    release_needed(r, gp * vcs::<V>(r) + r.ports[gp].tx_vc as usize, prm)
}

/// Something of the switch waits for space in an output buffer of port `port`: step when
/// its link finishes the flit it is sending, and visit the port then to give the space back
/// (`release_needed` may not have asked for either when the flit started).
#[inline(always)]
fn note_space_back(r: &mut Routers, switch: usize, base: usize, port: usize, now: u64, wake: &mut u64) {
    let out = &r.ports[base + port];
    if out.tx_pending && out.link_free as u64 > now {
        note(wake, out.link_free as u64);
        r.mark_sending(switch, port);
    }
}

/// Whether output VC `gv` holds the credits a flit of `phits` needs to start. A server's NIC
/// takes whatever reaches it: its port's VCs hold `SERVER_CREDITS`, as many as a flit can
/// have phits, and sends never take them.
#[inline(always)]
fn credits_cover(r: &Routers, gv: usize, phits: u16) -> bool {
    r.vc[gv].credits >= phits
}

/// The run's counters a flit starting on a link moves.
struct Sent<'a> {
    progress: &'a mut u64,
    phit_hops: &'a mut u64,
}

/// Start the front flit of VC `v` of output port `gp` on its link at cycle `start`: `now`,
/// or the next cycle when a grant knows the link would take it then (`grant`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn send_flit<const V: usize, C: Schedule>(r: &mut Routers, cal: &mut C, prm: &Params, sent: Sent, gp: usize, v: usize, start: u64, now: u64, wake: &mut u64) {
    let gv = gp * vcs::<V>(r) + v;
    let e = r.vc[gv].output.pop(&r.out_store, Ring::of(gv, r.out_slots));
    let emptied = r.vc[gv].output.is_empty();
    let p = &mut r.ports[gp];
    p.out_flits -= 1;
    if emptied {
        p.out_vcs_nonempty &= !(1 << v);
    }
    start_flit::<V, _>(r, cal, prm, sent, gp, v, e, start, now, wake);
}

/// Start flit `e`, out of VC `v` of output port `gp` (whose space it holds), on the link at
/// cycle `start` (`send_flit`). A grant starting a flit on an idle link hands it here
/// directly, without queueing it in the output VC only for `send_flit` to take it out again.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn start_flit<const V: usize, C: Schedule>(r: &mut Routers, cal: &mut C, prm: &Params, sent: Sent, gp: usize, v: usize, e: OutEntry, start: u64, now: u64, wake: &mut u64) {
    let vcs = vcs::<V>(r);
    let gv = gp * vcs + v;
    let u = e.phits;
    if r.ports[gp].tx_pending {
        // The flit before has left, or leaves at `start` (`link_free_next`), with no one
        // waiting for its space (else the link stage would have given it back then): it
        // comes back now, with no one to wake, since the allocators count it free from the
        // cycle it leaves (`gone_phits`). `tx_pending` stays set: this flit's send sets it
        // again.
        return_space::<V>(r, gp);
    }
    let busy = r.ports[gp].link.send(&r.rates, u);
    let p = &mut r.ports[gp];
    p.link_free = (start + busy) as u32;
    p.tx_pending = true;
    p.tx_vc = v as u8;
    p.tx_phits = u;
    p.rr_link_vc = wrap(v + 1, vcs) as u8;
    let more = p.out_flits > 0;
    if more || release_needed(r, gv, prm) {
        note(wake, start + busy);
    }
    // Count the phits that cross the link inside the measured window.
    let (lo, hi) = (start.max(prm.window.0), (start + busy).min(prm.window.1));
    if hi > lo {
        r.ports[gp].link_phits += (if busy == u as u64 { hi - lo } else { (hi - lo) * u as u64 / busy }) as u32;
    }
    *sent.progress = now;
    let lat = r.ports[gp].link.latency as u64;
    let tail = busy - u as u64;
    match r.ports[gp].peer {
        Peer::Switch { switch: to, port: to_port } => {
            r.vc[gv].credits -= u;
            r.mark_queue(gp);
            *sent.phit_hops += u as u64;
            cal.schedule(prm.delivered_at(start + lat), now, Event::FlitArrive { switch: to, port: to_port, vc: v as u8, packet: e.packet, flit: e.flit, tail: tail as u16 });
        }
        Peer::Server(server) => {
            cal.schedule(start + lat + busy - 1, now, Event::Eject { server, packet: e.packet, flit: e.flit });
        }
        Peer::Unconnected => unreachable!("routing sent a flit to an unconnected port"),
    }
}

#[inline]
fn allocation_stage<const V: usize, C: Schedule>(at: At, now: u64, cx: &mut StepCtx<C>, wake: &mut u64) {
    vc_allocation::<V, _>(at, now, cx, wake);
    switch_allocation::<V, _>(at, now, cx, wake);
}

/// Separable VC allocation: every input VC whose head has no output VC yet asks for the best
/// free (unowned) output VC among its candidates; each output VC grants one request,
/// round-robin over input VCs. The winner owns that output VC until its tail has crossed the
/// crossbar, so a packet that waits for buffer space keeps its turn instead of losing it to
/// whichever input happens to be free when the space appears.
#[inline]
fn vc_allocation<const V: usize, C: Schedule>(at: At, now: u64, cx: &mut StepCtx<C>, wake: &mut u64) {
    let r = &mut *cx.routers;
    let vcs = vcs::<V>(r);
    let (switch, base) = (at.switch, at.base);
    let slots = at.nports * vcs;
    let sc = &mut *cx.scratch;
    sc.heads.clear();
    for k in 0..at.words {
        let w = at.first_word + k;
        let mut marked = r.port_sets[w].va;
        while marked != 0 {
            let ip = k * 64 + marked.trailing_zeros() as usize;
            marked &= marked - 1;
            ready_heads::<V>(switch, base, ip, w, now, r, cx.packets, cx.fronts, cx.switch_rng, sc, wake);
        }
    }
    // Most steps have no head to allocate: they stop here.
    if sc.heads.is_empty() {
        return;
    }
    match cx.params.vc_allocator {
        crate::allocation::VcAllocator::Islip { iterations } => {
            return islip_vc_allocation::<V>(at, now, r, cx.packets, cx.params, sc, iterations as usize, wake);
        }
        crate::allocation::VcAllocator::Unowned => {
            let rng = cx.params.random_jsq_ties.then(|| &mut cx.switch_rng[switch - r.held.start]);
            return unowned_vcs::<V>(at, now, r, cx.packets, cx.params, rng, sc, wake);
        }
        crate::allocation::VcAllocator::InputFirst => {}
    }
    let mut rng = cx.params.random_jsq_ties.then(|| &mut cx.switch_rng[switch - r.held.start]);
    // A lone head, the common case below saturation, has no rival for its output VC: it
    // wins what it asks for without a request list or an arbiter.
    if let [h] = sc.heads[..] {
        if let Some((op, ov)) = choose_or_wait::<V>(switch, base, h, r, cx.packets, cx.params, rng, now, wake) {
            win_vc_input_first::<V>(r, cx.packets, cx.params, at, slots, h.request(op, ov), now);
            if r.ports[base + h.in_port as usize].heads_needing_vc() == 0 {
                // Nothing left at the port for VC allocation, whose next visit would only
                // find that out: a flit arriving or a head woken marks it again.
                let (w, bit) = at.port_bit(h.in_port as usize);
                r.port_sets[w].va &= !bit;
            }
        }
        return;
    }
    sc.requests.clear();
    for i in 0..sc.heads.len() {
        let h = sc.heads[i];
        if let Some((op, ov)) = choose_or_wait::<V>(switch, base, h, r, cx.packets, cx.params, rng.as_deref_mut(), now, wake) {
            sc.requests.push(h.request(op, ov));
        }
    }
    // Each output VC picks the input VC next after its last winner in round-robin order.
    let out_vc = |q: Request| q.out_port as usize * vcs + q.out_vc as usize;
    let arbiter = {
        let r = &*r;
        let order = |q: Request| {
            let rr = r.vc[(base + q.out_port as usize) * vcs + q.out_vc as usize].rr_va as usize;
            wrap(q.in_port as usize * vcs + q.in_vc as usize + slots - rr, slots)
        };
        Arbiter::pick(&sc.requests, &mut sc.best, slots, out_vc, order)
    };
    for i in 0..sc.requests.len() {
        let rq = sc.requests[i];
        if arbiter.lost(&sc.best, out_vc(rq), i) {
            note(wake, now + 1);
            continue;
        }
        win_vc_input_first::<V>(r, cx.packets, cx.params, at, slots, rq, now);
    }
    arbiter.clear(&sc.requests, &mut sc.best, out_vc);
}

/// VC allocation by iSLIP (`router.vc_allocator = "islip"`): each head asks for every output
/// VC it may take now among its candidates of the best priority that has one, and iSLIP over
/// the switch's input and output VCs matches them. A head that may take none waits as
/// `choose_or_wait` has it wait; one that lost asks again next cycle.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn islip_vc_allocation<const V: usize>(at: At, now: u64, r: &mut Routers, packets: &mut Arena, prm: &Params, sc: &mut Scratch, iterations: usize, wake: &mut u64) {
    let vcs = vcs::<V>(r);
    let (switch, base) = (at.switch, at.base);
    let slots = at.nports * vcs;
    sc.requests.clear();
    sc.port_requests.clear();
    for i in 0..sc.heads.len() {
        let h = sc.heads[i];
        let first = sc.requests.len();
        let mut best: Option<u8> = None;
        for c in packets.candidates(h.packet) {
            if best.is_some_and(|p| c.priority > p) {
                continue;
            }
            let op = c.hop.port as usize;
            let go = base + op;
            for ov in allowed_vcs(c, vcs) {
                if r.vc[go * vcs + ov].flag(Vc::OUT_OWNED) || !has_room::<V>(r, go, ov, h.phits as u32, now, prm) {
                    continue;
                }
                if best.is_some_and(|p| c.priority < p) {
                    sc.requests.truncate(first);
                    sc.port_requests.truncate(first);
                }
                best = Some(c.priority);
                sc.requests.push(h.request(op, ov));
                let input = h.in_port as usize * vcs + h.in_vc as usize;
                sc.port_requests.push(PortRequest { input: input as u16, output: (op * vcs + ov) as u16 });
            }
        }
        if best.is_none() {
            let found = choose_or_wait::<V>(switch, base, h, r, packets, prm, None, now, wake);
            debug_assert!(found.is_none(), "a VC the walk above found taken");
        }
    }
    if sc.requests.is_empty() {
        return;
    }
    let mut pointers = r.vc_allocator_pointers(base..base + at.nports);
    allocators::islip(&sc.port_requests, iterations, slots, &mut pointers, &mut sc.matching);
    for i in 0..sc.requests.len() {
        let rq = sc.requests[i];
        if !sc.matching.won(&sc.port_requests, i) {
            note(wake, now + 1);
            continue;
        }
        win_vc::<V>(r, packets, prm, at, rq, now);
    }
}

/// No VC allocation (`router.vc_allocator = "none"`): each head takes the output VC it
/// would ask for, which it does not own (`win_vc`), so no arbiter stands between heads
/// bound for the same VC: they all go on to switch allocation, which alone decides, at each
/// crossing, which of them fits (a head with no room anywhere waits as `choose_or_wait`
/// has it wait).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn unowned_vcs<const V: usize>(at: At, now: u64, r: &mut Routers, packets: &mut Arena, prm: &Params, mut rng: Option<&mut Rng>, sc: &mut Scratch, wake: &mut u64) {
    for i in 0..sc.heads.len() {
        let h = sc.heads[i];
        if let Some((op, ov)) = choose_or_wait::<V>(at.switch, at.base, h, r, packets, prm, rng.as_deref_mut(), now, wake) {
            win_vc::<V>(r, packets, prm, at, h.request(op, ov), now);
        }
    }
}

/// Separable arbitration among the requests of a step, one per input, for the outputs that
/// `output` names (output VCs in VC allocation, output ports in switch allocation): each output
/// picks the request first in its round-robin `order`, recorded as its index in `best`. A
/// lone request, the common case at low load, wins without it.
#[derive(Clone, Copy)]
struct Arbiter {
    arbitrated: bool,
}

impl Arbiter {
    #[inline(always)]
    fn pick(requests: &[Request], best: &mut Vec<u32>, outputs: usize, output: impl Fn(Request) -> usize, order: impl Fn(Request) -> usize) -> Self {
        let arbitrated = requests.len() > 1;
        if arbitrated {
            if best.len() < outputs {
                best.resize(outputs, NONE);
            }
            for (i, &rq) in requests.iter().enumerate() {
                let b = &mut best[output(rq)];
                if *b == NONE || order(rq) < order(requests[*b as usize]) {
                    *b = i as u32;
                }
            }
        }
        Arbiter { arbitrated }
    }

    /// Whether request `i`, for `output`, lost its output to another.
    #[inline(always)]
    fn lost(self, best: &[u32], output: usize, i: usize) -> bool {
        self.arbitrated && best[output] != i as u32
    }

    /// Leave `best` empty for the next arbitration.
    #[inline(always)]
    fn clear(self, requests: &[Request], best: &mut [u32], output: impl Fn(Request) -> usize) {
        if self.arbitrated {
            for &rq in requests {
                best[output(rq)] = NONE;
            }
        }
    }
}

/// A grant of input-first VC allocation: the output VC's pointer moves past the winner.
#[inline(always)]
fn win_vc_input_first<const V: usize>(r: &mut Routers, packets: &mut Arena, prm: &Params, at: At, slots: usize, rq: Request, now: u64) {
    let vcs = vcs::<V>(r);
    let gvo = (at.base + rq.out_port as usize) * vcs + rq.out_vc as usize;
    r.vc[gvo].rr_va = wrap(rq.in_port as usize * vcs + rq.in_vc as usize + 1, slots) as u16;
    win_vc::<V>(r, packets, prm, at, rq, now);
}

/// The head of `rq` has won output VC (`rq.out_port`, `rq.out_vc`): the VC is its until its
/// tail crosses (unless the run allocates none, `VcAllocator::owns`), and its input port is
/// among those switch allocation visits (`PortSets::busy_inputs`). The allocator moves its
/// own pointers.
#[inline(always)]
fn win_vc<const V: usize>(r: &mut Routers, packets: &mut Arena, prm: &Params, at: At, rq: Request, now: u64) {
    let (vcs, base) = (vcs::<V>(r), at.base);
    let (w, bit) = at.port_bit(rq.in_port as usize);
    r.port_sets[w].busy_inputs |= bit;
    let gvi = (base + rq.in_port as usize) * vcs + rq.in_vc as usize;
    let gvo = (base + rq.out_port as usize) * vcs + rq.out_vc as usize;
    r.ports[base + rq.in_port as usize].routed_vcs |= 1 << rq.in_vc;
    let vi = &mut r.vc[gvi];
    vi.route_port = rq.out_port;
    vi.route_vc = rq.out_vc;
    vi.stage_from = prm.staging.switch_from(now) as u32;
    if prm.vc_allocator.owns() {
        r.vc[gvo].set_flag(Vc::OUT_OWNED, true);
    }
    let extra_latency = r.ports[base + rq.out_port as usize].link.latency as i32 - prm.latency as i32;
    count_hop(packets, rq.packet, at.switch, rq.out_port, rq.out_vc, extra_latency, &prm.hop_hook);
}

/// Collects the heads of input port `ip` of `switch` that need an output VC and may ask for
/// one now (`word`: the port's word of `PortSets`, whose `va` bit is cleared when the port
/// has none), routing those that reached the front unrouted (`fronts`), and starts loading
/// their packets: at saturation a switch holds dozens of such heads whose
/// packets are not in cache, and asking for all the lines before reading any overlaps the
/// misses instead of paying them one after another.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn ready_heads<const V: usize>(switch: usize, base: usize, ip: usize, word: usize, now: u64, r: &mut Routers, packets: &mut Arena, fronts: Option<&dyn RouteFront>, rngs: &mut [Rng], sc: &mut Scratch, wake: &mut u64) {
    let vcs = vcs::<V>(r);
    let gp = base + ip;
    // Heads without an output VC yet that may find one (nothing here changes until the
    // grants). Heads that found every VC they may use taken wait, untouched, until one of
    // those VCs changes: at saturation most heads of a high-radix switch wait.
    let port = &r.ports[gp];
    let mut unrouted = port.heads_needing_vc();
    if unrouted == 0 {
        r.port_sets[word].va &= !(1 << (ip % 64));
        return;
    }
    let from = r.va_from(gp);
    if from > now {
        note(wake, from);
        return;
    }
    let (heads, mut first_ready) = (sc.heads.len(), NEVER);
    while unrouted != 0 {
        let v = unrouted.trailing_zeros() as usize;
        unrouted &= unrouted - 1;
        let q = &r.vc[gp * vcs + v];
        let Some(&e) = q.input.front() else { continue };
        let ready = e.ready.max(q.stage_from) as u64;
        if ready > now {
            first_ready = first_ready.min(ready);
            continue;
        }
        debug_assert!(e.flit.is_head(), "a body flit at the front of an unrouted VC");
        if let Some(f) = fronts {
            // A head that arrived behind another has no route yet: it takes it now, from
            // the queues as they are.
            if packets.candidates(e.packet).is_empty() {
                f.route(r, switch, &mut rngs[switch - r.held.start], packets, e.packet);
            }
        }
        crate::prefetch::line(packets.get(e.packet));
        sc.heads.push(Head { in_port: ip as u16, in_vc: v as u8, phits: e.phits, packet: e.packet });
    }
    note(wake, first_ready);
    if first_ready != NEVER && sc.heads.len() == heads {
        // Every head here is still in its delay: none may ask before the first is out.
        r.hold_va_until(gp, first_ready);
    }
}

/// The best output (port, VC) head `h` may ask for now, or `None` after recording that it
/// waits for every VC it may use.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn choose_or_wait<const V: usize>(switch: usize, base: usize, h: Head, r: &mut Routers, packets: &Arena, prm: &Params, rng: Option<&mut Rng>, now: u64, wake: &mut u64) -> Option<(usize, usize)> {
    let vcs = vcs::<V>(r);
    let candidates = packets.candidates(h.packet);
    let chosen = choose_output::<V>(r, base, candidates, h.phits as u32, prm, rng, now);
    if chosen.is_none() {
        // Whether a head finds a VC depends only on the state of the VCs it may use,
        // which improves only when one of them frees space or is released.
        for c in candidates {
            let go = base + c.hop.port as usize;
            for ov in allowed_vcs(c, vcs) {
                r.wait_for(switch, h.in_port as usize, h.in_vc as usize, go * vcs + ov);
            }
            note_space_back(r, switch, base, c.hop.port as usize, now, wake);
        }
    }
    chosen
}

/// The packet takes the hop to output `out_port`, VC `out_vc`, which its head has just won
/// at `switch`: its routing learns the hop (`Routing::on_hop`, which counts it). Learned here
/// rather than when the head crosses the crossbar, since choosing the VC has just read the
/// packet's line: on a network far larger than the cache a packet that waits for its grant
/// would be loaded again for this alone. Nothing reads the counts before the head reaches
/// its next switch but the deadlock detector, which undoes the count for a head still
/// waiting (engine/deadlock.rs). `extra_latency`: the link's latency beyond `link.latency`,
/// for the zero-load formula.
#[inline(always)]
fn count_hop(packets: &mut Arena, packet: u32, switch: usize, out_port: u16, out_vc: u8, extra_latency: i32, hook: &crate::params::HopHook) {
    let hop = packets.candidates(packet).iter().find(|c| c.hop.port == out_port).map(|c| c.hop).expect("allocated port is a candidate");
    let pkt = packets.get_mut(packet);
    hook.on_hop(&mut pkt.state, switch, &hop);
    pkt.state.vc = out_vc;
    // Written only when it changes: the field is in a line of the packet nothing else of a
    // hop touches.
    if extra_latency != 0 {
        pkt.extra_link_latency += extra_latency;
    }
}

/// Switch allocation: the input ports whose flits hold their output VCs ask for the output
/// ports (`offer`), and the run's allocator (`router.switch_allocator`) matches them. The
/// default, separable input-first, runs here: each input offers one of its VCs, round-robin,
/// and each output port grants one input, round-robin from after its last winner. The
/// others see every input's requests (router/allocators/).
#[inline]
fn switch_allocation<const V: usize, C: Schedule>(at: At, now: u64, cx: &mut StepCtx<C>, wake: &mut u64) {
    if cx.params.switch_allocator.matches_all_requests() {
        return matched_switch_allocation::<V, _>(at, now, cx, wake);
    }
    let r = &mut *cx.routers;
    let prm = cx.params;
    let (base, nports) = (at.base, at.nports);
    let sc = &mut *cx.scratch;
    sc.requests.clear();
    offer::<V, false, false>(r, at, now, prm, sc, wake);

    // A lone request has its output port to itself.
    if let [rq] = sc.requests[..] {
        note(wake, grant_input_first::<V, _>(r, cx.cal, prm, Sent { progress: cx.last_progress, phit_hops: cx.phit_hops }, at, now, rq));
        return;
    }
    // Each output port grants the input next after its last winner in round-robin order.
    let out_port = |q: Request| q.out_port as usize;
    let arbiter = {
        let r = &*r;
        let order = |q: Request| wrap(q.in_port as usize + nports - r.ports[base + q.out_port as usize].rr_out as usize, nports);
        Arbiter::pick(&sc.requests, &mut sc.best, nports, out_port, order)
    };
    for i in 0..sc.requests.len() {
        let rq = sc.requests[i];
        if !arbiter.lost(&sc.best, out_port(rq), i) {
            note(wake, grant_input_first::<V, _>(r, cx.cal, prm, Sent { progress: cx.last_progress, phit_hops: cx.phit_hops }, at, now, rq));
        }
    }
    // A request that lost its output asks again next cycle, unless its flit is the only one
    // of its input that holds an output VC: it could then only find that output's crossbar
    // busy with the winner's flit until it frees (known once the winners have crossed).
    for i in 0..sc.requests.len() {
        let rq = sc.requests[i];
        if arbiter.lost(&sc.best, out_port(rq), i) {
            let only_flit = r.ports[base + rq.in_port as usize].flits_with_vc() == 1 << rq.in_vc;
            note(wake, if only_flit { r.ports[base + rq.out_port as usize].xbar_out_free as u64 } else { now + 1 });
        }
    }
    arbiter.clear(&sc.requests, &mut sc.best, out_port);
}

/// The requests of the switch's input ports for the crossbar, into `sc.requests`: from each
/// input whose crossbar input is free, its VCs in round-robin order whose front flit may
/// cross now (ready, its output's crossbar free, room in its output VC). With `ALL` false
/// the first such VC only (input-first allocation); with `ALL` the first for each output
/// port, the one BookSim2's router also lets ask (`iq_router.cpp`, `_SWAllocAddReq`).
#[inline(always)]
fn offer<const V: usize, const ALL: bool, const EVERY_VC: bool>(r: &mut Routers, at: At, now: u64, prm: &Params, sc: &mut Scratch, wake: &mut u64) {
    let vcs = vcs::<V>(r);
    let base = at.base;
    for word in 0..at.words {
        let w = at.first_word + word;
        let mut busy = r.port_sets[w].busy_inputs;
        while busy != 0 {
            let ip = word * 64 + busy.trailing_zeros() as usize;
            busy &= busy - 1;
            let gp = base + ip;
            let port = &r.ports[gp];
            let routed = port.flits_with_vc();
            if routed == 0 {
                // No flit here has its output VC: a head winning one marks the port again,
                // and so does an arrival.
                r.port_sets[w].busy_inputs &= !(1 << (ip % 64));
                continue;
            }
            if port.xbar_in_free as u64 > now {
                note(wake, port.xbar_in_free as u64);
                continue;
            }
            let first = sc.requests.len();
            for v in RoundRobin::new(routed, port.rr_in_vc as usize) {
                let gv = gp * vcs + v;
                let q = &r.vc[gv];
                let Some(e) = q.input.front() else { continue };
                let ready = e.ready.max(q.stage_from) as u64;
                if ready > now {
                    note(wake, ready);
                    continue;
                }
                let (op, ov) = (q.route_port as usize, q.route_vc as usize);
                if ALL && !EVERY_VC && sc.requests[first..].iter().any(|q| q.out_port as usize == op) {
                    continue;
                }
                let go = base + op;
                if r.ports[go].xbar_out_free as u64 > now {
                    note(wake, r.ports[go].xbar_out_free as u64);
                    continue;
                }
                if !has_room::<V>(r, go, ov, e.phits as u32, now, prm) {
                    note_space_back(r, at.switch, base, op, now, wake);
                    continue;
                }
                sc.requests.push(Request { in_port: ip as u16, in_vc: v as u8, out_port: op as u16, out_vc: ov as u8, packet: e.packet });
                if !ALL {
                    break;
                }
            }
        }
    }
}

/// A grant of input-first allocation: the input's VC pointer and the output's input pointer
/// move past the winner.
#[inline(always)]
fn grant_input_first<const V: usize, C: Schedule>(r: &mut Routers, cal: &mut C, prm: &Params, sent: Sent, at: At, now: u64, rq: Request) -> u64 {
    let (gi, go) = (at.base + rq.in_port as usize, at.base + rq.out_port as usize);
    r.ports[gi].rr_in_vc = wrap(rq.in_vc as usize + 1, vcs::<V>(r)) as u8;
    r.ports[go].rr_out = wrap(rq.in_port as usize + 1, at.nports) as u16;
    grant::<V, _>(r, cal, prm, sent, at, now, rq)
}

/// Switch allocation by an allocator that matches every request at once. The input's VC
/// pointer moves past each winner, as BookSim2's (`_sw_rr_offset`); the allocator moves its
/// own pointers. A request that lost asks again next cycle.
#[inline(never)]
fn matched_switch_allocation<const V: usize, C: Schedule>(at: At, now: u64, cx: &mut StepCtx<C>, wake: &mut u64) {
    let r = &mut *cx.routers;
    let prm = cx.params;
    let sc = &mut *cx.scratch;
    sc.requests.clear();
    if prm.switch_allocator == crate::allocation::SwitchAllocator::Lru {
        offer::<V, true, true>(r, at, now, prm, sc, wake);
        return lru_switch_allocation::<V, _>(at, now, r, cx.cal, prm, Sent { progress: cx.last_progress, phit_hops: cx.phit_hops }, sc, wake);
    }
    offer::<V, true, false>(r, at, now, prm, sc, wake);
    if sc.requests.is_empty() {
        return;
    }
    sc.port_requests.clear();
    sc.port_requests.extend(sc.requests.iter().map(|q| PortRequest { input: q.in_port, output: q.out_port }));
    let ports = at.base..at.base + at.nports;
    let (mut pointers, diagonal) = r.allocator_pointers(at.switch, ports);
    allocators::allocate(prm.switch_allocator, &sc.port_requests, at.nports, &mut pointers, diagonal, &mut sc.matching);
    for i in 0..sc.requests.len() {
        let rq = sc.requests[i];
        if sc.matching.won(&sc.port_requests, i) {
            r.ports[at.base + rq.in_port as usize].rr_in_vc = wrap(rq.in_vc as usize + 1, vcs::<V>(r)) as u8;
            note(wake, grant::<V, _>(r, cx.cal, prm, Sent { progress: cx.last_progress, phit_hops: cx.phit_hops }, at, now, rq));
        } else {
            note(wake, now + 1);
        }
    }
}

/// Switch allocation by the least recently used input VC first (router/allocators/lru.rs),
/// over the requests of every input VC whose flit may cross now.
#[allow(clippy::too_many_arguments)]
fn lru_switch_allocation<const V: usize, C: Schedule>(at: At, now: u64, r: &mut Routers, cal: &mut C, prm: &Params, sent: Sent, sc: &mut Scratch, wake: &mut u64) {
    if sc.requests.is_empty() {
        return;
    }
    let vcs = vcs::<V>(r);
    let n = at.nports * vcs;
    sc.lru_request.clear();
    sc.lru_request.resize(n, NONE);
    for (i, q) in sc.requests.iter().enumerate() {
        sc.lru_request[q.in_port as usize * vcs + q.in_vc as usize] = i as u32;
    }
    {
        let (requests, index) = (&sc.requests, &sc.lru_request);
        let request = |entry: u16| match index[entry as usize] {
            NONE => None,
            i => Some((requests[i as usize].in_port, requests[i as usize].out_port)),
        };
        let list = &mut r.lru[at.base * vcs..at.base * vcs + n];
        allocators::lru::allocate(list, request, &mut sc.input_taken, &mut sc.output_taken, at.nports, &mut sc.lru_winners);
    }
    for k in 0..sc.lru_winners.len() {
        let rq = sc.requests[sc.lru_request[sc.lru_winners[k] as usize] as usize];
        note(wake, grant::<V, _>(r, cal, prm, Sent { progress: &mut *sent.progress, phit_hops: &mut *sent.phit_hops }, at, now, rq));
    }
    // A request that lost asks again next cycle.
    if sc.lru_winners.len() < sc.requests.len() {
        note(wake, now + 1);
    }
}

/// Output VC `gov` changed: wake the heads waiting for it if one of them may now take it.
/// While it is owned or full they would only fail again; the change that ends that wakes
/// them then. Always inlined: every release and every tail calls it, and it mostly returns
/// at once (nobody waits), which costs less than the call. Whether it woke them.
#[inline(always)]
fn wake_if_free<const V: usize>(r: &mut Routers, switch: usize, go: usize, ov: usize, now: u64, prm: &Params) -> bool {
    let gov = go * vcs::<V>(r) + ov;
    let q = &r.vc[gov];
    let free = q.flag(Vc::WAITED_ON) && !q.flag(Vc::OUT_OWNED) && has_room::<V>(r, go, ov, prm.flit_phits(prm.min_packet_phits) as u32, now, prm);
    if free {
        r.wake_waiters(switch, gov);
    }
    free
}

/// The VCs a candidate hop may use at the next buffer, lowest first (a policy's mask may
/// name more VCs than the switch has). A walk of its own rather than `RoundRobin` from 0:
/// that one's second mask only adds instructions to `choose_output`'s loop, which runs for
/// every candidate hop of a head.
#[inline]
fn allowed_vcs(c: &crate::route::Candidate, vcs: usize) -> impl Iterator<Item = usize> {
    let mut mask = if vcs >= 32 { c.vcs } else { c.vcs & ((1u32 << vcs) - 1) };
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let ov = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            ov
        })
    })
}

/// The best (port, VC) for a head among its candidates: lowest priority class first, then
/// the most free space (join the shortest queue), among output VCs that no other packet owns
/// and that have room for the flit now. Asking only for VCs with room keeps adaptive routing
/// free to fall back on its escape VCs (Duato) instead of waiting on a full adaptive one.
/// Equal space goes to the first candidate and lowest VC, or with `random_jsq_ties` to one
/// drawn uniformly among the tied (as CAMINOS's `Shortest` followed by `Random`). `u`: the
/// head flit's phits.
///
/// The space of a VC is read only when another of the same priority competes with it: most
/// heads of a torus under DOR have a single VC they may take.
#[inline(always)]
fn choose_output<const V: usize>(r: &Routers, base: usize, candidates: &[Candidate], u: u32, prm: &Params, rng: Option<&mut Rng>, now: u64) -> Option<(usize, usize)> {
    const UNREAD: u64 = u64::MAX;
    let vcs = vcs::<V>(r);
    let free = |go: usize, ov: usize| {
        !r.vc[go * vcs + ov].flag(Vc::OUT_OWNED) && has_room::<V>(r, go, ov, u, now, prm)
    };
    // One hop with one VC (DOR on a torus or a mesh): nothing to compare it with.
    if let [c] = candidates {
        let mut allowed = allowed_vcs(c, vcs);
        if let (Some(ov), None) = (allowed.next(), allowed.next()) {
            let op = c.hop.port as usize;
            return free(base + op, ov).then_some((op, ov));
        }
    }
    // The space `vc_queue` counts, with a flit that has left the output buffer given back.
    let space_of = |go: usize, ov: usize| (prm.out_cap + prm.in_cap + gone_phits(r, go, ov, now, prm) - r.vc_queue(go * vcs + ov)) as u64;
    if prm.selection == Selection::Weighted {
        let weight_of = |c: &Candidate, go: usize, ov: usize| Selection::weight(c.priority, (prm.out_cap + prm.in_cap) as u64 - space_of(go, ov));
        return least_weighted(candidates, vcs, |op, ov| free(base + op, ov), |c, op, ov| weight_of(c, base + op, ov), rng);
    }
    let mut best: Option<(u8, u64, usize, usize)> = None;
    let mut ties = JsqTies::new(rng);
    for c in candidates {
        if let Some((prio, _, _, _)) = best {
            if c.priority > prio {
                continue;
            }
        }
        let op = c.hop.port as usize;
        let go = base + op;
        for ov in allowed_vcs(c, vcs) {
            if !free(go, ov) {
                continue;
            }
            let better = match &mut best {
                None => Some(UNREAD),
                Some((bp, _, _, _)) if c.priority < *bp => {
                    ties.better();
                    Some(UNREAD)
                }
                Some((bp, bs, bop, bov)) => {
                    if *bs == UNREAD {
                        *bs = space_of(base + *bop, *bov);
                    }
                    let space = space_of(go, ov);
                    if c.priority == *bp && space > *bs {
                        ties.better();
                        Some(space)
                    } else {
                        (c.priority == *bp && space == *bs && ties.tie_wins()).then_some(space)
                    }
                }
            };
            if let Some(space) = better {
                best = Some((c.priority, space, op, ov));
            }
        }
    }
    best.map(|(_, _, op, ov)| (op, ov))
}

/// The free (port, VC) of least weight among `candidates` (`Selection::Weighted`).
#[inline]
fn least_weighted(candidates: &[Candidate], vcs: usize, free: impl Fn(usize, usize) -> bool, weight: impl Fn(&Candidate, usize, usize) -> u64, rng: Option<&mut Rng>) -> Option<(usize, usize)> {
    let mut best: Option<(u64, usize, usize)> = None;
    let mut ties = JsqTies::new(rng);
    for c in candidates {
        let op = c.hop.port as usize;
        for ov in allowed_vcs(c, vcs) {
            if !free(op, ov) {
                continue;
            }
            let w = weight(c, op, ov);
            let take = match best {
                None => true,
                Some((bw, _, _)) if w < bw => {
                    ties.better();
                    true
                }
                Some((bw, _, _)) => w == bw && ties.tie_wins(),
            };
            if take {
                best = Some((w, op, ov));
            }
        }
    }
    best.map(|(_, op, ov)| (op, ov))
}

/// Whether output port `go`'s link is free next cycle in a way the grant may settle now
/// (`start_flit`, dated next cycle): free already, or sending a flit that leaves next cycle
/// with no one waiting for its space. The link stage would give that space back next cycle;
/// `start_flit` gives it back now, which nothing can see before then: no head waits for it
/// (one that did would miss the wake-up of its return: the saturation tests then find
/// deadlocks), VC allocation is over for this cycle, this step's other grants are for other
/// outputs, and from next cycle on the allocators would count it free anyway (`gone_phits`).
#[inline(always)]
fn link_free_next<const V: usize>(r: &Routers, go: usize, now: u64, prm: &Params) -> bool {
    let p = &r.ports[go];
    let free = p.link_free as u64;
    debug_assert!(free <= now || p.tx_pending, "a link busy with no flit on it");
    free <= now || (free == now + 1 && !tx_watched::<V>(r, go, prm))
}

/// Moves the flit of `rq` through the crossbar. Returns the earliest cycle the switch must be
/// stepped again for it (`NEVER` for none): returned rather than noted through a reference,
/// so that the step, which calls this out of line, may keep its own in a register.
fn grant<const V: usize, C: Schedule>(r: &mut Routers, cal: &mut C, prm: &Params, sent: Sent, at: At, now: u64, rq: Request) -> u64 {
    let mut wake = NEVER;
    let wake = &mut wake;
    let vcs = vcs::<V>(r);
    let (switch, base) = (at.switch, at.base);
    let (gi, go) = (base + rq.in_port as usize, base + rq.out_port as usize);
    let (gvi, gvo) = (gi * vcs + rq.in_vc as usize, go * vcs + rq.out_vc as usize);
    let e = r.vc[gvi].input.pop(&r.in_store, Ring::of(gvi, r.in_slots));
    // The flit behind the new front is read at this VC's next grant, a few cycles away.
    r.vc[gvi].input.prefetch_second(&r.in_store, Ring::of(gvi, r.in_slots));
    let u = e.phits as u64;
    r.ports[gi].in_flits -= 1;
    if r.vc[gvi].input.is_empty() {
        r.ports[gi].in_vcs_nonempty &= !(1 << rq.in_vc);
    }

    // The crossbar moves `speedup` phits per cycle but cannot run ahead of the phits arriving.
    // Speedup 1, the default, needs no division: a division takes longer than the branch.
    let xbar = if prm.speedup == 1 { u } else { u.div_ceil(prm.speedup as u64) };
    let head_arrival = e.ready as u64 - prm.pipeline_delay as u64;
    let tail_leaves = (now + xbar - 1).max(head_arrival + u - 1 + e.tail as u64);
    let link_may_start = (now + 1).max((tail_leaves + 2).saturating_sub(u));
    r.ports[gi].xbar_in_free = (now + xbar) as u32;
    r.ports[go].xbar_out_free = (now + xbar) as u32;
    if r.ports[gi].in_flits > 0 {
        // Another flit of this input may cross once this one has. Requests for this output
        // that lost ask again next cycle by themselves, and so does every flit switch
        // allocation finds blocked.
        note(wake, now + xbar);
    }

    let out = OutEntry { packet: e.packet, ready: link_may_start as u32, flit: e.flit, phits: e.phits };
    r.vc[gvo].out_used += e.phits;
    r.mark_queue(go);
    // When the flit would be all the link has to send and may start next cycle, with the
    // credits it needs already here (they only grow until then), the link's step next cycle
    // could only start it: start it now, dated next cycle, and spare the switch that step
    // (unless the run ends first). The link may be sending until then: back-to-back packets
    // through one output, whose next grant comes as the crossbar frees, a cycle before the
    // link (`link_free_next`).
    let p = &r.ports[go];
    let alone = link_free_next::<V>(r, go, now, prm) && p.out_flits == 0 && now + 1 < prm.window.1;
    if alone && link_may_start == now + 1 && credits_cover(r, gvo, e.phits) {
        start_flit::<V, _>(r, cal, prm, sent, go, rq.out_vc as usize, out, now + 1, now, wake);
        if release_needed(r, gvo, prm) {
            r.mark_sending(switch, rq.out_port as usize);
        }
    } else {
        r.mark_sending(switch, rq.out_port as usize);
        r.vc[gvo].output.push(&mut r.out_store, Ring::of(gvo, r.out_slots), out);
        r.ports[go].out_flits += 1;
        r.ports[go].out_vcs_nonempty |= 1 << rq.out_vc;
        note(wake, link_may_start);
    }

    // The space the flit held in the input buffer goes back upstream once its tail has left.
    let credit_at = tail_leaves + r.ports[gi].link.latency as u64;
    match r.ports[gi].peer {
        Peer::Switch { switch: up, port: up_port } => {
            cal.schedule(credit_at, now, Event::Credit { switch: up, port: up_port, vc: rq.in_vc, phits: u as u16 })
        }
        Peer::Server(server) => cal.schedule(credit_at, now, Event::NicCredit { server, vc: rq.in_vc, phits: u as u16 }),
        Peer::Unconnected => unreachable!(),
    }

    let last = e.flit.is_tail();
    if last {
        // The tail has crossed: the output VC is free for the next packet.
        r.ports[gi].routed_vcs &= !(1 << rq.in_vc);
        r.vc[gvi].stage_from = prm.staging.next_head_from(now, prm.pipeline_delay) as u32;
        if !r.vc[gvi].input.is_empty() {
            // The next packet's head is behind the tail. Its VC allocation starts from the
            // next cycle (a link sending ahead spares the step that came then anyway). An
            // empty VC needs no mark: an arrival marks its port, and the port's other heads
            // keep theirs until VC allocation finds none.
            r.reopen_va(switch, rq.in_port as usize);
            note(wake, now + 1);
        }
        r.vc[gvo].set_flag(Vc::OUT_OWNED, false);
        if wake_if_free::<V>(r, switch, go, rq.out_vc as usize, now, prm) {
            // The heads it woke ask for it from the next cycle: this step's VC allocation
            // is over.
            note(wake, now + 1);
        }
    }
    if r.ports[gi].flits_with_vc() == 0 {
        // Nothing left at this input for switch allocation, whose next visit would only
        // find that out: a head winning its VC or a flit arriving marks the port again.
        let (w, bit) = at.port_bit(rq.in_port as usize);
        r.port_sets[w].busy_inputs &= !bit;
    }
    *wake
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::Hop;

    fn candidate(port: u16, priority: u8, vcs: u32) -> Candidate {
        Candidate { hop: Hop { port, ..Hop::default() }, vcs, priority }
    }

    /// `Selection::Weighted` against its definition: the free (port, VC) of least
    /// `(1 + priority) x queue + priority`, the first found on a tie without a generator.
    #[test]
    fn weighted_selection_takes_the_least_weighted_free_vc() {
        let cands = [candidate(0, 0, 0b11), candidate(1, 1, 0b01)];
        let pick = |queues: [[u64; 2]; 2], free: [[bool; 2]; 2]| least_weighted(&cands, 2, |op, ov| free[op][ov], |c, op, ov| Selection::weight(c.priority, queues[op][ov]), None);
        let all = [[true; 2]; 2];
        // Minimal VCs hold 10 and 12 phits, the deroute 4: 10 against 2 x 4 + 1 = 9.
        assert_eq!(pick([[10, 12], [4, 0]], all), Some((1, 0)));
        // The deroute holds 5: 11 against 10.
        assert_eq!(pick([[10, 12], [5, 0]], all), Some((0, 0)));
        // The least-loaded minimal VC is owned: its other VC, 12, against 11.
        assert_eq!(pick([[10, 12], [5, 0]], [[false, true], [true, true]]), Some((1, 0)));
        // A tie (9 and 2 x 4 + 1) goes to the first found; nothing free, nothing chosen.
        assert_eq!(pick([[9, 12], [4, 0]], all), Some((0, 0)));
        assert_eq!(pick([[9, 12], [4, 0]], [[false; 2]; 2]), None);
    }
}
