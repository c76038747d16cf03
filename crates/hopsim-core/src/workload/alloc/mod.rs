//! Allocation: which server each rank of a job runs on. Jobs are placed in the order of the
//! file, each on servers no earlier job holds. One policy per file, registered below.

mod explicit;
mod linear;
mod per_group;
mod random;
mod spread;

use crate::routing::Rng;
use crate::spec::AllocationSpec;

/// The servers as an allocator sees them.
pub struct Machine {
    /// Group of each server (all 0 on a topology without groups).
    pub group: Vec<u32>,
    pub groups: usize,
    /// Servers not yet given to a job.
    pub free: Vec<bool>,
}

impl Machine {
    pub fn servers(&self) -> usize {
        self.group.len()
    }

    /// Free servers of group `g`, lowest first.
    pub fn free_in_group(&self, g: usize) -> impl Iterator<Item = u32> + '_ {
        (0..self.servers()).filter(move |&s| self.free[s] && self.group[s] as usize == g).map(|s| s as u32)
    }
}

pub trait Allocation {
    /// The server of each of `ranks` ranks, all free and distinct; or why they do not fit.
    fn place(&self, ranks: usize, machine: &Machine, rng: &mut Rng) -> Result<Vec<u32>, String>;
}

type Make = fn(&AllocationSpec) -> Box<dyn Allocation>;

const REGISTRY: [(&str, Make); 5] = [
    ("linear", |a| Box::new(linear::Linear { offset: a.offset })),
    ("random", |_| Box::new(random::Random)),
    ("spread", |a| Box::new(spread::Spread { first_group: a.offset, groups: a.groups })),
    ("per_group", |a| Box::new(per_group::PerGroup { first_group: a.offset })),
    ("explicit", |a| Box::new(explicit::Explicit { servers: a.servers.clone().unwrap_or_default() })),
];

/// The policy `allocation.policy` names (`key` is that key, for the error).
pub fn build(spec: &AllocationSpec, key: &str) -> crate::error::SpecResult<Box<dyn Allocation>> {
    match REGISTRY.iter().find(|(name, _)| *name == spec.policy) {
        Some((_, make)) => Ok(make(spec)),
        None => {
            let names: Vec<&str> = REGISTRY.iter().map(|(name, _)| *name).collect();
            Err(crate::error::SpecError::new(key, format!("{:?}", spec.policy), format!("allowed: {}", names.join(", "))))
        }
    }
}

/// Take the first `ranks` of `candidates` (free servers in the policy's order).
fn take(ranks: usize, candidates: impl Iterator<Item = u32>, what: &str) -> Result<Vec<u32>, String> {
    let got: Vec<u32> = candidates.take(ranks).collect();
    if got.len() < ranks {
        return Err(format!("{ranks} ranks do not fit: only {} free servers {what}", got.len()));
    }
    Ok(got)
}
