//! The wavefront allocator (Tamir and Chi, "Symmetric crossbar arbiters for VLSI
//! communication switches", IEEE TPDS 1993). Request (input i, output o) lies on diagonal
//! (i + o) mod n of the n-by-n request matrix. The diagonals are served in turn from the
//! priority diagonal: every request on one whose input and output are both still free is
//! granted (no two requests of a diagonal share an input or an output, so their order within
//! it does not matter). The priority diagonal moves one step each allocation that has
//! requests.

use super::{Matching, PortRequest};

pub(super) fn allocate(requests: &[PortRequest], ports: usize, diagonal: &mut u16, m: &mut Matching) {
    if requests.is_empty() {
        return;
    }
    let first = *diagonal as usize;
    let rank = |rq: PortRequest| (rq.input as usize + rq.output as usize + ports - first) % ports;
    m.order.clear();
    m.order.extend(0..requests.len() as u32);
    m.order.sort_unstable_by_key(|&i| rank(requests[i as usize]));
    for k in 0..m.order.len() {
        let i = m.order[k] as usize;
        if m.free(requests[i]) {
            m.take(requests, i);
        }
    }
    *diagonal = ((first + 1) % ports) as u16;
}
