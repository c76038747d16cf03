//! Every `unsafe` of the crate, each behind a safe function or type. The rest of the crate
//! is compiled with `unsafe_code` denied (lib.rs), so a new `unsafe` has to come here and
//! say which of the invariants below makes it sound; the callers stay in safe code, and the
//! invariants are kept by the code that uses these types, which the sections name.
//!
//! 1. **One owner per switch in a cycle** (`SharedMut`, `Shared`). A run on several threads
//!    (engine/parallel.rs) lends the one `Simulation` to all of them at once. During a cycle
//!    each thread reaches only the state of the switches it owns (their ports, VCs, buffers
//!    and random streams) and the packets those switches hold or receive; all else it
//!    reads is left unchanged until the cycle's barrier. The run's thread reaches what no
//!    switch owns (NICs, servers, statistics, the workload, packets no switch holds, and the
//!    calendar's events' and switches' wheels only until its own switches are stepped), and
//!    the thread `MERGER` (engine/parallel.rs) merges those two wheels after that. The
//!    arena of packets does not grow while others read it (`Simulation::packet_room`). So the `&mut` each thread makes from the handle
//!    reaches memory no other thread writes meanwhile. One thread alone (the block walk,
//!    engine/blocks.rs) uses a handle only to lend the calendar, scratch and counters apart
//!    from the rest, which its deliveries and steps reach only through that loan. A handle
//!    never outlives the call that made it from a reference (a cycle).
//! 2. **Turns at the gate** (`TurnCell`). The team's job is written only by the run's thread
//!    while the others wait at the gate; the list of switches to step only by the run's
//!    thread before it publishes it (release) and after the gate that ends the cycle; lane
//!    `t` is touched only by thread `t` during a cycle and by the run's thread between
//!    cycles. The gate's and the published counter's atomics order those accesses, so no
//!    two threads reach a cell's value at the same time unless both only read it.
//! 3. **Hints change nothing** (`prefetch_t0`, `prefetch_t1`, `advise_huge_pages`). A
//!    prefetch reads nothing and cannot fault, at any address; `MADV_HUGEPAGE` changes how
//!    the kernel backs pages, never their contents, and its failure leaves them as they are.
//! 4. **The allocator forwards** (`HugePageAlloc`). Every call goes to the system allocator
//!    with the arguments it was given, so the allocator's contract is the system's; it only
//!    adds the advice of 3 on the blocks it returns.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;

/// A `&mut T` lent to the threads of one run at once, each reaching its own part of it
/// (invariant 1); `get` gives the reference back.
pub struct SharedMut<T: ?Sized>(*mut T);

impl<T: ?Sized> Clone for SharedMut<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for SharedMut<T> {}

// Invariant 1: the threads a handle reaches reach disjoint parts of `T` meanwhile.
unsafe impl<T: ?Sized> Send for SharedMut<T> {}
unsafe impl<T: ?Sized> Sync for SharedMut<T> {}

impl<T: ?Sized> SharedMut<T> {
    #[inline(always)]
    pub fn new(t: &mut T) -> Self {
        SharedMut(t)
    }

    /// The value lent, for the part of it the calling thread owns (invariant 1).
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub fn get<'a>(self) -> &'a mut T {
        // SAFETY: invariant 1: the value outlives the handle, and no other thread writes
        // what the caller reaches through this reference while it holds it.
        unsafe { &mut *self.0 }
    }

    /// The value lent, for parts of it no thread writes meanwhile (invariant 1).
    #[inline(always)]
    pub fn get_ref<'a>(self) -> &'a T {
        // SAFETY: invariant 1: the value outlives the handle, and no thread writes what the
        // caller reads through this reference while it holds it.
        unsafe { &*self.0 }
    }
}

impl<T> SharedMut<T> {
    /// A handle to nothing, for a job no thread runs (`get` must not be called).
    pub fn none() -> Self {
        SharedMut(std::ptr::null_mut())
    }
}

/// A `&T` lent to the threads of one run for a cycle, unchanged until the cycle ends
/// (invariants 1 and 2); `get` gives the reference back.
pub struct Shared<T: ?Sized>(*const T);

impl<T: ?Sized> Clone for Shared<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for Shared<T> {}

// Invariants 1 and 2: what a handle reaches is only read while others hold the handle.
unsafe impl<T: ?Sized> Send for Shared<T> {}
unsafe impl<T: ?Sized> Sync for Shared<T> {}

impl<T: ?Sized> Shared<T> {
    #[inline(always)]
    pub fn new(t: &T) -> Self {
        Shared(t)
    }

    #[inline(always)]
    pub fn get<'a>(self) -> &'a T {
        // SAFETY: invariants 1 and 2: the value outlives the handle (it is lent for a
        // cycle, and the handle is not used after it) and does not change meanwhile.
        unsafe { &*self.0 }
    }
}

/// A value the threads of a run take turns at, ordered by the team's gate (invariant 2).
pub struct TurnCell<T>(UnsafeCell<T>);

// Invariant 2: the gate orders every access, so a value moves between threads, never shared
// while one writes it.
unsafe impl<T: Send> Sync for TurnCell<T> {}

impl<T> TurnCell<T> {
    pub fn new(t: T) -> Self {
        TurnCell(UnsafeCell::new(t))
    }

    /// The value, on a turn in which no thread writes it (invariant 2).
    #[inline(always)]
    pub fn get(&self) -> &T {
        // SAFETY: invariant 2: no thread writes the value during the caller's turn.
        unsafe { &*self.0.get() }
    }

    /// The value, on the calling thread's turn (invariant 2).
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub fn get_mut(&self) -> &mut T {
        // SAFETY: invariant 2: no other thread reaches the value during the caller's turn.
        unsafe { &mut *self.0.get() }
    }
}

/// Ask for the cache line at `addr` into every level of the cache (invariant 3).
#[inline(always)]
pub fn prefetch_t0(addr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: invariant 3.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(addr as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// Ask for the cache line at `addr` into the L2 cache (invariant 3).
#[inline(always)]
pub fn prefetch_t1(addr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: invariant 3.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(addr as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// Blocks at least this large are advised: a smaller one cannot hold a whole huge page.
const HUGE_PAGE: usize = 2 << 20;

/// `madvise(MADV_HUGEPAGE)` on the whole pages inside `[p, p + size)`, a block just handed
/// out (invariant 3). A failure (a kernel without THP) only means ordinary pages, so it is
/// ignored.
#[inline]
fn advise_huge_pages(p: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    if size >= HUGE_PAGE && !p.is_null() {
        const PAGE: usize = 4096;
        let start = (p as usize).next_multiple_of(PAGE);
        let end = (p as usize + size) & !(PAGE - 1);
        // SAFETY: invariant 3.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, size);
}

/// The system allocator, plus `madvise(MADV_HUGEPAGE)` on blocks of 2 MiB or more
/// (huge_pages.rs says why; invariant 4).
pub struct HugePageAlloc;

// SAFETY: invariant 4.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        advise_huge_pages(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        advise_huge_pages(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout)
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = System.realloc(p, layout, new_size);
        advise_huge_pages(q, new_size);
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocate `size` bytes, fill, grow to twice, shrink to half: contents kept.
    #[test]
    fn blocks_keep_their_contents_across_realloc() {
        let a = HugePageAlloc;
        let check = |p: *mut u8, len: usize| (0..len).step_by(4093).all(|i| unsafe { *p.add(i) } == (i % 251) as u8);
        for size in [64, HUGE_PAGE - 1, HUGE_PAGE, 3 * HUGE_PAGE + 123] {
            let layout = Layout::from_size_align(size, 64).unwrap();
            // SAFETY: non-zero layouts; each block is used within its size and passed on
            // (realloc, dealloc) once, with the layout it has then.
            unsafe {
                let p = a.alloc_zeroed(layout);
                assert!(!p.is_null() && (0..size).step_by(4093).all(|i| *p.add(i) == 0));
                assert_eq!(p as usize % 64, 0);
                for i in (0..size).step_by(4093) {
                    *p.add(i) = (i % 251) as u8;
                }
                let grown = a.realloc(p, layout, 2 * size);
                assert_eq!(grown as usize % 64, 0);
                assert!(check(grown, size));
                let half = size / 2 + 1;
                let shrunk = a.realloc(grown, Layout::from_size_align(2 * size, 64).unwrap(), half);
                assert!(check(shrunk, half));
                a.dealloc(shrunk, Layout::from_size_align(half, 64).unwrap());
            }
        }
    }
}
