//! Round-robin walks over the set bits of a VC mask: the switch's arbiters (router/step.rs)
//! and the NICs' injection rules (nic/mod.rs) take VCs in this order.

/// The VCs of `mask` in round-robin order from `start`: `start`, `start + 1`, ... and then
/// those below `start`. Walks only the set bits, not every VC of the port.
#[derive(Clone, Copy)]
pub struct RoundRobin {
    from_start: u32,
    below_start: u32,
}

impl RoundRobin {
    #[inline(always)]
    pub fn new(mask: u32, start: usize) -> Self {
        debug_assert!(start < 32, "VC masks are 32 bits");
        let at_or_above = u32::MAX << start;
        RoundRobin { from_start: mask & at_or_above, below_start: mask & !at_or_above }
    }
}

impl Iterator for RoundRobin {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        let bits = if self.from_start != 0 { &mut self.from_start } else { &mut self.below_start };
        if *bits == 0 {
            return None;
        }
        let v = bits.trailing_zeros() as usize;
        *bits &= *bits - 1;
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::RoundRobin;

    /// The set bits in the order a round-robin pointer at `start` visits the VCs, as the
    /// loop over every VC from `start`, wrapping, that it replaces.
    #[test]
    fn round_robin_visits_the_set_bits_from_the_pointer_on() {
        assert_eq!(RoundRobin::new(0b1011_0110, 3).collect::<Vec<_>>(), [4, 5, 7, 1, 2]);
        assert_eq!(RoundRobin::new(0b1011_0110, 0).collect::<Vec<_>>(), [1, 2, 4, 5, 7]);
        assert_eq!(RoundRobin::new(0, 5).count(), 0);
        for vcs in [1, 2, 3, 6, 8, 31] {
            for mask in 0..(1u32 << vcs.min(10)) {
                for start in 0..vcs {
                    let every: Vec<usize> = (0..vcs).map(|k| (start + k) % vcs).filter(|&v| mask >> v & 1 == 1).collect();
                    assert_eq!(RoundRobin::new(mask, start).collect::<Vec<_>>(), every, "mask {mask:#b} start {start}");
                }
            }
        }
    }
}
