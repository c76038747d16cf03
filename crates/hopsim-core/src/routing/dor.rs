//! Dimension-order routing: correct dimension 0 first, then 1, ...; minimal in each ring.

use super::{grid_direction, grid_hop, Candidates, RouteState, Routing, Rng};
use crate::topology::Topology;
use std::sync::Arc;

pub struct Dor {
    topo: Arc<dyn Topology>,
}

impl Dor {
    pub fn new(topo: Arc<dyn Topology>) -> Option<Self> {
        topo.cartesian()?;
        Some(Dor { topo })
    }
}

impl Routing for Dor {
    fn name(&self) -> &'static str {
        "dor"
    }

    fn route(&self, switch: usize, state: &mut RouteState, _rng: &mut Rng, out: &mut Candidates) {
        let grid = self.topo.cartesian().expect("checked in new");
        let dst = state.dst_switch as usize;
        for dim in 0..grid.n() {
            if grid.coord(switch, dim) != grid.coord(dst, dim) {
                let dir = grid_direction(grid, switch, dst, dim, state.tie_dirs);
                out.push(grid_hop(grid, switch, dst, dim, dir), 0);
                return;
            }
        }
    }
}
