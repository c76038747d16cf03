//! `linear`: consecutive servers from `offset` on, skipping those earlier jobs hold.

use super::{take, Allocation, Machine};
use crate::routing::Rng;

pub struct Linear {
    pub offset: usize,
}

impl Allocation for Linear {
    fn place(&self, ranks: usize, m: &Machine, _rng: &mut Rng) -> Result<Vec<u32>, String> {
        let from = (self.offset..m.servers()).filter(|&s| m.free[s]).map(|s| s as u32);
        take(ranks, from, &format!("from server {}", self.offset))
    }
}
