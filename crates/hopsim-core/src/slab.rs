//! Index-addressed storage with a free list: packets and messages live here and are referred
//! to by `u32`, so nothing is allocated per phit and slots are reused.

#[derive(serde::Serialize, serde::Deserialize)]
pub struct Slab<T> {
    slots: Vec<T>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { slots: Vec::new(), free: Vec::new(), live: 0 }
    }
}

impl<T> Slab<T> {
    /// Room for `n` items reserved up front: growing by doubling copies the items (the
    /// packet arena is cache-line aligned, so the allocator cannot remap it), and at that
    /// moment both blocks are held. Untouched reserved pages cost no memory.
    pub fn with_capacity(n: usize) -> Self {
        Slab { slots: Vec::with_capacity(n), free: Vec::new(), live: 0 }
    }
    /// Room for `n` items in all, as `with_capacity` reserves it.
    pub fn reserve_total(&mut self, n: usize) {
        self.slots.reserve(n.saturating_sub(self.slots.len()));
    }
    #[inline]
    pub fn alloc(&mut self, item: T) -> u32 {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = item;
            i
        } else {
            self.slots.push(item);
            (self.slots.len() - 1) as u32
        }
    }
    /// An item made in its slot by `init`, from the released item there or, in a new slot,
    /// from `T::default()`: a large item then need not be built apart and copied into place.
    #[inline(always)]
    pub fn alloc_in_place(&mut self, init: impl FnOnce(&mut T)) -> u32
    where
        T: Default,
    {
        self.live += 1;
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(T::default());
                (self.slots.len() - 1) as u32
            }
        };
        init(&mut self.slots[i as usize]);
        i
    }
    pub fn release(&mut self, id: u32) {
        self.live -= 1;
        self.free.push(id);
    }
    /// Items allocated and not released.
    pub fn live(&self) -> usize {
        self.live
    }
    #[inline]
    pub fn get(&self, id: u32) -> &T {
        &self.slots[id as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut T {
        &mut self.slots[id as usize]
    }
}
