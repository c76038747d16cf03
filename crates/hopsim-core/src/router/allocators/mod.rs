//! The allocators that match all of a switch's requests at once: every switch allocator but
//! the default input-first, which router/step.rs runs inline on the one request each input
//! offers, and iSLIP VC allocation, whose inputs and outputs are VCs rather than ports. Each is a function of the requests and the round-robin pointers alone, so the
//! tests check it against its definition on request patterns built by hand.

mod islip;
pub mod lru;
mod wavefront;

use crate::allocation::SwitchAllocator;

/// Input port `input` of the switch asks for output port `output` (at most one request per
/// pair).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRequest {
    pub input: u16,
    pub output: u16,
}

/// The round-robin state the separable and iSLIP allocators read and move: per output, the
/// input its arbiter favours next (`grant`); per input, the output its arbiter favours next
/// (`accept`). The wavefront's priority diagonal is passed on its own.
pub trait Pointers {
    fn grant(&self, output: usize) -> usize;
    fn set_grant(&mut self, output: usize, input: usize);
    fn accept(&self, input: usize) -> usize;
    fn set_accept(&mut self, input: usize, output: usize);
}

pub const UNMATCHED: u32 = u32::MAX;

/// The allocators' working arrays, reused from one allocation to the next.
#[derive(Default)]
pub struct Matching {
    /// Per input port: the index of the request it was matched by, or `UNMATCHED`.
    by_input: Vec<u32>,
    /// Per output port: whether it is matched.
    output_taken: Vec<bool>,
    /// Per output port, during a round: the request its arbiter grants, or `UNMATCHED`.
    granted: Vec<u32>,
    /// Per input port, during a round: the grant its arbiter accepts, or `UNMATCHED`.
    offered: Vec<u32>,
    /// Request indices in the order the wavefront visits them.
    order: Vec<u32>,
}

impl Matching {
    fn reset(&mut self, ports: usize) {
        for v in [&mut self.by_input, &mut self.granted, &mut self.offered] {
            v.clear();
            v.resize(ports, UNMATCHED);
        }
        self.output_taken.clear();
        self.output_taken.resize(ports, false);
    }

    fn matched(&self, requests: &[PortRequest], i: usize) -> bool {
        self.by_input[requests[i].input as usize] == i as u32
    }

    fn take(&mut self, requests: &[PortRequest], i: usize) {
        let rq = requests[i];
        self.by_input[rq.input as usize] = i as u32;
        self.output_taken[rq.output as usize] = true;
    }

    fn free(&self, rq: PortRequest) -> bool {
        self.by_input[rq.input as usize] == UNMATCHED && !self.output_taken[rq.output as usize]
    }

    /// Whether request `i` won its input and output.
    #[inline]
    pub fn won(&self, requests: &[PortRequest], i: usize) -> bool {
        self.matched(requests, i)
    }
}

/// Matches `requests` of a switch of `ports` ports with `allocator` (not `InputFirst`),
/// moving `pointers` and the wavefront's `diagonal` as its definition says; `matching.won`
/// then tells the winners.
pub fn allocate(allocator: SwitchAllocator, requests: &[PortRequest], ports: usize, pointers: &mut impl Pointers, diagonal: &mut u16, matching: &mut Matching) {
    matching.reset(ports);
    match allocator {
        SwitchAllocator::OutputFirst => islip::allocate(requests, 1, ports, pointers, matching),
        SwitchAllocator::Islip { iterations } => islip::allocate(requests, iterations as usize, ports, pointers, matching),
        SwitchAllocator::Wavefront => wavefront::allocate(requests, ports, diagonal, matching),
        SwitchAllocator::InputFirst | SwitchAllocator::Lru => unreachable!("input-first and LRU allocation run in router/step.rs"),
    }
}

/// Matches `requests` among `n` inputs and `n` outputs by `iterations` rounds of iSLIP (VC
/// allocation's inputs and outputs are a switch's VCs).
pub fn islip(requests: &[PortRequest], iterations: usize, n: usize, pointers: &mut impl Pointers, matching: &mut Matching) {
    matching.reset(n);
    islip::allocate(requests, iterations, n, pointers, matching);
}

/// `i` steps after `from` in round-robin order over `n`: the arbiters favour the smallest.
#[inline]
fn distance(from: usize, i: usize, n: usize) -> usize {
    (i + n - from % n) % n
}

#[cfg(test)]
mod tests;
