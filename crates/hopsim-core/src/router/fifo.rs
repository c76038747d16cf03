//! Fixed-capacity ring queues of flits stored in one shared array, each VC owning `slots`
//! consecutive entries of it (`vc_slots`).

/// Where VC `gv`'s `slots` entries sit in the shared flit array.
#[inline(always)]
pub fn vc_slots(gv: usize, slots: u32) -> std::ops::Range<usize> {
    let n = slots as usize;
    gv * n..(gv + 1) * n
}

use crate::packet::Flit;

/// A flit in a buffer: its packet, its place in the packet, its phits (packets differ in
/// length, and a buffer's space checks must not read the packet) and the first cycle it may
/// be served there (input: head arrival + pipeline delay; output: when the link may start it).
#[derive(Debug, Clone, Copy, Default)]
pub struct Entry {
    pub packet: u32,
    pub ready: u32,
    pub flit: Flit,
    pub phits: u16,
    /// Input buffers: cycles the flit's tail arrives later than at one phit per cycle (its
    /// link was a slower class); 0 on the fastest links.
    pub tail: u16,
}

/// The queue keeps a copy of its front flit: the allocators and the link read the front of
/// every busy VC every cycle while it waits, and the copy sits in the VC's own cache line
/// (which the engine loads ahead of the switch's step) instead of in the flit array.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fifo {
    head: u16,
    len: u16,
    front: Entry,
}

impl Fifo {
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn front(&self) -> Option<&Entry> {
        (self.len > 0).then_some(&self.front)
    }
    /// Queue `e`; `slots` is this queue's part of the flit array.
    #[inline]
    pub fn push(&mut self, slots: &mut [Entry], e: Entry) {
        let n = slots.len();
        assert!((self.len as usize) < n, "buffer overflow: credits were not respected");
        let mut i = self.head as usize + self.len as usize;
        if i >= n {
            i -= n;
        }
        slots[i] = e;
        if self.len == 0 {
            self.front = e;
        }
        self.len += 1;
    }
    /// The queued flits, front first (`slots`: this queue's part of the flit array).
    pub fn iter<'a>(&self, slots: &'a [Entry]) -> impl Iterator<Item = &'a Entry> + 'a {
        let (head, len, n) = (self.head as usize, self.len as usize, slots.len());
        (0..len).map(move |k| &slots[(head + k) % n])
    }
    #[inline]
    pub fn pop(&mut self, slots: &[Entry]) -> Entry {
        debug_assert!(self.len > 0);
        let e = self.front;
        let next = self.head as usize + 1;
        self.head = if next == slots.len() { 0 } else { next as u16 };
        self.len -= 1;
        if self.len > 0 {
            self.front = slots[self.head as usize];
        }
        e
    }
}
