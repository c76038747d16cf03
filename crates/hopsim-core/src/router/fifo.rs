//! Fixed-capacity queues of flits: each keeps its front flit in its own record and the flits
//! behind it in a ring of consecutive entries of one array shared by all VCs (`vc_slots`).

/// Where the flits behind the front of VC `gv`, a queue of `flits` flits, sit in the shared
/// flit array: `flits - 1` entries (the front is in the `Fifo`).
#[inline(always)]
pub fn vc_slots(gv: usize, flits: u32) -> std::ops::Range<usize> {
    let n = flits as usize - 1;
    gv * n..(gv + 1) * n
}

use crate::packet::Flit;

/// A flit in an input buffer: its packet, its place in the packet, its phits (packets differ
/// in length, and a buffer's space checks must not read the packet) and the first cycle it
/// may be served there (head arrival + pipeline delay). Packed to 2-byte alignment: 14 bytes
/// instead of 16, in every buffer slot and in a VC's front copy (fields are read by value;
/// x86-64 loads them unaligned at no cost).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, packed(2))]
pub struct Entry {
    pub packet: u32,
    pub ready: u32,
    pub flit: Flit,
    pub phits: u16,
    /// Cycles the flit's tail arrives later than at one phit per cycle (its link was a slower
    /// class); 0 on the fastest links.
    pub tail: u16,
}

/// A flit in an output buffer: an input entry without the tail's lateness, which the crossbar
/// has taken into account (`ready` is then the first cycle the link may start it). 12 bytes,
/// in every output slot and in a VC's front copy.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, packed(2))]
pub struct OutEntry {
    pub packet: u32,
    pub ready: u32,
    pub flit: Flit,
    pub phits: u16,
}

/// The queue keeps its front flit in its own record: the allocators and the link read the
/// front of every busy VC every cycle while it waits, and the record sits in the VC's own
/// cache line (which the engine loads ahead of the switch's step) instead of in the flit
/// array. The array holds only the flits behind it, one entry fewer per VC than the queue's
/// capacity (a VC of a one-packet buffer under VCT needs none).
/// `E`: `Entry` in input buffers, `OutEntry` in output buffers.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fifo<E = Entry> {
    /// Where the second flit sits in the ring behind the front.
    head: u16,
    len: u16,
    front: E,
}

impl<E: Copy> Fifo<E> {
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn front(&self) -> Option<&E> {
        (self.len > 0).then_some(&self.front)
    }
    /// Queue `e`; `slots` is this queue's part of the flit array (its capacity less one).
    #[inline]
    pub fn push(&mut self, slots: &mut [E], e: E) {
        let n = slots.len();
        assert!((self.len as usize) <= n, "buffer overflow: credits were not respected");
        if self.len == 0 {
            self.front = e;
        } else {
            let mut i = self.head as usize + self.len as usize - 1;
            if i >= n {
                i -= n;
            }
            slots[i] = e;
        }
        self.len += 1;
    }
    /// The queued flits, front first (`slots`: this queue's part of the flit array).
    pub fn iter<'a>(&'a self, slots: &'a [E]) -> impl Iterator<Item = &'a E> + 'a {
        let (head, behind, n) = (self.head as usize, (self.len as usize).saturating_sub(1), slots.len());
        self.front().into_iter().chain((0..behind).map(move |k| &slots[(head + k) % n]))
    }
    #[inline]
    pub fn pop(&mut self, slots: &[E]) -> E {
        debug_assert!(self.len > 0);
        let e = self.front;
        self.len -= 1;
        if self.len > 0 {
            self.front = slots[self.head as usize];
            let next = self.head as usize + 1;
            self.head = if next == slots.len() { 0 } else { next as u16 };
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Pushes and pops in a pseudo-random order keep first-in first-out order, the front and
    /// the length, for every capacity from one flit (no ring behind the front) to five.
    #[test]
    fn queue_matches_a_deque() {
        let mut x: u32 = 12345;
        for cap in 1..=5usize {
            let mut slots = vec![Entry::default(); cap - 1];
            let (mut q, mut model) = (Fifo::default(), VecDeque::new());
            for step in 0..2_000u32 {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                let push = model.is_empty() || (model.len() < cap && !(x >> 16).is_multiple_of(3));
                if push {
                    let e = Entry { packet: step, ready: step * 2, phits: (step % 7) as u16 + 1, ..Entry::default() };
                    q.push(&mut slots, e);
                    model.push_back(e);
                } else {
                    let (got, want) = (q.pop(&slots).packet, model.pop_front().unwrap().packet);
                    assert_eq!(got, want);
                }
                assert_eq!(q.len(), model.len());
                assert_eq!(q.front().map(|e| e.packet), model.front().map(|e| e.packet));
                let got: Vec<u32> = q.iter(&slots).map(|e| e.packet).collect();
                let want: Vec<u32> = model.iter().map(|e| e.packet).collect();
                assert_eq!(got, want);
            }
        }
    }

    #[test]
    #[should_panic(expected = "buffer overflow")]
    fn a_full_queue_refuses_a_flit() {
        let mut slots = vec![Entry::default(); 1];
        let mut q = Fifo::default();
        for _ in 0..3 {
            q.push(&mut slots, Entry::default());
        }
    }
}
