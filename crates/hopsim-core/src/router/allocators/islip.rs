//! iSLIP (McKeown, "The iSLIP scheduling algorithm for input-queued switches", IEEE/ACM ToN
//! 1999), and with one iteration the separable output-first allocator. Each round, every
//! free output grants the request of a free input next in round-robin order from its grant
//! pointer; every input with grants accepts the one next in round-robin order from its
//! accept pointer. A grant accepted in the first round moves the output's pointer one past
//! the input and the input's one past the output; later rounds only fill ports left
//! unmatched, so that the pointers keep desynchronising as in the single-round case.

use super::{distance, Matching, Pointers, PortRequest, UNMATCHED};

pub(super) fn allocate(requests: &[PortRequest], iterations: usize, ports: usize, pointers: &mut impl Pointers, m: &mut Matching) {
    for round in 0..iterations {
        // Grant: each free output picks among the requests of free inputs.
        m.granted.fill(UNMATCHED);
        let mut any = false;
        for (i, &rq) in requests.iter().enumerate() {
            if !m.free(rq) {
                continue;
            }
            let o = rq.output as usize;
            any |= favour(&mut m.granted[o], i, pointers.grant(o), ports, |j| requests[j].input as usize);
        }
        if !any {
            return;
        }
        // Accept: each input picks among the grants it received (`offered`, per input).
        for (i, &rq) in requests.iter().enumerate() {
            if m.granted[rq.output as usize] != i as u32 {
                continue;
            }
            let n = rq.input as usize;
            favour(&mut m.offered[n], i, pointers.accept(n), ports, |j| requests[j].output as usize);
        }
        for i in 0..requests.len() {
            let rq = requests[i];
            if m.offered[rq.input as usize] != i as u32 {
                continue;
            }
            m.offered[rq.input as usize] = UNMATCHED;
            m.take(requests, i);
            if round == 0 {
                pointers.set_grant(rq.output as usize, (rq.input as usize + 1) % ports);
                pointers.set_accept(rq.input as usize, (rq.output as usize + 1) % ports);
            }
        }
    }
}

/// One round-robin arbiter's step: request `i` takes `slot` if it is empty or holds a request
/// further from the pointer `from` (over `n`, by `port_of` a request index). Whether it took it.
#[inline]
fn favour(slot: &mut u32, i: usize, from: usize, n: usize, port_of: impl Fn(usize) -> usize) -> bool {
    let take = *slot == UNMATCHED || distance(from, port_of(i), n) < distance(from, port_of(*slot as usize), n);
    if take {
        *slot = i as u32;
    }
    take
}
