//! Fixed-capacity queues of flits: each keeps its front flit in its own record and the flits
//! behind it in a ring of consecutive entries of one array shared by all VCs (`Ring`).

/// Where the flits behind the front of VC `gv`, a queue of `flits` flits, sit in the array all
/// VCs share: `flits - 1` entries from `first` (the front is in the `Fifo`). The array is
/// indexed only when a queue reaches behind its front: below saturation most queues hold one
/// flit, and a slice of the ring made at every push and pop cost its range checks for nothing.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Ring {
    first: usize,
    slots: usize,
}

impl Ring {
    #[inline(always)]
    pub fn of(gv: usize, flits: u32) -> Self {
        let slots = flits as usize - 1;
        Ring { first: gv * slots, slots }
    }

    /// Entries the shared array needs for `vcs` VCs of `flits` flits.
    pub fn store_len(vcs: usize, flits: u32) -> usize {
        Ring::of(vcs, flits).first
    }

    /// Where the ring's entry `i` (below `slots`) is in the shared array.
    #[inline(always)]
    fn at(self, i: usize) -> usize {
        debug_assert!(i < self.slots);
        self.first + i
    }
}

use crate::packet::Flit;

/// A flit in an input buffer: its packet, its place in the packet, its phits (packets differ
/// in length, and a buffer's space checks must not read the packet) and the first cycle it
/// may be served there (head arrival + pipeline delay). Packed to 2-byte alignment: 14 bytes
/// instead of 16, in every buffer slot and in a VC's front copy (fields are read by value;
/// x86-64 loads them unaligned at no cost).
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
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
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
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
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
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
    /// Queue `e`; `ring` is where this queue's part of the flit array `store` is (`Ring`).
    #[inline]
    pub fn push(&mut self, store: &mut [E], ring: Ring, e: E) {
        let n = ring.slots;
        assert!((self.len as usize) <= n, "buffer overflow: credits were not respected");
        if self.len == 0 {
            self.front = e;
        } else {
            let mut i = self.head as usize + self.len as usize - 1;
            if i >= n {
                i -= n;
            }
            store[ring.at(i)] = e;
        }
        self.len += 1;
    }
    /// The queued flits, front first (`store` and `ring` as for `push`).
    pub fn iter<'a>(&'a self, store: &'a [E], ring: Ring) -> impl Iterator<Item = &'a E> + 'a {
        let (head, behind, n) = (self.head as usize, (self.len as usize).saturating_sub(1), ring.slots);
        self.front().into_iter().chain((0..behind).map(move |k| &store[ring.at((head + k) % n)]))
    }
    /// The queued flits behind the front, in order (`store` and `ring` as for `push`).
    pub fn behind<'a>(&'a self, store: &'a [E], ring: Ring) -> impl Iterator<Item = &'a E> + 'a {
        self.iter(store, ring).skip(1)
    }
    /// Put back into `store` the flits `behind` gave for this queue, where they were: the
    /// queue's `head` and `len` are as they were then.
    pub fn put_behind(&self, store: &mut [E], ring: Ring, flits: &mut impl Iterator<Item = E>) {
        let (head, n) = (self.head as usize, ring.slots);
        for k in 0..(self.len as usize).saturating_sub(1) {
            store[ring.at((head + k) % n)] = flits.next().expect("as many flits as the queues hold");
        }
    }
    /// Start loading the flit second in the queue, which the next `pop` moves to the front,
    /// if there is one: it was written into the ring when it arrived, and behind a deep queue
    /// that was long enough ago for its line to have left the cache.
    #[inline(always)]
    pub fn prefetch_second(&self, store: &[E], ring: Ring) {
        if self.len > 1 {
            crate::prefetch::line(&store[ring.at(self.head as usize)]);
        }
    }
    #[inline]
    pub fn pop(&mut self, store: &[E], ring: Ring) -> E {
        debug_assert!(self.len > 0);
        let e = self.front;
        self.len -= 1;
        if self.len > 0 {
            self.front = store[ring.at(self.head as usize)];
            let next = self.head as usize + 1;
            self.head = if next == ring.slots { 0 } else { next as u16 };
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
            let ring = Ring::of(0, cap as u32);
            let (mut q, mut model) = (Fifo::default(), VecDeque::new());
            for step in 0..2_000u32 {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                let push = model.is_empty() || (model.len() < cap && !(x >> 16).is_multiple_of(3));
                if push {
                    let e = Entry { packet: step, ready: step * 2, phits: (step % 7) as u16 + 1, ..Entry::default() };
                    q.push(&mut slots, ring, e);
                    model.push_back(e);
                } else {
                    let (got, want) = (q.pop(&slots, ring).packet, model.pop_front().unwrap().packet);
                    assert_eq!(got, want);
                }
                assert_eq!(q.len(), model.len());
                assert_eq!(q.front().map(|e| e.packet), model.front().map(|e| e.packet));
                let got: Vec<u32> = q.iter(&slots, ring).map(|e| e.packet).collect();
                let want: Vec<u32> = model.iter().map(|e| e.packet).collect();
                assert_eq!(got, want);
            }
        }
    }

    /// Queues of several VCs share one array, each in its own ring: filled and drained in turn,
    /// full to their last entry, none sees another's flits.
    #[test]
    fn queues_sharing_the_array_keep_their_own_flits() {
        let (vcs, cap) = (5usize, 4u32);
        let mut store = vec![Entry::default(); Ring::store_len(vcs, cap)];
        let mut queues = vec![Fifo::default(); vcs];
        let mut models = vec![VecDeque::new(); vcs];
        for round in 0..6u32 {
            for (gv, (q, model)) in queues.iter_mut().zip(models.iter_mut()).enumerate() {
                let ring = Ring::of(gv, cap);
                // Fill to capacity, then drain a number that changes with the round and the VC,
                // so that the rings' heads move around.
                while q.len() < cap as usize {
                    let e = Entry { packet: (round * 100 + gv as u32) * 10 + q.len() as u32, ..Entry::default() };
                    q.push(&mut store, ring, e);
                    model.push_back(e.packet);
                }
                for _ in 0..1 + (round as usize + gv) % cap as usize {
                    let got = q.pop(&store, ring).packet;
                    assert_eq!(got, model.pop_front().unwrap());
                }
            }
            for (gv, (q, model)) in queues.iter().zip(&models).enumerate() {
                let got: Vec<u32> = q.iter(&store, Ring::of(gv, cap)).map(|e| e.packet).collect();
                assert_eq!(got, model.iter().copied().collect::<Vec<_>>(), "VC {gv} after round {round}");
            }
        }
    }

    #[test]
    #[should_panic(expected = "buffer overflow")]
    fn a_full_queue_refuses_a_flit() {
        let mut slots = vec![Entry::default(); 1];
        let mut q = Fifo::default();
        for _ in 0..3 {
            q.push(&mut slots, Ring::of(0, 2), Entry::default());
        }
    }
}
