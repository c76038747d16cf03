//! An allocator that asks Linux for transparent huge pages on large blocks. At the sizes
//! studied, each cycle reads packets and switch state scattered over hundreds of megabytes,
//! so with 4 KiB pages many of those reads also miss the TLB; 2 MiB pages cover the same
//! memory with 512 times fewer entries. Linux distributions commonly enable THP only for
//! memory that asks for it (`madvise` mode), which is what this does. The binaries that
//! run simulations (the Python extension, the examples) install it with
//! `#[global_allocator]`; small blocks, and other systems, get the system allocator as is.
//!
//! Blocks stay where the system allocator puts them: placing each on a 2 MiB boundary of
//! its own mapping gets more of them into huge pages but can cost more CPU than it saves
//! (arrays that all start on the same boundary compete for the same cache sets;
//! docs/benchmark-log.md).

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks at least this large are advised: a smaller one cannot hold a whole huge page.
const HUGE_PAGE: usize = 2 << 20;

/// The system allocator, plus `madvise(MADV_HUGEPAGE)` on blocks of 2 MiB or more.
pub struct HugePageAlloc;

// SAFETY: every call is forwarded to `System` with the same arguments; the advice only
// changes how the kernel backs pages of a block we own, never their contents.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout)
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = System.realloc(p, layout, new_size);
        advise(q, new_size);
        q
    }
}

/// Advise the whole pages inside `[p, p + size)`. A failure (a kernel without THP) only
/// means ordinary pages, so it is ignored.
fn advise(p: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    if size >= HUGE_PAGE && !p.is_null() {
        const PAGE: usize = 4096;
        let start = (p as usize).next_multiple_of(PAGE);
        let end = (p as usize + size) & !(PAGE - 1);
        // SAFETY: the range lies inside a block just handed to us; MADV_HUGEPAGE does not
        // change its contents.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, size);
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
