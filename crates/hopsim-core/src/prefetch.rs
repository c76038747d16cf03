//! Cache prefetch hints. At the sizes studied the switches' state is far larger than the
//! core's L2 cache and every cycle sweeps all of it, so each switch step would start with
//! its buffers in L3 or memory; asking for the lines ahead of use overlaps those misses.

/// Ask for the cache line holding `x` (a hint: it reads nothing and cannot fault).
#[inline(always)]
pub fn line<T>(x: &T) {
    crate::unsafe_parts::prefetch_t0(x as *const T as *const u8);
}

/// Ask for every cache line of `xs` into the L2 cache.
#[inline]
pub fn slice<T>(xs: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        // Every line `xs` touches, the last one included when `xs` does not start on a line.
        let start = xs.as_ptr() as usize;
        let end = start + std::mem::size_of_val(xs);
        let mut line = start & !63;
        while line < end {
            crate::unsafe_parts::prefetch_t1(line as *const u8);
            line += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = xs;
}
