//! What routing algorithms and VC policies share: the state a packet carries for routing
//! decisions, the hops a routing offers, and the congestion a switch can see when it chooses.
//! Both `routing` and `vc` build on this module; neither depends on the other.

pub use crate::random::Rng;

/// What travels with a packet for routing and VC decisions.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct RouteState {
    pub src_switch: u32,
    pub dst_switch: u32,
    /// Switch-to-switch hops taken so far.
    pub hops: u16,
    /// Hops taken over local / global links (topologies with link classes).
    pub local_hops: u8,
    pub global_hops: u8,
    /// 0 on the way to a Valiant intermediate (or minimal), 1 after it.
    pub phase: u8,
    /// Global hops taken before the current phase began (set at the intermediate switch), so
    /// VC policies can tell a phase's local hops before its global hop from those after.
    pub phase_start_global: u8,
    /// Whether the packet was routed through an intermediate switch. Valiant on low-diameter
    /// networks leaves it false for a packet whose drawn intermediate is its source or
    /// destination switch (routed minimally; `intermediate` still says which was drawn).
    pub valiant: bool,
    pub intermediate: u32,
    /// Dimensions whose wrap-around (dateline) link this packet has crossed in this phase.
    pub wrapped: u32,
    /// Random per-packet choice for dimensions exactly half-way round a ring: bit set = go -.
    /// On Aries the same bits pick the packet's link of the global bundle (`aries_minimal`).
    pub tie_dirs: u32,
    /// VC the packet occupies now.
    pub vc: u8,
    /// Routing mode of the packet's message (routings with modes, such as `aries`; 0
    /// otherwise): the mode travels with the packet so each message may choose its own.
    pub mode: u8,
    /// The packet must keep to one VC per hop (the lowest its policy allows) so that packets
    /// of one flow on one path cannot overtake each other (Aries `in_order`).
    pub in_order: bool,
    /// The packet's number in its message: a header field routings may hash (Aries
    /// `min_hash`).
    pub header: u32,
    /// The routing algorithm's own per-packet state, which nothing else reads: it sets it in
    /// `Routing::on_inject` and `Routing::on_hop` (`dal`: the dimensions derouted in).
    pub word: u32,
}

/// One hop a packet may take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Hop {
    pub port: u16,
    /// Dimension moved along (cartesian topologies), `NO_DIM` otherwise.
    pub dim: u8,
    /// The hop crosses a dateline (the wrap-around link of a ring).
    pub wraps: bool,
    /// The minimal path along this dimension still has a wrap-around link ahead (this hop included).
    pub wrap_ahead: bool,
    /// Link class: 0 local, 1 global.
    pub class: u8,
    /// The hop goes to a server (ejection).
    pub eject: bool,
    /// The hop belongs to the escape sub-network (Duato): the DOR hop, offered on the escape
    /// VCs; other hops of adaptive routings go on the adaptive VCs (`vc::escape`).
    pub escape: bool,
}

pub const NO_DIM: u8 = u8::MAX;

#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct Candidate {
    pub hop: Hop,
    /// Allowed VCs at the next buffer, a bit per VC; filled by the VC policy.
    pub vcs: u32,
    /// Lower is preferred; equal priorities are chosen by free space (adaptive choice).
    pub priority: u8,
}

/// Candidates a packet holds in its own slots (`CandidateSlots`): every routing whose heads
/// are offered no more (`AlgorithmKind::candidates`) keeps them in the packet's first cache
/// lines; a run whose routing may offer more keeps them in a table beside the packets
/// (`packet::Arena`), as many per packet as its routing may offer.
pub const INLINE_CANDIDATES: usize = 8;

/// A packet's own candidate slots, `len` first so it sits next to the first candidates (see
/// `Packet`). With a table beside the packets only `len` is used.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
#[repr(C)]
pub struct CandidateSlots {
    pub len: u8,
    pub list: [Candidate; INLINE_CANDIDATES],
}

/// Where a routing writes a head's candidates: a packet's slots or its row of the arena's
/// table, or a `CandidateBuf`. Holding more than its room is a bug of the routing's declared
/// bound (`AlgorithmKind::candidates`), and panics.
pub struct Candidates<'a> {
    len: &'a mut u8,
    list: &'a mut [Candidate],
}

impl<'a> Candidates<'a> {
    /// Candidates in `list`, `*len` of them already there.
    #[inline(always)]
    pub fn new(len: &'a mut u8, list: &'a mut [Candidate]) -> Self {
        Candidates { len, list }
    }
    #[inline(always)]
    pub fn clear(&mut self) {
        *self.len = 0;
    }
    #[inline(always)]
    pub fn push(&mut self, hop: Hop, priority: u8) {
        let n = *self.len as usize;
        self.list[n] = Candidate { hop, vcs: 0, priority };
        *self.len += 1;
    }
    #[inline(always)]
    pub fn len(&self) -> usize {
        *self.len as usize
    }
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        *self.len == 0
    }
    #[inline(always)]
    pub fn as_slice(&self) -> &[Candidate] {
        &self.list[..*self.len as usize]
    }
    #[inline(always)]
    pub fn as_mut_slice(&mut self) -> &mut [Candidate] {
        &mut self.list[..*self.len as usize]
    }
}

/// Candidates outside a simulation (walking routes, tests): room for any routing's.
pub struct CandidateBuf {
    len: u8,
    list: Vec<Candidate>,
}

impl Default for CandidateBuf {
    fn default() -> Self {
        CandidateBuf { len: 0, list: vec![Candidate::default(); u8::MAX as usize] }
    }
}

impl CandidateBuf {
    /// Emptied, for a routing to fill.
    pub fn out(&mut self) -> Candidates<'_> {
        self.len = 0;
        Candidates { len: &mut self.len, list: &mut self.list }
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_slice(&self) -> &[Candidate] {
        &self.list[..self.len as usize]
    }
}

impl RouteState {
    /// Count `hop`, which the packet's head has just won: switch-to-switch hops, per link
    /// class, and the datelines crossed. Every routing's `on_hop` does this (the deadlock
    /// detector and the VC policies read these fields).
    #[inline(always)]
    pub fn count_hop(&mut self, hop: &Hop) {
        if hop.eject {
            return;
        }
        self.hops += 1;
        if hop.class == 0 {
            self.local_hops = self.local_hops.saturating_add(1);
        } else {
            self.global_hops = self.global_hops.saturating_add(1);
        }
        if hop.wraps && hop.dim < 32 {
            self.wrapped |= 1 << hop.dim;
        }
    }

    /// The VCs this packet may use of the `allowed` ones its VC policy gives: all of them, or
    /// for an in-order packet only the highest (one VC per hop, so packets of a flow on one
    /// path cannot overtake each other; the highest, since under `ladder_reuse` the lowest
    /// would keep every hop in class 0).
    #[inline]
    pub fn usable_vcs(&self, allowed: u32) -> u32 {
        if !self.in_order || allowed == 0 {
            allowed
        } else {
            1 << (31 - allowed.leading_zeros())
        }
    }
}

/// How a head chooses among its candidates' free output VCs when it asks for one: the
/// routing's `Routing::selection`. Either way a VC is free when no packet owns it and it has
/// room for the head's flit; ties go to the lowest found or, with `router.jsq_tie_break =
/// "random"`, to a uniform draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Selection {
    /// The lowest `priority` that has a free VC, then the VC with the most room (join the
    /// shortest queue).
    #[default]
    Emptiest,
    /// The least weighted queue over every free VC: `(1 + priority) x queue + priority`, the
    /// queue being the phits in the VC's output buffer and, as credits say, the next input
    /// buffer. A candidate of priority 1 (a deroute) is taken only when its queue is less than
    /// about half a priority-0 one's, as SST Merlin's `VDAL` weighs them (hyperx.cc,
    /// `routeVDAL`: `2 * queue + 1` for a non-minimal port).
    Weighted,
}

impl Selection {
    /// The weight of a queue of `queue` phits behind a candidate of `priority` (`Weighted`).
    #[inline(always)]
    pub fn weight(priority: u8, queue: u64) -> u64 {
        (1 + priority as u64) * queue + priority as u64
    }
}

/// How far a switch's view of the queue behind one of its output ports reaches
/// (`routing.queue_reach`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueReach {
    /// Its output buffer plus the next switch's input buffer as its credits say.
    #[default]
    NextInput,
    /// Its output buffer alone: a backlog shows only once the next input buffer is full and
    /// the output buffer fills behind it (SST Merlin's `hr_router`, whose topologies read
    /// `output_queue_lengths` and `xbar_in_credits`, both of the router's own output buffers).
    OwnOutput,
}

impl QueueReach {
    pub const ALLOWED: &'static str = "allowed: \"next_input\" (the output buffer plus the next input buffer as credits say; the default), \"own_output\" (the switch's own output buffer only, as SST Merlin's routers)";

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "next_input" => Some(QueueReach::NextInput),
            "own_output" => Some(QueueReach::OwnOutput),
            _ => None,
        }
    }
}

/// The congestion a routing decision can read. Each switch knows its own output buffers
/// exactly and the input buffers of the next switches only through the credits it holds,
/// which come back over the link with its latency: what it sees of a far buffer is that old.
/// Reacting to congestion that has already cleared (phantom congestion) follows from this.
pub trait Congestion {
    /// Phits queued behind output `port` of `switch`, as `switch` sees them: its output
    /// buffer plus the phits the credits say are in the next switch's input buffer, over all
    /// VCs (the output buffer alone under `QueueReach::OwnOutput`). Ejection ports count their
    /// output buffer only.
    fn port_queue(&self, switch: usize, port: usize) -> u32;
    /// As `port_queue`, over only the VCs the VC policy lets a packet in `state` use for
    /// `hop`: the queue that packet would join (other VCs may hold traffic it never waits
    /// behind).
    fn hop_queue(&self, switch: usize, _state: &RouteState, hop: &Hop) -> u32 {
        self.port_queue(switch, hop.port as usize)
    }
    /// Phits in `switch`'s input buffers waiting for output `port` (or crossing to it): the
    /// part of a saturated output's backlog its own queue cannot show, since buffers bound
    /// it. No router knows this of another switch; only the idealized UGAL-G reads it.
    fn waiting_for(&self, _switch: usize, _port: usize) -> u32 {
        0
    }
    /// `port_queue` plus `waiting_for` of a switch other than the one deciding, as a global
    /// observer saw them at the end of the last cycle (router/observer.rs); only UGAL-G reads
    /// it. A view without time (tests) gives them as they are.
    fn observed_backlog(&self, switch: usize, port: usize) -> u32 {
        self.port_queue(switch, port) + self.waiting_for(switch, port)
    }
    /// Phits of room behind output `port` of `switch`, as `switch` sees it: what its output
    /// buffer has left plus the credits it holds for the next input buffer, over all VCs (the
    /// output buffer alone under `QueueReach::OwnOutput`).
    fn port_free(&self, switch: usize, port: usize) -> u32;
    /// As `port_free`, over only the VCs the VC policy lets a packet in `state` use for `hop`.
    fn hop_free(&self, switch: usize, _state: &RouteState, hop: &Hop) -> u32 {
        self.port_free(switch, hop.port as usize)
    }
}

/// An empty network: every queue is empty (for walking routes outside a simulation).
pub struct IdleNetwork;

impl Congestion for IdleNetwork {
    fn port_queue(&self, _switch: usize, _port: usize) -> u32 {
        0
    }
    /// Every buffer has the same room.
    fn port_free(&self, _switch: usize, _port: usize) -> u32 {
        1
    }
}

/// Where a route is computed: the switch, its random generator, and what it can see.
pub struct RouteCtx<'a> {
    pub switch: usize,
    pub rng: &'a mut Rng,
    pub congestion: &'a dyn Congestion,
}
