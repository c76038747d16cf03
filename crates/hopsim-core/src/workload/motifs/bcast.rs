//! Broadcast down a binomial tree (as MPICH's): numbered from the root, a rank receives from
//! the rank that differs in its lowest set bit, then sends to rank + 2^k for each 2^k below
//! that bit, largest first.

use super::{Motif, Op};

pub struct Binomial {
    pub n: usize,
    pub root: usize,
    pub bytes: u64,
    pub compute: u64,
}

impl Motif for Binomial {
    fn iteration(&self, rank: usize, ops: &mut Vec<Op>) {
        let n = self.n;
        let me = (rank + n - self.root) % n;
        let real = |r: usize| ((r + self.root) % n) as u32;
        let mut mask = 1;
        while mask < n {
            if me & mask != 0 {
                ops.push(Op::Recv { from: real(me - mask) });
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if me + mask < n {
                ops.push(Op::Send { to: real(me + mask), bytes: self.bytes });
            }
            mask >>= 1;
        }
        ops.push(Op::Compute(self.compute));
    }
}
