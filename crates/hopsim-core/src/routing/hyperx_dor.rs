//! DOR on a HyperX: correct the lowest dimension whose coordinate differs, in one hop (every
//! dimension is a complete graph). Channel dependencies only go from lower to higher
//! dimensions, so it is deadlock-free with a single VC.

use super::{Hop, MinimalStep, RouteState, Rng};
use crate::topology::HyperX;

pub const STEP: super::MinimalStepKind = super::MinimalStepKind {
    topology: &crate::topology::hyperx::KIND,
    build: |topo| std::sync::Arc::new(HyperXDor::new(super::served::<HyperX>(topo).clone())),
};

pub struct HyperXDor {
    hx: HyperX,
}

impl HyperXDor {
    pub fn new(hx: HyperX) -> Self {
        HyperXDor { hx }
    }
}

impl MinimalStep for HyperXDor {
    #[inline]
    fn hop(&self, cur: usize, target: usize, _state: &RouteState, _rng: &mut Rng) -> Hop {
        let (dim, _, to) = self.hx.grid.lowest_differing(cur, target).expect("cur != target");
        Hop { port: self.hx.port_to(cur, dim, to as usize) as u16, dim: dim as u8, ..Default::default() }
    }
}
