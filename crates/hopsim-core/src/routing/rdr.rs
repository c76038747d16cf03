//! Randomized dimension routing (RDR): at every hop, one of the dimensions still to be
//! corrected, drawn uniformly at random, and one step in its minimal direction (a dimension
//! exactly half-way round goes the packet's tie direction, as in DOR). Always minimal.
//!
//! Moving in dimensions in any order makes cycles of channel dependencies that dateline
//! classes alone cannot break, so RDR runs under Duato's protocol (`vc_policy = "escape"`):
//! the random hop is offered on the adaptive VCs (priority 0), and the DOR hop on the escape
//! VCs (priority 1), which form a deadlock-free DOR + dateline sub-network. A packet takes the
//! escape hop only when no adaptive VC of its random hop can take it that cycle.

use super::{dor_hop, grid_direction, grid_hop, Candidates, RouteCtx, RouteState, Routing};
use crate::topology::Topology;
use rand::Rng as _;
use std::sync::Arc;

pub struct Rdr {
    topo: Arc<dyn Topology>,
}

impl Rdr {
    pub fn new(topo: Arc<dyn Topology>) -> Option<Self> {
        topo.cartesian()?;
        Some(Rdr { topo })
    }
}

impl Routing for Rdr {
    fn name(&self) -> &'static str {
        "rdr"
    }

    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates) {
        let switch = cx.switch;
        let rng = &mut *cx.rng;
        let grid = self.topo.cartesian().expect("checked in new");
        let dst = state.dst_switch as usize;
        let unfinished = (0..grid.n()).filter(|&d| grid.coord(switch, d) != grid.coord(dst, d)).count();
        if unfinished == 0 {
            return;
        }
        let mut pick = rng.gen_range(0..unfinished);
        for dim in 0..grid.n() {
            if grid.coord(switch, dim) == grid.coord(dst, dim) {
                continue;
            }
            if pick == 0 {
                let dir = grid_direction(grid, switch, dst, dim, state.tie_dirs);
                out.push(grid_hop(grid, switch, dst, dim, dir), 0);
                break;
            }
            pick -= 1;
        }
        let mut escape = dor_hop(grid, switch, dst, state.tie_dirs).expect("a dimension is unfinished");
        escape.escape = true;
        out.push(escape, 1);
    }

    fn max_hops(&self) -> usize {
        self.topo.diameter()
    }
}

pub const KIND: super::AlgorithmKind = super::AlgorithmKind {
    name: "rdr",
    about: "randomized dimension routing: a random dimension still to correct at each hop, DOR escape VCs",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    candidates: super::few_candidates,
    queues: super::QueueView::Blind,
    build: |cx| Ok(Arc::new(Rdr::new(cx.topo.clone()).expect("cartesian"))),
};
