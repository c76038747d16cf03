//! Minimal adaptive routing: every productive port (the minimal direction of every dimension
//! still to be corrected) is a candidate on the adaptive VCs with priority 0, so the allocator
//! takes the least occupied one (free output space plus downstream credits). The DOR hop is
//! also offered on the escape VCs with priority 1: under Duato's protocol
//! (`vc_policy = "escape"`) the escape sub-network, DOR with a dateline, is deadlock-free, so
//! the whole routing is.

use super::{dor_hop, grid_direction, grid_hop, Candidates, RouteCtx, RouteState, Routing};
use crate::topology::Topology;
use std::sync::Arc;

pub struct MinAdaptive {
    topo: Arc<dyn Topology>,
}

impl MinAdaptive {
    pub fn new(topo: Arc<dyn Topology>) -> Option<Self> {
        topo.cartesian()?;
        Some(MinAdaptive { topo })
    }
}

impl Routing for MinAdaptive {
    fn name(&self) -> &'static str {
        "min_adaptive"
    }

    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates) {
        let switch = cx.switch;
        let grid = self.topo.cartesian().expect("checked in new");
        let dst = state.dst_switch as usize;
        for dim in 0..grid.n() {
            if grid.coord(switch, dim) != grid.coord(dst, dim) {
                let dir = grid_direction(grid, switch, dst, dim, state.tie_dirs);
                out.push(grid_hop(grid, switch, dst, dim, dir), 0);
            }
        }
        if let Some(mut escape) = dor_hop(grid, switch, dst, state.tie_dirs) {
            escape.escape = true;
            out.push(escape, 1);
        }
    }

    fn max_hops(&self) -> usize {
        self.topo.diameter()
    }
}

pub const KIND: super::AlgorithmKind = super::AlgorithmKind {
    name: "min_adaptive",
    about: "minimal adaptive on tori and meshes: any productive port, DOR escape VCs",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    // One adaptive candidate per dimension, and the escape hop.
    candidates: |_, topo| topo.cartesian().map_or(0, |g| g.n()) + 1,
    queues: super::QueueView::Blind,
    build: |cx| {
        Ok(Arc::new(MinAdaptive::new(cx.topo.clone()).expect("check_defined: the table lists min_adaptive on tori and meshes only")))
    },
};
