//! A packet: its route state, where its head may go next, and its place in the source queue.

use crate::routing::{Candidates, RouteState};

pub const NIL: u32 = u32::MAX;

/// Laid out so that what every switch on the path reads (its length, the route state, the
/// number of candidates and the first of them) shares the packet's first cache line: at
/// saturation the router step is bound by cache misses on packets, and on a network far
/// larger than the cache every arrival's reads of the packet are misses.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
pub struct Packet {
    /// Its length: packets of one run may differ (requests and responses of `nic.protocol`).
    /// An arrival queues the flit with its phits, so this leads the first line.
    pub phits: u16,
    pub state: RouteState,
    /// Where the head may go next, computed when it arrived at its current switch.
    pub candidates: Candidates,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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

/// Where packets live.
pub type Arena = crate::slab::Slab<Packet>;

impl Arena {
    /// A new packet, which `make` writes into its slot given the candidates the slot holds
    /// (a released packet's): built apart, a packet would be copied into place, its 131 bytes
    /// of candidates zeroed first, through calls to `memcpy`. The candidates are left as they
    /// were, with their count set to 0: routing fills them at the packet's first switch, and
    /// nothing reads past the count.
    #[inline(always)]
    pub fn make(&mut self, make: impl FnOnce(Candidates) -> Packet) -> u32 {
        self.alloc_in_place(|p| {
            *p = make(p.candidates);
            p.candidates.clear();
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_fields_share_the_first_cache_line() {
        let p = std::mem::MaybeUninit::<Packet>::uninit();
        let base = p.as_ptr() as usize;
        // SAFETY: only field addresses are taken, nothing is read.
        let (cand, first, phits) = unsafe {
            let c = std::ptr::addr_of!((*p.as_ptr()).candidates);
            (c as usize - base, std::ptr::addr_of!((*c).list[1]) as usize - base, std::ptr::addr_of!((*p.as_ptr()).phits) as usize - base)
        };
        assert_eq!(std::mem::align_of::<Packet>(), 64);
        assert!(std::mem::size_of::<RouteState>() <= cand && first <= 64, "candidates at {cand}, second candidate at {first}");
        assert!(phits + 2 <= 64, "phits at {phits}");
    }

    /// A packet made in a released packet's slot has the fields it was given and no
    /// candidate, whatever the packet before it held.
    #[test]
    fn a_packet_made_in_a_released_slot_has_no_candidates() {
        use crate::route::Hop;
        let mut arena = Arena::default();
        let first = arena.make(|candidates| Packet { src: 1, dst: 2, candidates, ..Packet::default() });
        let p = arena.get_mut(first);
        p.candidates.push(Hop { port: 3, ..Hop::default() }, 0);
        p.candidates.push(Hop { port: 4, ..Hop::default() }, 1);
        arena.release(first);
        let second = arena.make(|candidates| Packet { src: 5, dst: 6, seq: 7, candidates, ..Packet::default() });
        assert_eq!(second, first, "the released slot is used again");
        let p = arena.get(second);
        assert_eq!((p.src, p.dst, p.seq), (5, 6, 7));
        assert!(p.candidates.as_slice().is_empty());
        assert_eq!(arena.live(), 1);
    }
}
