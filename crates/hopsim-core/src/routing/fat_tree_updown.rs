//! Up/down routing on a k-ary n-tree: climb (through an up port drawn at random) until the
//! switch is an ancestor of the destination leaf (its digits from its level up agree with the
//! leaf's), then go down the unique path. Up channels only lead to up or down channels, down
//! only to down: deadlock-free with one VC.

use super::{Hop, MinimalStep, RouteState, Rng};
use crate::topology::FatTree;
use rand::Rng as _;

pub const STEP: super::MinimalStepKind = super::MinimalStepKind {
    topology: &crate::topology::fat_tree::KIND,
    build: |topo| std::sync::Arc::new(FatTreeUpDown::new(super::served::<FatTree>(topo).clone())),
};

pub struct FatTreeUpDown {
    ft: FatTree,
}

impl FatTreeUpDown {
    pub fn new(ft: FatTree) -> Self {
        FatTreeUpDown { ft }
    }
}

impl MinimalStep for FatTreeUpDown {
    #[inline]
    fn hop(&self, cur: usize, target: usize, _state: &RouteState, rng: &mut Rng) -> Hop {
        let t = &self.ft;
        let (lc, lt) = (t.level(cur), t.level(target));
        let ancestor = lc > lt && (lc..t.levels - 1).all(|d| t.digit(cur, d) == t.digit(target, d));
        if ancestor {
            let d = lc - 1;
            Hop { port: t.digit(target, d) as u16, dim: d as u8, ..Default::default() }
        } else {
            Hop { port: (t.down_ports(lc) + rng.gen_range(0..t.k)) as u16, dim: lc as u8, ..Default::default() }
        }
    }
}
