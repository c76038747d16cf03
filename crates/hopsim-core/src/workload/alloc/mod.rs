//! Allocation: which server each rank of a job runs on. Jobs are placed in the order of the
//! file, each on servers no earlier job holds. One policy per file, registered below.

mod explicit;
mod linear;
mod per_group;
mod random;
mod routers;
mod spread;

use crate::routing::Rng;
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;

/// The servers as an allocator sees them.
pub struct Machine {
    /// Group of each server (all 0 on a topology without groups).
    pub group: Vec<u32>,
    pub groups: usize,
    /// Switch (router) of each server.
    pub switch: Vec<u32>,
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

/// A policy's key refused for this network: the key (in the allocation table), its value
/// and what is allowed.
#[derive(Debug)]
pub struct KeyError {
    pub key: &'static str,
    pub value: String,
    pub allowed: String,
}

impl KeyError {
    pub fn new(key: &'static str, value: impl ToString, allowed: impl Into<String>) -> Self {
        KeyError { key, value: value.to_string(), allowed: allowed.into() }
    }
}

pub trait Allocation {
    /// Whether the policy's keys make sense for `ranks` ranks on this network, before it
    /// places them (a placement that does not fit the free servers is `place`'s error).
    fn check(&self, _ranks: usize, _machine: &Machine) -> Result<(), KeyError> {
        Ok(())
    }
    /// The server of each of `ranks` ranks, all free and distinct; or why they do not fit.
    fn place(&self, ranks: usize, machine: &Machine, rng: &mut Rng) -> Result<Vec<u32>, String>;
}

/// An allocation policy as `jobs[].allocation.policy` names it, declared in its file: the
/// keys of the allocation table it reads besides `policy` (its key type's), and how it is
/// made from them.
pub struct PolicyKind {
    pub name: &'static str,
    pub about: &'static str,
    pub keys: &'static [crate::spec::Key],
    /// Its key type's values when nothing is given (`KeyType::defaults`).
    pub defaults: fn() -> serde_json::Value,
    /// The policy of job `i` (`spec.jobs[i]`), its keys read with `own_keys`.
    make: fn(&Spec, usize) -> SpecResult<Box<dyn Allocation>>,
}

registry! {
    /// The allocation policies, as `jobs[].allocation.policy` names them: one line each, its
    /// variant and its entry, declared in its file.
    enum Policy;
    /// Every allocation policy, in the order error messages give them.
    const POLICIES: [PolicyKind] = {
        Linear => linear::KIND,
        Random => random::KIND,
        Spread => spread::KIND,
        PerGroup => per_group::KIND,
        Routers => routers::KIND,
        Explicit => explicit::KIND,
    }
}

/// Each policy with the keys it reads, for `hopsim list`.
pub fn policies_json() -> Vec<serde_json::Value> {
    POLICIES
        .iter()
        .map(|p| {
            let keys: Vec<_> = p.keys.iter().map(crate::spec::Key::json).collect();
            serde_json::json!({"name": p.name, "about": p.about, "keys": keys})
        })
        .collect()
}

/// The policy job `i`'s `allocation.policy` names, or an error naming it and what is allowed.
fn kind(spec: &Spec, i: usize) -> SpecResult<&'static PolicyKind> {
    let a = &spec.jobs[i].allocation;
    Policy::from_name(&a.policy).map(Policy::kind).ok_or_else(|| {
        let names: Vec<&str> = POLICIES.iter().map(|p| p.name).collect();
        SpecError::new(format!("jobs[{i}].allocation.policy"), format!("{:?}", a.policy), format!("allowed: {}", names.join(", ")))
    })
}

/// Job `i`'s policy's own keys of its allocation table, read into its key type `T`; the
/// keys of other policies are refused, unless the experiment sweeps the job's policy.
pub fn own_keys<T: serde::de::DeserializeOwned>(spec: &Spec, i: usize) -> SpecResult<T> {
    let k = kind(spec, i)?;
    let selector = format!("jobs[{i}].allocation.policy");
    let chosen = format!("{selector} = {:?}", k.name);
    let others = spec.keys_left_to_others(&selector, POLICIES.iter().flat_map(|p| p.keys.iter()).map(|k| k.name));
    let given = &spec.jobs[i].allocation.policy_keys;
    crate::spec::read_own_keys(&format!("jobs[{i}].allocation"), &chosen, given, crate::spec::ALLOCATION_TABLE_KEYS, k.keys, &others)
}

/// The policy job `i`'s `allocation.policy` names, made from its keys.
pub fn build(spec: &Spec, i: usize) -> SpecResult<Box<dyn Allocation>> {
    (kind(spec, i)?.make)(spec, i)
}

/// `spec` with each job's allocation table as the normalised spec writes it
/// (`spec::list_keys`): the policy's keys with their defaults, the other policies' null.
pub fn with_defaults(spec: &mut Spec) {
    for i in 0..spec.jobs.len() {
        let own = kind(spec, i).map_or(serde_json::Value::Null, |k| (k.defaults)());
        crate::spec::list_keys(&mut spec.jobs[i].allocation.policy_keys, own, POLICIES.iter().flat_map(|p| p.keys.iter()).map(|k| k.name));
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

keys! {
    /// The key type of the policies whose only key is where they start placing (linear,
    /// per_group): one type, so both declare and read `offset` alike.
    pub struct OffsetKeys {
        /// where placing starts: the first server, or the first group for a policy that places by group
        pub offset: usize = 0,
    }
}
