//! An allocator that asks Linux for transparent huge pages on large blocks. At the sizes
//! studied, each cycle reads packets and switch state scattered over hundreds of megabytes,
//! so with 4 KiB pages most of those reads also miss the TLB; 2 MiB pages cover the same
//! memory with 512 times fewer entries. Linux distributions commonly enable THP only for
//! memory that asks for it (`madvise` mode), which is what this does. The binaries that
//! run simulations (the Python extension, the examples) install it with
//! `#[global_allocator]`; small blocks, and other systems, get the system allocator as is.
//!
//! A huge page maps a 2 MiB-aligned range of fresh memory, so a large block is placed on
//! that alignment in a mapping of its own (glibc's mmap threshold is fixed at 2 MiB before
//! the first one; otherwise it would reuse arena pages already touched as small pages),
//! and grows by a new block and a copy: `mremap` would move it off the alignment and split
//! its huge pages.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// Blocks at least this large are advised: a smaller one cannot hold a whole huge page.
const HUGE_PAGE: usize = 2 << 20;

/// The system allocator, with blocks of 2 MiB or more 2 MiB-aligned and advised.
pub struct HugePageAlloc;

/// The layout a block of `layout.size()` bytes is really given (and freed with).
fn placed(layout: Layout) -> Layout {
    if layout.size() < HUGE_PAGE {
        return layout;
    }
    fix_mmap_threshold();
    // A power of two at least as large as the requested one: a valid alignment.
    Layout::from_size_align(layout.size(), layout.align().max(HUGE_PAGE)).unwrap_or(layout)
}

// SAFETY: every block comes from `System` with the layout `placed` gives, and is freed
// with that same layout (it depends only on the size and alignment the caller passes to
// both); the advice only changes how the kernel backs pages we own, never their contents.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let placed = placed(layout);
        let p = System.alloc(placed);
        advise(p, placed.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let placed = placed(layout);
        let p = System.alloc_zeroed(placed);
        advise(p, placed.size());
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, placed(layout))
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        if layout.size() < HUGE_PAGE && new_size < HUGE_PAGE {
            return System.realloc(p, layout, new_size);
        }
        let q = self.alloc(new_layout);
        if !q.is_null() {
            std::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
            self.dealloc(p, layout);
        }
        q
    }
}

/// Before the first large block: blocks of 2 MiB or more get a mapping of their own.
fn fix_mmap_threshold() {
    static DONE: AtomicBool = AtomicBool::new(false);
    if DONE.swap(true, Ordering::Relaxed) {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a glibc tunable; we are not inside malloc here.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, HUGE_PAGE as libc::c_int)
    };
}

/// Advise the block `[p, p + size)`. A failure (a kernel without THP) only means
/// ordinary pages, so it is ignored.
fn advise(p: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    if size >= HUGE_PAGE && !p.is_null() {
        // SAFETY: a block just handed to us, page-aligned (2 MiB-aligned, see `placed`);
        // MADV_HUGEPAGE does not change its contents.
        unsafe { libc::madvise(p as *mut libc::c_void, size, libc::MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, size);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocate `size` bytes, fill, grow to twice, shrink to half: contents kept, large
    /// blocks 2 MiB-aligned.
    #[test]
    fn blocks_are_aligned_and_keep_their_contents_across_realloc() {
        let a = HugePageAlloc;
        let check = |p: *mut u8, len: usize| (0..len).step_by(4093).all(|i| unsafe { *p.add(i) } == (i % 251) as u8);
        for size in [64, HUGE_PAGE - 1, HUGE_PAGE, 3 * HUGE_PAGE + 123] {
            let layout = Layout::from_size_align(size, 64).unwrap();
            // SAFETY: non-zero layouts; each block is used within its size and passed on
            // (realloc, dealloc) once, with the layout it has then.
            unsafe {
                let p = a.alloc_zeroed(layout);
                assert!(!p.is_null() && (0..size).step_by(4093).all(|i| *p.add(i) == 0));
                assert_eq!(p as usize % if size >= HUGE_PAGE { HUGE_PAGE } else { 64 }, 0);
                for i in (0..size).step_by(4093) {
                    *p.add(i) = (i % 251) as u8;
                }
                let grown = a.realloc(p, layout, 2 * size);
                assert_eq!(grown as usize % if 2 * size >= HUGE_PAGE { HUGE_PAGE } else { 64 }, 0);
                assert!(check(grown, size));
                let half = size / 2 + 1;
                let shrunk = a.realloc(grown, Layout::from_size_align(2 * size, 64).unwrap(), half);
                assert!(check(shrunk, half));
                a.dealloc(shrunk, Layout::from_size_align(half, 64).unwrap());
            }
        }
    }
}
