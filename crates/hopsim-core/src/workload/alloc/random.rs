//! `random`: free servers drawn at random (the run's seed and the job's place in the file).

use super::{take, Allocation, Machine};
use crate::routing::Rng;
use rand::seq::SliceRandom;

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "random",
    about: "free servers drawn at random",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    make: |spec, i| {
        let crate::component::NoKeys {} = super::own_keys(spec, i)?;
        Ok(Box::new(Random))
    },
};

pub struct Random;

impl Allocation for Random {
    fn place(&self, ranks: usize, m: &Machine, rng: &mut Rng) -> Result<Vec<u32>, String> {
        let mut free: Vec<u32> = (0..m.servers()).filter(|&s| m.free[s]).map(|s| s as u32).collect();
        free.shuffle(rng);
        take(ranks, free.into_iter(), "in the network")
    }
}
