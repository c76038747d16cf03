//! Switch state: input and output buffers per port and per VC, crossbar and link occupancy,
//! round-robin pointers. Stored flat over all switches (ports numbered globally) so a step
//! touches a few contiguous cache lines and idle switches cost no work.

mod allocators;
mod fifo;
mod observer;
mod step;

pub use fifo::{Entry, Fifo, OutEntry, Ring};
pub use step::{step_each, RouteFront, Scratch, StepCtx};

use crate::calendar::Event;
use crate::link::{Channel, ClassTimings, Rates};
use crate::packet::Arena;
use crate::route::QueueReach;
use crate::topology::{LinkClass, Topology};

/// How many events ahead of the one being delivered the engine asks for the next one's lines
/// (`Routers::prefetch_event`): enough to cover a miss to memory with the work of the events
/// between, few enough that the lines are still in cache when their event comes.
pub const PREFETCH_EVENTS_AHEAD: usize = 8;
/// How many switches ahead of the one stepping the engine asks for a switch's records on
/// networks far larger than the cache: enough to cover a miss to memory with the work of the
/// steps between, and further ahead gains nothing (docs/benchmark-log.md has the measurements).
const DEEP_SWITCHES_AHEAD: usize = 4;

/// A word of VC-allocation waiter bits (`Routers::va_waiters`).
pub type WaiterWord = u32;

/// Words of waiter bits per output VC of a switch with `ports` ports of `vcs` VCs (the memory
/// estimate asks here too).
pub fn waiter_words(ports: usize, vcs: usize) -> usize {
    (ports * vcs).div_ceil(WaiterWord::BITS as usize)
}

/// What a port's channel leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Peer {
    Switch { switch: u32, port: u16 },
    Server(u32),
    Unconnected,
}

/// One cache line per port (the step reads a port's fields together, and a port split over
/// two lines costs two misses). Cycles fit in 32 bits (`spec::validate::MAX_CYCLES`).
/// 64 bytes of fields: the channel in 8 (`Channel`) leaves room for the link's phit counter,
/// which would otherwise take a line of an array of its own every send.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
#[repr(align(64))]
pub struct Port {
    pub peer: Peer,
    /// The link this port's output channel drives (its class's latency and phit time); a
    /// link's two channels share the class, so it also gives the latency of credits going
    /// back from the port's input buffer. Kept in the port, whose line the step has already
    /// loaded, rather than in an array of its own that every send would miss in.
    pub link: Channel,
    /// Phits sent over the output channel during the measured window: at most one a cycle,
    /// and a run has fewer than 2^31 cycles (`spec::validate::MAX_CYCLES`), so 32 bits hold
    /// them.
    pub link_phits: u32,
    /// Next cycle the crossbar input / output of this port is free.
    pub xbar_in_free: u32,
    pub xbar_out_free: u32,
    /// Next cycle the output link is free; the flit on it releases its output buffer space then.
    pub link_free: u32,
    pub tx_vc: u8,
    pub tx_pending: bool,
    pub tx_phits: u16,
    pub rr_in_vc: u8,
    pub rr_link_vc: u8,
    pub rr_out: u16,
    /// Flits waiting in all VCs of the input / output buffer.
    pub in_flits: u32,
    pub out_flits: u32,
    /// Bit v: input VC v holds a flit; bit v of `routed_vcs`: its front packet has an output
    /// VC. The allocators test these bits instead of touching every VC of a high-radix switch.
    pub in_vcs_nonempty: u32,
    pub routed_vcs: u32,
    /// Bit v: output VC v holds a flit. The link stage walks these instead of reading the
    /// front of every VC of the port (six to eight on a Dragonfly's or an Aries switch's).
    pub out_vcs_nonempty: u32,
    /// Bit v: the head of input VC v found none of the output VCs it may use free; VC
    /// allocation skips it until one of them frees space or is released (see `va_waiters`).
    pub va_waiting: u32,
}

/// 48 bytes: a torus switch's 14 VCs take 11 cache lines instead of 13 at 56, and on networks
/// far larger than the cache each line a step asks for is a miss to memory
/// (docs/benchmark-log.md prices one). Phit counts fit in 16 bits: a VC buffer holds at most
/// `spec::validate::MAX_BUFFER_PHITS`.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct Vc {
    pub input: Fifo,
    pub output: Fifo<OutEntry>,
    /// Phits reserved in the output buffer.
    pub out_used: u16,
    /// Free phits in the next buffer (downstream input VC), as known from credits. A server
    /// takes whatever reaches it: its port's VCs hold `SERVER_CREDITS`, which sends do not
    /// take (`router::step`).
    pub credits: u16,
    /// `Vc::OUT_OWNED` and `Vc::WAITED_ON`, one byte for both (`flag`, `set_flag`).
    flags: u8,
    /// Round-robin pointer of this output VC's allocator, over the switch's input VCs.
    pub rr_va: u16,
    /// The output (port, vc) allocated to the packet at the front of this input VC, when its
    /// bit of the port's `routed_vcs` is set.
    pub route_port: u16,
    pub route_vc: u8,
    /// First cycle the packet at the front may enter its next allocation stage, besides its
    /// own arrival: ask for the crossbar after winning its VC, or for an output VC after the
    /// tail ahead of it has left (`Staging`; with the default staging it is never later than
    /// the cycle it is read in, so only the arrival bound counts).
    pub stage_from: u32,
}

/// The credits of a VC of a server's port, which never run out: a flit's phits are 16-bit, so
/// every flit finds them (`step::credits_cover`), and sends do not take them.
pub const SERVER_CREDITS: u16 = u16::MAX;

impl Vc {
    /// `flags`: the output VC is held by one packet from VC allocation until its tail has
    /// crossed the crossbar.
    pub const OUT_OWNED: u8 = 1;
    /// `flags`: some head waits for this output VC, so its `va_waiters` bits may be set.
    /// Waking an output VC nobody waits for then reads no waiter bits, which at saturation
    /// are megabytes (6.5 MB on the paper's Dragonfly) and mostly out of cache.
    pub const WAITED_ON: u8 = 2;

    #[inline(always)]
    pub fn flag(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
    #[inline(always)]
    pub fn set_flag(&mut self, flag: u8, on: bool) {
        self.flags = if on { self.flags | flag } else { self.flags & !flag };
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
pub struct Routers {
    pub vcs: usize,
    /// Phits of an input buffer per VC (what a full set of credits covers).
    pub in_cap: u32,
    /// Phits of an output buffer per VC.
    pub out_cap: u32,
    /// The switches held: `held.start` is the first, and every per-switch, per-port and
    /// per-VC array below covers these switches only (an MPI rank holds its own range, one
    /// process all). A port's index into them is local: its number in the whole network
    /// (`network_port`) less the first held switch's first port. Not in a checkpoint: a
    /// restored side keeps the fresh one's (`SwitchSide::restore`).
    #[serde(skip)]
    held: std::ops::Range<usize>,
    /// The first held switch's first port in the whole network.
    #[serde(skip)]
    port_offset: usize,
    /// First port (numbered in the whole network) of each switch of the whole network, and
    /// one past the last, kept whole so that a wait-for graph's VCs and a link table's ports
    /// are numbered alike on every rank; empty when every switch has `radix` ports.
    port_base: Vec<u32>,
    /// Ports of every switch when all have the same number (tori, HyperX, Dragonflies): the
    /// first port of a switch is then a product, not a read of `port_base`, which on a
    /// network of a million switches (4 MB) misses the cache at every arrival and step, and
    /// an MPI rank keeps no table of the whole network. 0 when switches differ.
    radix: usize,
    /// Switches of the whole network. Not in a checkpoint (`hold_as`), which therefore
    /// reads as before this field was added.
    #[serde(skip)]
    switches: usize,
    pub ports: Vec<Port>,
    pub vc: Vec<Vc>,
    /// Network ports per switch of the whole network (server ports follow them); empty when
    /// every switch has `net_radix`.
    network_ports: Vec<u16>,
    /// Network ports of every switch when all have the same number; 0 when they differ. Not in
    /// a checkpoint (`hold_as`).
    #[serde(skip)]
    net_radix: u16,
    /// Left out of a checkpoint, which keeps only the flits queued (`queued_behind`): the
    /// arrays are as large as every buffer full (gigabytes on a full-size Aries machine).
    #[serde(skip)]
    pub in_store: Vec<Entry>,
    #[serde(skip)]
    pub out_store: Vec<OutEntry>,
    /// Flits an input / output VC holds: its front in its `Fifo`, the others in `in_store` /
    /// `out_store` (`Ring`).
    pub in_slots: u32,
    pub out_slots: u32,
    /// The phit times of the ports' channels (`Channel`).
    pub rates: Rates,
    /// For each output VC, `waiter_words` words of bits, bit `in_port * vcs + in_vc` of its
    /// switch: heads that wait for this output VC. Freeing it clears their `va_waiting` bits,
    /// so at saturation VC allocation touches only the heads that may now succeed. Words of
    /// 32 bits: a torus switch's 14 input VCs fit one, half the bytes of a 64-bit word.
    pub va_waiters: Vec<WaiterWord>,
    pub waiter_words: usize,
    /// Words per switch of each port bit set (`PortSets`; bit p: the switch's port p).
    pub port_words: usize,
    /// The port bit sets, word `k` of switch `s` at `s * port_words + k`.
    pub port_sets: Vec<PortSets>,
    /// How far ahead the engine loads the state of the switches and packets it will touch.
    pub prefetch: Prefetch,
    /// Most ports a switch may have for its step to be prefetched whole (`WHOLE_SWITCH_BYTES`
    /// of port and VC records).
    whole_switch_ports: usize,
    /// Per port, the output its input arbiter favours next, and per switch the wavefront's
    /// priority diagonal: only the allocators that read them have them (`use_allocators`).
    /// The grant pointers are the ports' `rr_out`.
    accept_ptr: Vec<u16>,
    /// Per switch, its input VCs (local index `port * vcs + vc`) least recently granted
    /// first, at the switch's first VC (LRU switch allocation only).
    lru: Vec<u16>,
    diagonal: Vec<u16>,
    /// Per input VC, the output VC (`port * vcs + vc` of its switch) its iSLIP accept arbiter
    /// favours next; the grant pointers are the output VCs' `rr_va`.
    vc_accept_ptr: Vec<u16>,
    /// Per port, when arrivals wait out a pipeline delay before they may ask for an output VC
    /// (`wait_out_delays`; empty otherwise): a cycle before which none of the port's heads
    /// that need one may ask, set by the VC allocation that found all of them still in their
    /// delay. Until then VC allocation passes the port by instead of reading every such head
    /// again at each step of its switch, which a busy switch takes many of in a head's delay.
    /// An arrival cannot make it later than a head's (every arrival waits the same delay, so
    /// a new head is ready after those before it); a head made able to ask sooner (the next
    /// packet behind a tail that left, a waiting head woken) clears it (`reopen_va`).
    va_from: Vec<u32>,
    /// Per port of the whole network, its backlog at the end of the last cycle, for routing
    /// that reads other switches' queues (observer.rs); empty otherwise. Not in a checkpoint:
    /// it is read again from the restored switches.
    #[serde(skip)]
    observed: Vec<u32>,
    /// Room for `observe`'s reading of a switch: its input VCs' phits and its ports' backlogs.
    #[serde(skip)]
    observe_room: (Vec<u32>, Vec<u32>),
    /// Per held port, the queue behind it (`queue_on`) when the observer last read it, and
    /// whether it may have changed since (a byte each, not a bit: threads mark the ports of
    /// their own switches, and a word would be shared among them): a
    /// flit crossing into an output buffer, a flit sent, its space given back, credits back
    /// (`mark_queue`). The observer reads again only the queues of those ports, where reading
    /// every VC of every port of each switch a cycle touched was most of a UGAL-G run.
    #[serde(skip)]
    observed_queue: Vec<u32>,
    #[serde(skip)]
    queue_marks: Vec<bool>,
}

/// The heads that become ready to ask for an output VC at each of the next cycles, where
/// arrivals wait out a pipeline delay before their switch steps for them (routing that reads
/// the queues on arrival delivers each head as it lands): the step that first reads such a
/// head's VC, its port and its packet comes that many cycles after the arrival wrote them, and
/// on a network far larger than the cache they have left it by then. Each cycle asks for the
/// lines of the heads that become ready in it before its deliveries, so that they arrive while
/// the cycle delivers and steps instead of stalling the steps that read them.
/// One per thread that delivers (engine/blocks.rs, `Walk`): its arrivals write only its own.
#[derive(Default)]
pub struct ReadyAhead {
    /// Per cycle of the wheel, the cycle it holds and (input VC, packet) of each head that
    /// becomes ready then; no slot until the first head is noted.
    slots: Vec<(u64, Vec<(u32, u32)>)>,
}

impl ReadyAhead {
    /// The head of `packet` at the front of input VC `gv` may ask for an output VC from
    /// cycle `ready`, `ready - now` cycles from now (always the same span in a run).
    #[inline]
    pub fn note(&mut self, now: u64, ready: u64, gv: usize, packet: u32) {
        if self.slots.is_empty() {
            self.slots = (0..(ready - now + 1).next_power_of_two()).map(|_| (0, Vec::new())).collect();
        }
        let mask = self.slots.len() as u64 - 1;
        let (cycle, heads) = &mut self.slots[(ready & mask) as usize];
        // Heads of a cycle this thread's walk did not deliver in (the run skipped it, or ran
        // it on another thread) are stale by now: dropped, so the wheel holds at most one
        // span of arrivals.
        if *cycle != ready {
            heads.clear();
            *cycle = ready;
        }
        heads.push((gv as u32, packet));
    }

    /// Ask for the lines of the heads that become ready at `now` at the switches of
    /// `switches` (those the calling thread owns): their VC records, their ports and their
    /// packets.
    #[inline(never)]
    pub fn prefetch(&mut self, now: u64, switches: std::ops::Range<usize>, routers: &Routers, packets: &Arena) {
        use crate::prefetch::{line, slice};
        if self.slots.is_empty() {
            return;
        }
        let mask = self.slots.len() as u64 - 1;
        let (cycle, slot) = &mut self.slots[(now & mask) as usize];
        if *cycle != now {
            return;
        }
        let vcs = routers.first_port(switches.start) * routers.vcs..routers.first_port(switches.end) * routers.vcs;
        for &(gv, packet) in slot.iter() {
            let gv = gv as usize;
            if !vcs.contains(&gv) {
                continue;
            }
            slice(std::slice::from_ref(&routers.vc[gv]));
            line(&routers.ports[gv / routers.vcs]);
            line(packets.get(packet));
        }
        slot.clear();
    }
}

/// One word of each of a switch's port bit sets, side by side: an arrival writes two of them
/// and a step reads all three first thing, so together they cost one cache miss instead of
/// three (on the million-node torus they are 32 MB, far out of cache). Aligned to 32 bytes so
/// that a switch's sets never straddle two cache lines.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
#[repr(align(32))]
pub struct PortSets {
    /// Ports that may hold a head needing an output VC: set whenever one may appear (a flit
    /// in an empty VC, a tail leaving, a waiting head woken) and cleared by VC allocation
    /// when it finds none, so allocation visits only these ports instead of all of a
    /// high-radix switch's.
    pub va: u64,
    /// Ports that may have a flit in an input buffer whose packet holds its output VC: set
    /// when a flit arrives and when a head wins its VC, cleared by the switch allocation that
    /// finds none. Switch allocation walks these bits instead of every port of the switch (a
    /// torus switch stepped for one flit has one or two of seven), and not the ports whose
    /// heads still wait for a VC, which hold nothing it could grant (docs/benchmark-log.md).
    pub busy_inputs: u64,
    /// Ports whose link stage has work: a flit in their output buffer, or one on their link
    /// whose space someone waits for (router/step.rs, `release_needed`). Set by a grant and by
    /// a head or flit that starts waiting for space, cleared by the link stage that finds
    /// neither. A flit on the link that no one waits for keeps no port here: its space is
    /// counted free once it has left (`gone_phits`), so the link stage does not visit a link
    /// that is only finishing a flit with nothing queued behind it, which below saturation
    /// would be most of its visits (docs/benchmark-log.md has the counts).
    pub busy_outputs: u64,
}

/// How much prefetching pays on a network, from the bytes of its port and VC records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Prefetch {
    /// The records fit in a core's L2 cache or little more (`NEAR_BYTES`): prefetching asks
    /// for lines that are mostly there already, so it only adds work.
    None,
    /// The lines of the event 8 ahead, not the switches' records (the benchmark's HyperX and
    /// Aries networks). Most of a step's records are still in the core's caches from the
    /// switch's last step, so asking for the next switch's only adds work, the most on
    /// high-radix switches, whose prefetch walks their marked ports once more
    /// (docs/benchmark-log.md has the measurements).
    Events,
    /// The records are far larger than the caches (`FAR_BYTES`): the switch a few steps ahead
    /// is asked for too, which pays once a step's records have left the cache since its last
    /// step (docs/benchmark-log.md has the measurements).
    Deep,
}

/// Bytes of a switch's port and VC records up to which its step is prefetched whole
/// (`Routers::prefetch_switch`): a torus switch of 7 ports and 2 VCs has 1 KB.
const WHOLE_SWITCH_BYTES: usize = 2 << 10;

/// Bytes of port and VC records below which prefetching is off: twice the 1 MB L2 cache of the
/// cores it was tuned on. Below it most of what an event's delivery reads is still in the
/// caches and asking for it only adds work; above it asking for it pays
/// (docs/benchmark-log.md has the measurements).
const NEAR_BYTES: usize = 2 << 20;
/// Bytes of port and VC records above which prefetching is `Deep`: between 9 MB, where a torus
/// runs faster on one thread without the switches' prefetch, and 15.5 MB, where it runs faster
/// with it, on cores of 2 MB of L2 cache. On two threads each core's cache holds half the
/// network and the choice matters little (docs/benchmark-log.md has the measurements).
const FAR_BYTES: usize = 12 << 20;

impl Prefetch {
    fn for_records(bytes: usize) -> Self {
        if bytes < NEAR_BYTES {
            Prefetch::None
        } else if bytes > FAR_BYTES {
            Prefetch::Deep
        } else {
            Prefetch::Events
        }
    }
}

/// The flits of every input and output buffer behind their VCs' fronts, VC by VC in order:
/// what a checkpoint keeps of `Routers::in_store` and `out_store`.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Queued {
    inputs: Vec<Entry>,
    outputs: Vec<OutEntry>,
}

impl Routers {
    /// The flits queued behind the fronts (`Queued`).
    pub fn queued_behind(&self) -> Queued {
        let mut q = Queued { inputs: Vec::new(), outputs: Vec::new() };
        for (gv, vc) in self.vc.iter().enumerate() {
            q.inputs.extend(vc.input.behind(&self.in_store, Ring::of(gv, self.in_slots)));
            q.outputs.extend(vc.output.behind(&self.out_store, Ring::of(gv, self.out_slots)));
        }
        q
    }

    /// Empty flit arrays for every VC's ring, input and output.
    fn empty_flit_stores(&mut self) {
        self.in_store = vec![Entry::default(); Ring::store_len(self.vc.len(), self.in_slots)];
        self.out_store = vec![OutEntry::default(); Ring::store_len(self.vc.len(), self.out_slots)];
    }

    /// The flit arrays rebuilt from what `queued_behind` gave, the VCs being as they were then.
    pub fn put_back_queued(&mut self, q: Queued) {
        self.empty_flit_stores();
        let (mut inputs, mut outputs) = (q.inputs.into_iter(), q.outputs.into_iter());
        for (gv, vc) in self.vc.iter().enumerate() {
            vc.input.put_behind(&mut self.in_store, Ring::of(gv, self.in_slots), &mut inputs);
            vc.output.put_behind(&mut self.out_store, Ring::of(gv, self.out_slots), &mut outputs);
        }
    }
}

impl Routers {
    /// The switches `held` of `topo` (all of them but on an MPI rank).
    #[allow(clippy::too_many_arguments)]
    pub fn new(topo: &dyn Topology, servers: &crate::topology::ServerMap, timings: &ClassTimings, vcs: usize, in_slots: u32, out_slots: u32, in_cap: u32, out_cap: u32, held: std::ops::Range<usize>) -> Self {
        let n = topo.num_switches();
        let network_ports: Vec<u16> = (0..n).map(|s| topo.network_ports(s) as u16).collect();
        let mut port_base = Vec::with_capacity(n + 1);
        let mut total = 0u32;
        for (s, &np) in network_ports.iter().enumerate() {
            port_base.push(total);
            total += np as u32 + servers.servers_at(s) as u32;
        }
        port_base.push(total);
        let port_offset = port_base[held.start] as usize;
        let held_ports = port_base[held.end] as usize - port_offset;
        // Sized up front from those counts: grown by doubling, a large network's ports would
        // end in a block larger than they need, which the moves on the way leave largely in
        // small pages, and every arrival and step would pay for those in TLB misses.
        let mut ports = Vec::with_capacity(held_ports);
        let mut rates = Rates::default();
        for s in held.clone() {
            let np = network_ports[s];
            for p in 0..np as usize {
                let peer = match topo.neighbour(s, p) {
                    Some(pp) => Peer::Switch { switch: pp.switch, port: pp.port },
                    None => Peer::Unconnected,
                };
                ports.push(Port::new(peer, rates.channel(timings.of_port(topo, s, p))));
            }
            for l in 0..servers.servers_at(s) {
                ports.push(Port::new(Peer::Server(servers.server(s, l) as u32), rates.channel(timings.of(LinkClass::Injection))));
            }
        }
        debug_assert_eq!(ports.len(), held_ports);
        let max_ports = port_base.windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap_or(0);
        let (radix, net_radix) = Self::alike(topo);
        let held_switches = held.len();
        let waiter_words = waiter_words(max_ports, vcs);
        let port_words = max_ports.div_ceil(64).max(1);
        let nvc = ports.len() * vcs;
        let mut vc = vec![Vc::default(); nvc];
        for (gp, port) in ports.iter().enumerate() {
            let credits = match port.peer {
                Peer::Switch { .. } => u16::try_from(in_cap).expect("validation keeps a VC buffer within 16 bits"),
                // Servers sink one phit per cycle, the link's rate: they never push back.
                Peer::Server(_) => SERVER_CREDITS,
                Peer::Unconnected => 0,
            };
            for v in 0..vcs {
                let q = &mut vc[gp * vcs + v];
                q.credits = credits;
            }
        }
        let prefetch = Prefetch::for_records(ports.len() * std::mem::size_of::<Port>() + nvc * std::mem::size_of::<Vc>());
        let mut routers = Routers {
            vcs,
            in_cap,
            out_cap,
            held,
            port_offset,
            port_base: if radix != 0 { Vec::new() } else { port_base },
            radix,
            switches: n,
            rates,
            ports,
            vc,
            network_ports: if net_radix != 0 { Vec::new() } else { network_ports },
            net_radix,
            in_store: Vec::new(),
            out_store: Vec::new(),
            in_slots,
            out_slots,
            va_waiters: vec![0; nvc * waiter_words],
            waiter_words,
            port_words,
            port_sets: vec![PortSets::default(); held_switches * port_words],
            prefetch,
            whole_switch_ports: WHOLE_SWITCH_BYTES / (std::mem::size_of::<Port>() + vcs * std::mem::size_of::<Vc>()),
            accept_ptr: Vec::new(),
            lru: Vec::new(),
            diagonal: Vec::new(),
            vc_accept_ptr: Vec::new(),
            va_from: Vec::new(),
            observed: Vec::new(),
            observe_room: (Vec::new(), Vec::new()),
            observed_queue: Vec::new(),
            queue_marks: Vec::new(),
        };
        routers.empty_flit_stores();
        routers
    }

    /// Arrivals wait out a pipeline delay before they may ask for an output VC (routing that
    /// reads the queues on arrival delivers each head as it lands): keep the ports' bounds
    /// (`va_from`).
    pub fn wait_out_delays(&mut self) {
        self.va_from = vec![0; self.ports.len()];
    }

    /// A cycle before which no head of global port `gp` that needs an output VC may ask for
    /// one (`va_from`; 0 when the run keeps none).
    #[inline(always)]
    pub fn va_from(&self, gp: usize) -> u64 {
        self.va_from.get(gp).map_or(0, |&t| t as u64)
    }

    /// No head of global port `gp` that needs an output VC may ask for one before `t`.
    #[inline(always)]
    pub fn hold_va_until(&mut self, gp: usize, t: u64) {
        if let Some(from) = self.va_from.get_mut(gp) {
            *from = t as u32;
        }
    }

    /// Port `port` of `switch` may hold a head that may ask for an output VC sooner than its
    /// bound said (`va_from`): VC allocation visits it again.
    #[inline]
    pub fn reopen_va(&mut self, switch: usize, port: usize) {
        let gp = self.global_port(switch, port);
        if let Some(from) = self.va_from.get_mut(gp) {
            *from = 0;
        }
        self.mark_va(switch, port);
    }

    /// Give the switches the pointers the allocators read beyond the ports' and VCs' own.
    pub fn use_allocators(&mut self, vc: crate::allocation::VcAllocator, switch: crate::allocation::SwitchAllocator) {
        if switch.matches_all_requests() {
            self.accept_ptr = vec![0; self.ports.len()];
            self.diagonal = vec![0; self.held.len()];
        }
        if switch == crate::allocation::SwitchAllocator::Lru {
            // Each switch's list starts in input VC order.
            let vcs = self.vcs;
            self.lru = self.held.clone().flat_map(|s| 0..(self.ports_of(s).len() * vcs) as u16).collect();
        }
        if matches!(vc, crate::allocation::VcAllocator::Islip { .. }) {
            self.vc_accept_ptr = vec![0; self.vc.len()];
        }
    }

    /// The VC allocator pointers of the switch whose ports are `ports`.
    fn vc_allocator_pointers(&mut self, ports: std::ops::Range<usize>) -> VcPointers<'_> {
        let vcs = ports.start * self.vcs..ports.end * self.vcs;
        VcPointers { vc: &mut self.vc[vcs.clone()], accept: &mut self.vc_accept_ptr[vcs] }
    }

    /// The switch allocator pointers of `switch`, whose ports are `ports`, and its
    /// wavefront diagonal.
    fn allocator_pointers(&mut self, switch: usize, ports: std::ops::Range<usize>) -> (SwitchPointers<'_>, &mut u16) {
        (SwitchPointers { ports: &mut self.ports[ports.clone()], accept: &mut self.accept_ptr[ports] }, &mut self.diagonal[switch - self.held.start])
    }

    /// Bytes of the port, VC and buffer records of all switches.
    pub fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.ports.len() * size_of::<Port>() + self.vc.len() * size_of::<Vc>() + self.in_store.len() * size_of::<Entry>()
            + self.out_store.len() * size_of::<OutEntry>()
    }

    /// Drop the buffers and VC records at the end of a run (the ports, with the links'
    /// counters, stay for the result tables).
    pub fn release_buffers(&mut self) {
        self.in_store = Vec::new();
        self.out_store = Vec::new();
        self.vc = Vec::new();
        self.va_waiters = Vec::new();
    }

    /// The switches held (`held`).
    pub fn held(&self) -> std::ops::Range<usize> {
        self.held.clone()
    }

    /// The ports of `switch` (a held one), as indices into the port arrays.
    #[inline(always)]
    pub fn ports_of(&self, switch: usize) -> std::ops::Range<usize> {
        self.first_port(switch)..self.first_port(switch + 1)
    }

    /// The first port of `switch` (a held one, or one past the last held), as an index into
    /// the port arrays.
    #[inline(always)]
    pub fn first_port(&self, switch: usize) -> usize {
        if self.radix != 0 {
            (switch - self.held.start) * self.radix
        } else {
            self.port_base[switch] as usize - self.port_offset
        }
    }

    /// The first port of `switch`, any switch of the network (or one past the last),
    /// numbered in the whole network.
    #[inline(always)]
    fn network_base(&self, switch: usize) -> usize {
        if self.radix != 0 {
            assert!(switch <= self.switches, "switch {switch} of {}", self.switches);
            switch * self.radix
        } else {
            self.port_base[switch] as usize
        }
    }

    /// Network ports of `switch`, any switch of the network (its server ports follow them).
    #[inline(always)]
    pub fn network_ports_of(&self, switch: usize) -> usize {
        if self.net_radix != 0 {
            assert!(switch < self.switches, "switch {switch} of {}", self.switches);
            self.net_radix as usize
        } else {
            self.network_ports[switch] as usize
        }
    }

    /// Bytes of the tables of the whole network it keeps.
    pub fn network_table_bytes(&self) -> u64 {
        4 * self.port_base.len() as u64 + 2 * self.network_ports.len() as u64
    }

    /// Bytes of the tables of the whole network that routers of `topo` keep, without
    /// building them (the memory estimate, engine/memory): where each switch's ports start
    /// unless every switch has as many ports, how many face the network unless every switch
    /// has as many of those.
    pub fn network_table_bytes_for(topo: &dyn Topology) -> u64 {
        let n = topo.num_switches() as u64;
        let (radix, net_radix) = Self::alike(topo);
        (if radix != 0 { 0 } else { 4 * (n + 1) }) + if net_radix != 0 { 0 } else { 2 * n }
    }

    /// The ports and the network ports every switch of `topo` has, where all have as many
    /// (0 where they differ): the first port of a switch and its network ports are then
    /// products, and no table of them is kept.
    fn alike(topo: &dyn Topology) -> (usize, u16) {
        let n = topo.num_switches();
        let radix = |s: usize| topo.network_ports(s) + topo.servers_at(s);
        let same = |f: &dyn Fn(usize) -> usize| if n > 0 && (1..n).all(|s| f(s) == f(0)) { f(0) } else { 0 };
        (same(&radix), same(&|s| topo.network_ports(s)) as u16)
    }

    /// The shortest latency of a link between two of the switches held (`u64::MAX` if none
    /// leaves one).
    pub fn shortest_switch_link(&self) -> u64 {
        self.ports.iter().filter(|p| matches!(p.peer, Peer::Switch { .. })).map(|p| p.link.latency as u64).min().unwrap_or(u64::MAX)
    }

    /// Port `port` of `switch`, any switch of the network, numbered in the whole network: the
    /// same on every rank.
    pub fn network_port(&self, switch: usize, port: usize) -> usize {
        self.network_base(switch) + port
    }

    /// The port that index `gp` of the port arrays holds, numbered in the whole network.
    pub fn network_port_of(&self, gp: usize) -> usize {
        gp + self.port_offset
    }

    /// The VC that index `gv` of the VC arrays holds, numbered in the whole network (a wait-for
    /// graph's and a conservation check's numbering).
    pub fn network_vc_of(&self, gv: usize) -> usize {
        gv + self.port_offset * self.vcs
    }

    /// The index into the VC arrays of network VC `nv`, if its switch is held.
    pub fn held_vc(&self, nv: usize) -> Option<usize> {
        let first = self.port_offset * self.vcs;
        nv.checked_sub(first).filter(|&gv| gv < self.vc.len())
    }

    /// The same switches as `fresh` (a checkpoint does not keep which).
    pub fn hold_as(&mut self, fresh: &Routers) {
        self.held = fresh.held.clone();
        self.port_offset = fresh.port_offset;
        self.switches = fresh.switches;
        self.net_radix = fresh.net_radix;
    }

    /// The ports of the whole network.
    pub fn network_port_count(&self) -> usize {
        self.network_base(self.switches)
    }

    /// Port `port` of `switch` (a held one) as an index into the port arrays: "global" as
    /// opposed to the switch's own port number.
    #[inline]
    pub fn global_port(&self, switch: usize, port: usize) -> usize {
        self.first_port(switch) + port
    }

    pub fn num_ports(&self, switch: usize) -> usize {
        self.ports_of(switch).len()
    }

    /// Queue a flit that has arrived at input VC `vc` of port `port` of `switch`. Returns
    /// whether it is at the front of its VC, the only place where it may be allocated.
    #[inline]
    pub fn push_input(&mut self, switch: usize, port: usize, vc: usize, e: Entry) -> bool {
        let gp = self.global_port(switch, port);
        let gv = gp * self.vcs + vc;
        let front = self.vc[gv].input.is_empty();
        self.vc[gv].input.push(&mut self.in_store, Ring::of(gv, self.in_slots), e);
        self.ports[gp].in_flits += 1;
        self.ports[gp].in_vcs_nonempty |= 1 << vc;
        self.mark_va(switch, port);
        let (w, bit) = self.port_bit(switch, port);
        self.port_sets[w].busy_inputs |= bit;
        front
    }

    /// Where port `port` of `switch` is in the per-switch port sets (`PortSets`):
    /// its word and its bit there.
    #[inline(always)]
    pub fn port_bit(&self, switch: usize, port: usize) -> (usize, u64) {
        ((switch - self.held.start) * self.port_words + port / 64, 1 << (port % 64))
    }

    /// The queue behind output port `gp` (an index into the port arrays) may have changed
    /// (`queue_marks`; nothing unless the observer keeps the backlogs).
    #[inline(always)]
    pub fn mark_queue(&mut self, gp: usize) {
        if !self.queue_marks.is_empty() {
            self.queue_marks[gp] = true;
        }
    }

    /// Port `port` of `switch` now has work for its link stage (`busy_outputs`).
    #[inline]
    pub fn mark_sending(&mut self, switch: usize, port: usize) {
        let (w, bit) = self.port_bit(switch, port);
        self.port_sets[w].busy_outputs |= bit;
    }

    /// Port `port` of `switch` may now hold a head that needs an output VC.
    #[inline]
    pub fn mark_va(&mut self, switch: usize, port: usize) {
        let (w, bit) = self.port_bit(switch, port);
        self.port_sets[w].va |= bit;
    }

    /// Record that the head of input VC `in_vc` of port `in_port` of `switch` waits for
    /// output VC `gov`.
    #[inline]
    pub fn wait_for(&mut self, switch: usize, in_port: usize, in_vc: usize, gov: usize) {
        let bit = in_port * self.vcs + in_vc;
        self.va_waiters[gov * self.waiter_words + bit / 32] |= 1 << (bit % 32);
        self.vc[gov].set_flag(Vc::WAITED_ON, true);
        let gp = self.global_port(switch, in_port);
        self.ports[gp].va_waiting |= 1 << in_vc;
    }

    /// Output VC `gov` of `switch` freed space or was released: its waiting heads may now win
    /// it. A head may be woken by a VC it no longer waits for; it then merely looks again.
    #[inline(never)]
    pub fn wake_waiters(&mut self, switch: usize, gov: usize) {
        if !self.vc[gov].flag(Vc::WAITED_ON) {
            return;
        }
        self.vc[gov].set_flag(Vc::WAITED_ON, false);
        let w = self.waiter_words;
        let base = self.first_port(switch);
        for k in 0..w {
            let mut bits = std::mem::take(&mut self.va_waiters[gov * w + k]);
            while bits != 0 {
                let bit = k * 32 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let port = bit / self.vcs;
                self.ports[base + port].va_waiting &= !(1 << (bit % self.vcs));
                self.reopen_va(switch, port);
            }
        }
    }

    /// Start loading the ports and VCs of `switch`, stepped a few steps from now, into the L2
    /// cache, so they arrive while the switches before it step instead of stalling its own
    /// step line by line.
    /// A switch of a few ports (a torus's) has its records prefetched whole: a step touches
    /// most of them. A high-radix one (an Aries switch: 30 ports of 8 VCs, 15 KB) only where
    /// its port sets mark work, since its step walks those sets and the whole switch would be
    /// hundreds of lines, most of which the step never reads. Nor the ports whose heads VC
    /// allocation will pass by at `now` (`va_from`) and which have nothing else to do.
    pub fn prefetch_switch(&self, switch: usize, now: u64) {
        use crate::prefetch::{line, slice};
        let std::ops::Range { start: a, end: b } = self.ports_of(switch);
        // The step reads its switch's words of marked ports first thing in each stage, far
        // from the ports in memory.
        let w = self.port_bit(switch, 0).0;
        slice(&self.port_sets[w..w + self.port_words]);
        if b - a <= self.whole_switch_ports {
            slice(&self.ports[a..b]);
            slice(&self.vc[a * self.vcs..b * self.vcs]);
            return;
        }
        for k in 0..self.port_words {
            let sets = &self.port_sets[w + k];
            let mut marked = sets.busy_outputs | sets.busy_inputs;
            let mut va = sets.va & !marked;
            while va != 0 {
                let p = va.trailing_zeros() as usize;
                va &= va - 1;
                if self.va_from(a + k * 64 + p) <= now {
                    marked |= 1 << p;
                }
            }
            while marked != 0 {
                let p = marked.trailing_zeros() as usize;
                marked &= marked - 1;
                let gp = a + k * 64 + p;
                line(&self.ports[gp]);
                slice(&self.vc[gp * self.vcs..(gp + 1) * self.vcs]);
            }
        }
    }

    /// What the engine asks for before stepping `visit[i]` on networks far larger than the
    /// cache (`Prefetch::Deep`): the ports and VCs of the switch `DEEP_SWITCHES_AHEAD` ahead.
    /// Not the packets of the next switch's heads: a switch steps right after its block's
    /// deliveries (engine/blocks.rs), which have just read the packet of every head that
    /// arrived, so asking for them again only adds work (docs/benchmark-log.md).
    #[inline(always)]
    pub fn prefetch_visits(&self, visit: &[u32], i: usize, now: u64) {
        // Tested here, inlined into the engine's loop: most networks that run long are small
        // enough to ask for no switch ahead, and there a call per step only to return costs
        // time for nothing.
        if self.prefetch == Prefetch::Deep {
            self.prefetch_visits_far(visit, i, now);
        }
    }

    #[inline(never)]
    fn prefetch_visits_far(&self, visit: &[u32], i: usize, now: u64) {
        if i == 0 {
            for &s in visit.iter().take(DEEP_SWITCHES_AHEAD).skip(1) {
                self.prefetch_switch(s as usize, now);
            }
        }
        if let Some(&s) = visit.get(i + DEEP_SWITCHES_AHEAD) {
            self.prefetch_switch(s as usize, now);
        }
    }

    /// Start loading what delivering `ev` will touch in the switches and the packets: the
    /// engine asks a few events ahead, so the misses of consecutive events (each at a switch
    /// and a packet far from the last one's) overlap instead of following one another.
    #[inline(always)]
    pub fn prefetch_event(&self, ev: &Event, packets: &Arena) {
        // Tested here, inlined into the delivery loops, as in `prefetch_visits`: on a network
        // in cache a call per event only to return costs time for nothing.
        if self.prefetch != Prefetch::None {
            self.prefetch_event_lines(ev, packets);
        }
    }

    #[inline(never)]
    fn prefetch_event_lines(&self, ev: &Event, packets: &Arena) {
        use crate::prefetch::{line, slice};
        match *ev {
            Event::FlitArrive { switch, port, vc, packet, flit, .. } => {
                let gp = self.global_port(switch as usize, port as usize);
                let gv = gp * self.vcs + vc as usize;
                line(&self.ports[gp]);
                // Only the VC's input queue: the rest of its record (the output side, a line
                // away on most VCs) waits for the switch's step, which asks for it whole. Nor
                // the ring behind the queue's front, which the flit only enters when the VC
                // holds one already: rare at the loads large networks run at, and a write
                // then, which does not hold the core up. Every line asked for and not read
                // takes a place among the misses the core can keep in flight
                // (docs/benchmark-log.md has the measurements).
                slice(std::slice::from_ref(&self.vc[gv].input));
                line(&self.port_sets[self.port_bit(switch as usize, port as usize).0]);
                if flit.is_head() {
                    // Routing reads the packet's first line, and the buffer entry takes the
                    // packet's length from it.
                    line(packets.get(packet));
                }
            }
            Event::Credit { switch, port, vc, .. } => {
                let gv = self.global_port(switch as usize, port as usize) * self.vcs + vc as usize;
                // Delivering it reads the credits and the front of the output queue.
                line(&self.vc[gv].credits);
                slice(std::slice::from_ref(&self.vc[gv].output));
            }
            Event::Eject { packet, .. } => line(&packets.get(packet).flits_ejected),
            Event::NicCredit { .. } => {}
        }
    }

    /// Phits queued behind output VC `gv` as its switch sees them: its output buffer plus what
    /// the credits say the next input buffer holds (nothing for a server, which never pushes
    /// back). Both the allocator's join-the-shortest-queue and adaptive routing read this.
    #[inline]
    pub fn vc_queue(&self, gv: usize) -> u32 {
        let q = &self.vc[gv];
        q.out_used as u32 + self.in_cap - (q.credits as u32).min(self.in_cap)
    }

    /// Phits of room behind the VCs of `mask` of output `port` of `switch`, as it sees it:
    /// what its output buffers have left plus, as far as `reach` goes, the credits it holds
    /// for the next input buffers (the complement of `queue_on`).
    pub fn free_on(&self, switch: usize, port: usize, mask: u32, reach: QueueReach) -> u32 {
        self.sum_over_vcs(switch, port, mask, |gv| {
            let q = &self.vc[gv];
            let next = if reach == QueueReach::NextInput { (q.credits as u32).min(self.in_cap) } else { 0 };
            self.out_cap.saturating_sub(q.out_used as u32) + next
        })
    }

    /// Phits queued behind the VCs of `mask` of output `port` of `switch`: its output buffers
    /// and, as far as `reach` goes, the next input buffers (`vc_queue`).
    pub fn queue_on(&self, switch: usize, port: usize, mask: u32, reach: QueueReach) -> u32 {
        self.sum_over_vcs(switch, port, mask, |gv| match reach {
            QueueReach::NextInput => self.vc_queue(gv),
            QueueReach::OwnOutput => self.vc[gv].out_used as u32,
        })
    }

    /// `of` each output VC (`gv`) of `mask` of output `port` of `switch`, summed.
    fn sum_over_vcs(&self, switch: usize, port: usize, mask: u32, of: impl Fn(usize) -> u32) -> u32 {
        let gp = self.global_port(switch, port);
        (0..self.vcs).filter(|v| mask >> v & 1 == 1).map(|v| of(gp * self.vcs + v)).sum()
    }

    /// Phits in `switch`'s input buffers whose front packet waits for an output VC of `port`
    /// or holds one: the backlog of a busy output beyond its own queue, which only a global
    /// observer counts (UGAL-G). A head waiting for several outputs counts for each.
    pub fn waiting_for(&self, switch: usize, port: usize) -> u32 {
        let vcs = self.vcs;
        let base = self.first_port(switch);
        let mut total = 0;
        if self.has_waiting_heads(switch) {
            self.for_each_waiting(base, base + port, |bit| total += self.input_phits(base * vcs + bit));
        }
        self.for_each_routed(switch, |gv, to| {
            if to == port {
                total += self.input_phits(gv);
            }
        });
        total
    }

    /// Call `f` with each input VC of `switch` (an index into the VC arrays) that holds an
    /// output VC, and the output port it holds one of.
    #[inline]
    fn for_each_routed(&self, switch: usize, mut f: impl FnMut(usize, usize)) {
        let base = self.first_port(switch);
        for ip in 0..self.num_ports(switch) {
            let mut routed = self.ports[base + ip].routed_vcs;
            while routed != 0 {
                let gv = (base + ip) * self.vcs + routed.trailing_zeros() as usize;
                routed &= routed - 1;
                f(gv, self.vc[gv].route_port as usize);
            }
        }
    }

    /// Whether a head of `switch` waits for an output VC (`Port::va_waiting`): most switches
    /// below saturation have none, and their waiter bits need not be read.
    #[inline]
    fn has_waiting_heads(&self, switch: usize) -> bool {
        self.ports[self.ports_of(switch)].iter().any(|p| p.va_waiting != 0)
    }

    /// Call `f` with each input VC of its switch (`in_port * vcs + vc`) whose head waits for
    /// an output VC of port `gp` (an index into the port arrays; `base` is its switch's
    /// first). A head woken by another output VC keeps its bits on this one until this one
    /// frees (`wake_waiters`): only the bits of heads that wait now (`va_waiting`) count.
    #[inline]
    fn for_each_waiting(&self, base: usize, gp: usize, mut f: impl FnMut(usize)) {
        let (vcs, w) = (self.vcs, self.waiter_words);
        for k in 0..w {
            let mut bits = (0..vcs).fold(0u32, |acc, v| acc | self.va_waiters[(gp * vcs + v) * w + k]);
            while bits != 0 {
                let bit = k * 32 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if self.ports[base + bit / vcs].va_waiting >> (bit % vcs) & 1 == 1 {
                    f(bit);
                }
            }
        }
    }

    /// Phits in the input buffer of VC `gv` (an index into the VC arrays).
    #[inline]
    fn input_phits(&self, gv: usize) -> u32 {
        self.vc[gv].input.iter(&self.in_store, Ring::of(gv, self.in_slots)).map(|e| e.phits as u32).sum()
    }

    /// The switch that index `gp` of the port arrays belongs to (binary search; only for
    /// reports).
    pub fn switch_of_port(&self, gp: usize) -> usize {
        self.switch_of_network_port(gp + self.port_offset)
    }

    /// The switch of network port `np` (`network_port`), held or not.
    pub fn switch_of_network_port(&self, np: usize) -> usize {
        if self.radix != 0 {
            np / self.radix
        } else {
            self.port_base.partition_point(|&b| b as usize <= np) - 1
        }
    }
}

/// One switch's allocator pointers (`allocators::Pointers`).
struct SwitchPointers<'a> {
    ports: &'a mut [Port],
    accept: &'a mut [u16],
}

impl allocators::Pointers for SwitchPointers<'_> {
    fn grant(&self, output: usize) -> usize {
        self.ports[output].rr_out as usize
    }
    fn set_grant(&mut self, output: usize, input: usize) {
        self.ports[output].rr_out = input as u16;
    }
    fn accept(&self, input: usize) -> usize {
        self.accept[input] as usize
    }
    fn set_accept(&mut self, input: usize, output: usize) {
        self.accept[input] = output as u16;
    }
}

/// One switch's VC allocator pointers, over its input and output VCs numbered `port * vcs +
/// vc` (`allocators::Pointers`).
struct VcPointers<'a> {
    vc: &'a mut [Vc],
    accept: &'a mut [u16],
}

impl allocators::Pointers for VcPointers<'_> {
    fn grant(&self, output: usize) -> usize {
        self.vc[output].rr_va as usize
    }
    fn set_grant(&mut self, output: usize, input: usize) {
        self.vc[output].rr_va = input as u16;
    }
    fn accept(&self, input: usize) -> usize {
        self.accept[input] as usize
    }
    fn set_accept(&mut self, input: usize, output: usize) {
        self.accept[input] = output as u16;
    }
}

/// What a switch sees of the network while it routes: its buffers and credits, and the VC
/// policy that says which of them a packet would use.
pub struct SwitchView<'a> {
    pub routers: &'a Routers,
    pub vc_policy: &'a dyn crate::vc::VcPolicy,
    pub reach: QueueReach,
}

impl crate::route::Congestion for SwitchView<'_> {
    fn port_queue(&self, switch: usize, port: usize) -> u32 {
        self.routers.queue_on(switch, port, u32::MAX, self.reach)
    }
    fn hop_queue(&self, switch: usize, state: &crate::route::RouteState, hop: &crate::route::Hop) -> u32 {
        self.routers.queue_on(switch, hop.port as usize, self.vc_policy.allowed(state, hop), self.reach)
    }
    fn waiting_for(&self, switch: usize, port: usize) -> u32 {
        self.routers.waiting_for(switch, port)
    }
    fn observed_backlog(&self, switch: usize, port: usize) -> u32 {
        self.routers.observed(switch, port)
    }
    fn port_free(&self, switch: usize, port: usize) -> u32 {
        self.routers.free_on(switch, port, u32::MAX, self.reach)
    }
    fn hop_free(&self, switch: usize, state: &crate::route::RouteState, hop: &crate::route::Hop) -> u32 {
        self.routers.free_on(switch, hop.port as usize, self.vc_policy.allowed(state, hop), self.reach)
    }
}

impl Port {
    fn new(peer: Peer, link: Channel) -> Self {
        Port {
            peer,
            link,
            link_phits: 0,
            xbar_in_free: 0,
            xbar_out_free: 0,
            link_free: 0,
            tx_vc: 0,
            tx_pending: false,
            tx_phits: 0,
            rr_in_vc: 0,
            rr_link_vc: 0,
            rr_out: 0,
            in_flits: 0,
            out_flits: 0,
            in_vcs_nonempty: 0,
            routed_vcs: 0,
            out_vcs_nonempty: 0,
            va_waiting: 0,
        }
    }

    /// Bit v: input VC v holds a head that needs an output VC and is not waiting for one
    /// (what VC allocation looks at, `PortSets::va`).
    #[inline(always)]
    pub fn heads_needing_vc(&self) -> u32 {
        self.in_vcs_nonempty & !self.routed_vcs & !self.va_waiting
    }

    /// Bit v: input VC v holds a flit whose packet holds its output VC (what switch
    /// allocation looks at, `PortSets::busy_inputs`).
    #[inline(always)]
    pub fn flits_with_vc(&self) -> u32 {
        self.in_vcs_nonempty & self.routed_vcs
    }
}

#[cfg(test)]
mod tests {
    /// The step loads a port as one line; a field added beyond it costs every step a miss.
    #[test]
    fn a_port_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<super::Port>(), 64);
        assert_eq!(std::mem::align_of::<super::Port>(), 64);
    }

    /// A torus switch's 14 VC records take 11 lines at 48 bytes (13 at 56): a byte more in a
    /// field costs every step of a large network.
    #[test]
    fn a_vc_record_is_48_bytes() {
        assert_eq!(std::mem::size_of::<super::Vc>(), 48);
        assert_eq!(std::mem::size_of::<super::Entry>(), 14);
        assert_eq!(std::mem::size_of::<super::OutEntry>(), 12);
    }

    /// A switch's ports are numbered alike whether the network's port tables are kept (a
    /// fat-tree, whose levels differ) or are products (a torus, where an MPI rank then keeps
    /// no table of the whole network): ranges, network numbers and the way back agree.
    #[test]
    fn ports_are_numbered_alike_with_and_without_tables() {
        for (toml, tables) in [("[topology]\nkind = \"torus\"\ndims = [4, 4]\n", false), ("[topology]\nkind = \"fat_tree\"\nk = 2\nlevels = 3\n", true)] {
            let spec = crate::spec::from_toml_str(toml).unwrap();
            let topo = crate::topology::build(&spec).unwrap();
            let servers = crate::topology::ServerMap::new(topo.as_ref());
            let timings = crate::link::ClassTimings::build(&spec, topo.as_ref()).unwrap();
            let n = topo.num_switches();
            let held = n / 3..n;
            let r = super::Routers::new(topo.as_ref(), &servers, &timings, 2, 4, 2, 8, 4, held.clone());
            assert_eq!(r.network_table_bytes() > 0, tables, "{toml}");
            assert_eq!(r.network_table_bytes(), super::Routers::network_table_bytes_for(topo.as_ref()));
            assert_eq!(servers.bytes() > 0, tables, "{toml}");
            let mut next = 0;
            for s in 0..n {
                assert_eq!(r.network_ports_of(s), topo.network_ports(s));
                let width = topo.network_ports(s) + topo.servers_at(s);
                for p in 0..width {
                    assert_eq!((r.network_port(s, p), r.switch_of_network_port(next + p)), (next + p, s));
                }
                if held.contains(&s) {
                    assert_eq!(r.ports_of(s).len(), width);
                    assert_eq!(r.network_port_of(r.ports_of(s).start), next);
                }
                next += width;
            }
            assert_eq!(r.network_port_count(), next);
        }
    }

    /// The benchmark's tori fall on the three sides of the thresholds they were measured on.
    #[test]
    fn prefetching_follows_the_size_of_the_records() {
        use super::{Port, Prefetch, Vc};
        let records = |switches: usize| {
            let ports = switches * 7;
            ports * std::mem::size_of::<Port>() + 2 * ports * std::mem::size_of::<Vc>()
        };
        assert_eq!(Prefetch::for_records(records(64)), Prefetch::None);
        assert_eq!(Prefetch::for_records(records(1_000)), Prefetch::None);
        assert_eq!(Prefetch::for_records(records(16 * 16 * 16)), Prefetch::Events);
        assert_eq!(Prefetch::for_records(records(20 * 20 * 20)), Prefetch::Events);
        assert_eq!(Prefetch::for_records(records(24 * 24 * 24)), Prefetch::Deep);
        assert_eq!(Prefetch::for_records(records(32_768)), Prefetch::Deep);
    }
}
