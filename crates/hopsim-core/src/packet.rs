//! A packet: its route state, where its head may go next, and its place in the source queue.

use crate::route::{Candidate, CandidateSlots, Candidates, RouteState};

pub const NIL: u32 = u32::MAX;

/// Laid out so that what every switch on the path reads (its length, the route state, the
/// number of candidates and the first of them) shares the packet's first cache line: at
/// saturation the router step is bound by cache misses on packets, and on a network far
/// larger than the cache every arrival's reads of the packet are misses.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
#[repr(C, align(64))]
pub struct Packet {
    /// Its length: packets of one run may differ (requests and responses of `nic.protocol`).
    /// An arrival queues the flit with its phits, so this leads the first line.
    pub phits: u16,
    pub state: RouteState,
    /// Where the head may go next, computed when it arrived at its current switch.
    pub candidates: CandidateSlots,
    pub src: u32,
    pub dst: u32,
    /// Cycle the packet was generated (entered the source queue).
    pub created: u64,
    /// Cycle its first phit left the NIC.
    pub injected: u64,
    pub flits_ejected: u16,
    pub kind: PacketKind,
    /// Generated inside the measured window.
    pub measured: bool,
    /// Next packet in the NIC's source queue.
    pub next: u32,
    /// The message this packet belongs to (`NIL` for single-packet messages nobody waits
    /// for) and its place in it.
    pub message: u32,
    pub seq: u32,
    /// Sum over the links crossed (injection, switch hops, ejection) of their latency minus
    /// `link.latency`: 0 unless link classes have their own latency (zero-load formula).
    pub extra_link_latency: i32,
    /// A response: the cycle the first flit of the request it answers left the requester's
    /// NIC (the start of the request-to-response latency that NIC counts).
    pub request_injected: u64,
}

/// What a packet is to the NICs (`nic.protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum PacketKind {
    /// No protocol: a packet of a message, nobody answers it.
    #[default]
    Data,
    /// Asks the destination NIC for a response; counts against the sender's outstanding
    /// requests until that response is back.
    Request,
    Response,
}

/// A flit's index in its packet, and whether it is the packet's last (bit 15; packets are
/// at most 4096 phits), so buffers and links know a tail without reading the packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Flit(u16);

impl Flit {
    const TAIL: u16 = 1 << 15;

    /// Flit `index` of a packet of `flits` flits.
    #[inline]
    pub fn new(index: u16, flits: u16) -> Self {
        debug_assert!(index < flits && flits <= Self::TAIL);
        Flit(if index + 1 == flits { index | Self::TAIL } else { index })
    }
    #[inline]
    pub fn index(self) -> u16 {
        self.0 & !Self::TAIL
    }
    #[inline]
    pub fn is_head(self) -> bool {
        self.index() == 0
    }
    #[inline]
    pub fn is_tail(self) -> bool {
        self.0 & Self::TAIL != 0
    }
}

/// Where packets live, and their candidates when the run's routing may offer a head more
/// than a packet holds (`INLINE_CANDIDATES`): then a table beside the packets gives each
/// packet's slot a row of `wide` candidates, and the packet keeps only their count.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Arena {
    packets: crate::slab::Slab<Packet>,
    /// Candidates per packet in `table`, or 0 when packets hold their own.
    wide: usize,
    table: Vec<Candidate>,
}

impl Arena {
    /// Room for `n` packets up front (`Slab::with_capacity`), for routings offering up to
    /// `candidates` per head.
    pub fn with_capacity(n: usize, candidates: usize) -> Self {
        let wide = if candidates > crate::route::INLINE_CANDIDATES { candidates } else { 0 };
        Arena { packets: crate::slab::Slab::with_capacity(n), wide, table: Vec::with_capacity(n * wide) }
    }
    /// The arena restored from a checkpoint, with room for `n` packets as `with_capacity`
    /// gives.
    pub fn with_room(mut self, n: usize) -> Self {
        self.packets.reserve_total(n);
        self.table.reserve(n.saturating_mul(self.wide).saturating_sub(self.table.len()));
        self
    }
    /// Bytes a packet takes, its candidates included, for routings offering up to
    /// `candidates` per head.
    pub fn bytes_per_packet(candidates: usize) -> usize {
        let wide = if candidates > crate::route::INLINE_CANDIDATES { candidates } else { 0 };
        std::mem::size_of::<Packet>() + wide * std::mem::size_of::<Candidate>()
    }
    /// A new packet, which `make` writes into its slot given the candidates the slot holds
    /// (a released packet's): built apart, a packet would be copied into place, its 131 bytes
    /// of candidates zeroed first, through calls to `memcpy`. The candidates are left as they
    /// were, with their count set to 0: routing fills them at the packet's first switch, and
    /// nothing reads past the count.
    #[inline(always)]
    pub fn make(&mut self, make: impl FnOnce(CandidateSlots) -> Packet) -> u32 {
        let id = self.packets.alloc_in_place(|p| {
            *p = make(p.candidates);
            p.candidates.len = 0;
        });
        let end = (id as usize + 1) * self.wide;
        if end > self.table.len() {
            self.table.resize(end, Candidate::default());
        }
        id
    }
    #[inline(always)]
    pub fn get(&self, id: u32) -> &Packet {
        self.packets.get(id)
    }
    #[inline(always)]
    pub fn get_mut(&mut self, id: u32) -> &mut Packet {
        self.packets.get_mut(id)
    }
    pub fn release(&mut self, id: u32) {
        self.packets.release(id)
    }
    /// Packets made and not released.
    pub fn live(&self) -> usize {
        self.packets.live()
    }
    /// Where packet `id`'s head may go from its current switch.
    #[inline(always)]
    pub fn candidates(&self, id: u32) -> &[Candidate] {
        let p = self.packets.get(id);
        let n = p.candidates.len as usize;
        if self.wide == 0 {
            &p.candidates.list[..n]
        } else {
            let row = id as usize * self.wide;
            &self.table[row..row + n]
        }
    }
    /// What routing packet `id`'s head writes: its route state and its candidates.
    #[inline(always)]
    pub fn routed(&mut self, id: u32) -> Routed<'_> {
        let Packet { state, candidates: CandidateSlots { len, list }, dst, .. } = self.packets.get_mut(id);
        let list: &mut [Candidate] = if self.wide == 0 {
            list
        } else {
            let row = id as usize * self.wide;
            &mut self.table[row..row + self.wide]
        };
        Routed { state, dst, candidates: Candidates::new(len, list) }
    }
}

/// A packet as routing its head sees it (`Arena::routed`).
pub struct Routed<'a> {
    pub state: &'a mut RouteState,
    /// Its destination server, read only at the destination switch: the field shares no
    /// cache line with the route state, and reading it at every hop would load one more.
    pub dst: &'a u32,
    pub candidates: Candidates<'a>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_fields_share_the_first_cache_line() {
        let cand = std::mem::offset_of!(Packet, candidates);
        let first = cand + std::mem::offset_of!(CandidateSlots, list) + std::mem::size_of::<Candidate>();
        let phits = std::mem::offset_of!(Packet, phits);
        assert_eq!(std::mem::align_of::<Packet>(), 64);
        assert!(std::mem::size_of::<RouteState>() <= cand && first <= 64, "candidates at {cand}, second candidate at {first}");
        assert!(phits + 2 <= 64, "phits at {phits}");
    }

    /// A packet made in a released packet's slot has the fields it was given and no
    /// candidate, whatever the packet before it held; with candidates in the table beside
    /// the packets too, each packet's row its own.
    #[test]
    fn a_packet_made_in_a_released_slot_has_no_candidates() {
        use crate::route::Hop;
        for wide in [0, 20] {
            let mut arena = Arena::with_capacity(0, wide);
            let first = arena.make(|candidates| Packet { src: 1, dst: 2, candidates, ..Packet::default() });
            let other = arena.make(|candidates| Packet { src: 8, dst: 9, candidates, ..Packet::default() });
            let mut routed = arena.routed(first);
            assert_eq!(*routed.dst, 2);
            for port in 0..wide.max(8) as u16 {
                routed.candidates.push(Hop { port, ..Hop::default() }, 0);
            }
            assert_eq!(arena.candidates(first).len(), wide.max(8));
            assert!(arena.candidates(other).is_empty());
            arena.routed(other).candidates.push(Hop { port: 99, ..Hop::default() }, 0);
            assert_eq!(arena.candidates(first)[wide.max(8) - 1].hop.port, wide.max(8) as u16 - 1);
            arena.release(first);
            let second = arena.make(|candidates| Packet { src: 5, dst: 6, seq: 7, candidates, ..Packet::default() });
            assert_eq!(second, first, "the released slot is used again");
            let p = arena.get(second);
            assert_eq!((p.src, p.dst, p.seq), (5, 6, 7));
            assert!(arena.candidates(second).is_empty());
            assert_eq!(arena.candidates(other)[0].hop.port, 99);
            assert_eq!(arena.live(), 2);
        }
    }

    #[test]
    #[should_panic]
    fn a_routing_offering_more_than_its_bound_panics() {
        let mut arena = Arena::with_capacity(0, 0);
        let id = arena.make(|candidates| Packet { candidates, ..Packet::default() });
        let mut routed = arena.routed(id);
        for port in 0..9 {
            routed.candidates.push(crate::route::Hop { port, ..Default::default() }, 0);
        }
    }
}
