//! Fixed-capacity ring queues of flits stored in one shared array.

/// A flit in a buffer: its packet, its index in the packet and the first cycle it may be
/// served there (input: head arrival + pipeline delay; output: when the link may start it).
#[derive(Debug, Clone, Copy, Default)]
pub struct Entry {
    pub packet: u32,
    pub ready: u32,
    pub flit: u16,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Fifo {
    base: u32,
    head: u16,
    len: u16,
}

impl Fifo {
    pub fn new(base: u32) -> Self {
        Fifo { base, head: 0, len: 0 }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn front<'a>(&self, store: &'a [Entry]) -> Option<&'a Entry> {
        (self.len > 0).then(|| &store[(self.base + self.head as u32) as usize])
    }
    #[inline]
    pub fn push(&mut self, store: &mut [Entry], slots: u32, e: Entry) {
        assert!((self.len as u32) < slots, "buffer overflow: credits were not respected");
        let mut i = self.head as u32 + self.len as u32;
        if i >= slots {
            i -= slots;
        }
        store[(self.base + i) as usize] = e;
        self.len += 1;
    }
    #[inline]
    pub fn pop(&mut self, store: &[Entry], slots: u32) -> Entry {
        debug_assert!(self.len > 0);
        let e = store[(self.base + self.head as u32) as usize];
        let next = self.head as u32 + 1;
        self.head = if next == slots { 0 } else { next as u16 };
        self.len -= 1;
        e
    }
    pub fn iter<'a>(&self, store: &'a [Entry], slots: u32) -> impl Iterator<Item = &'a Entry> + 'a {
        let (base, head, len) = (self.base, self.head as u32, self.len as u32);
        (0..len).map(move |i| &store[(base + (head + i) % slots) as usize])
    }
}
