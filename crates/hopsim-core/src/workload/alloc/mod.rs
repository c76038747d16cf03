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
use crate::spec::{AllocationSpec, Spec};

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

/// An allocation policy as `jobs[].allocation.policy` names it: the keys of the allocation
/// table it reads besides `policy`, and how it is made from them.
pub struct PolicyKind {
    pub name: &'static str,
    pub about: &'static str,
    pub keys: &'static [&'static str],
    make: fn(&AllocationSpec) -> Box<dyn Allocation>,
}

/// Every allocation policy, in the order error messages give them.
pub const POLICIES: [PolicyKind; 6] = [
    PolicyKind { name: "linear", about: "consecutive free servers from offset", keys: &["offset"], make: |a| Box::new(linear::Linear { offset: a.offset }) },
    PolicyKind { name: "random", about: "free servers drawn at random", keys: &[], make: |_| Box::new(random::Random) },
    PolicyKind { name: "spread", about: "round robin over groups from offset", keys: &["offset", "groups"], make: |a| Box::new(spread::Spread { first_group: a.offset, groups: a.groups }) },
    PolicyKind { name: "per_group", about: "fill one group before the next, from group offset", keys: &["offset"], make: |a| Box::new(per_group::PerGroup { first_group: a.offset }) },
    PolicyKind { name: "routers", about: "a fixed set of routers, as the SC'19 noise paper placed its jobs: `routers` routers over `groups` groups from group offset, ranks in blocks per router", keys: &["offset", "groups", "routers"], make: |a| Box::new(routers::Routers { routers: a.routers, groups: a.groups, first_group: a.offset }) },
    PolicyKind { name: "explicit", about: "the server of each rank, as listed", keys: &["servers"], make: |a| Box::new(explicit::Explicit { servers: a.servers.clone().unwrap_or_default() }) },
];

/// The `jobs[].allocation` keys the policies read besides `policy`, as `hopsim list` shows them.
pub const KEYS: &[crate::spec::Key] = &[
    // The policies that read a key are their entries' `keys`; `hopsim list` shows each key
    // under them, so its meaning does not name them.
    crate::spec::Key { name: "offset", default: "0", meaning: "where placing starts: the first server, or the first group for a policy that places by group" },
    crate::spec::Key { name: "groups", default: "all", meaning: "over how many groups, from offset on (all of them when not given)" },
    crate::spec::Key { name: "routers", default: "required", meaning: "how many routers the job occupies, shared evenly over its groups" },
    crate::spec::Key { name: "servers", default: "required", meaning: "the server of each rank" },
];

/// Each policy with the keys it reads, for `hopsim list`.
pub fn policies_json() -> Vec<serde_json::Value> {
    POLICIES
        .iter()
        .map(|p| {
            let keys: Vec<_> = KEYS.iter().filter(|k| p.keys.contains(&k.name)).map(crate::spec::Key::json).collect();
            serde_json::json!({"name": p.name, "about": p.about, "keys": keys})
        })
        .collect()
}

/// The policy job `i`'s `allocation.policy` names, refusing the keys of its table that the
/// policy does not read (those of another policy too, unless the experiment sweeps it).
pub fn build(spec: &Spec, i: usize) -> SpecResult<Box<dyn Allocation>> {
    let a = &spec.jobs[i].allocation;
    let selector = format!("jobs[{i}].allocation.policy");
    let Some(kind) = POLICIES.iter().find(|p| p.name == a.policy) else {
        let names: Vec<&str> = POLICIES.iter().map(|p| p.name).collect();
        return Err(SpecError::new(selector, format!("{:?}", a.policy), format!("allowed: {}", names.join(", "))));
    };
    // `offset` is 0 when not given.
    let given = [
        ("offset", (a.offset != 0).then(|| a.offset.to_string())),
        ("groups", a.groups.map(|g| g.to_string())),
        ("routers", a.routers.map(|r| r.to_string())),
        ("servers", a.servers.as_ref().map(|s| format!("{s:?}"))),
    ];
    let left = spec.keys_left_to_others(&selector, POLICIES.iter().flat_map(|p| p.keys.iter().copied()));
    for (key, value) in given {
        if let Some(value) = value.filter(|_| !kind.keys.contains(&key) && !left.contains(&key)) {
            let names: Vec<&str> = std::iter::once("policy").chain(kind.keys.iter().copied()).collect();
            return Err(crate::spec::unknown_key(&format!("jobs[{i}].allocation"), key, value, &format!("{selector} = {:?}", a.policy), &names));
        }
    }
    Ok((kind.make)(a))
}

/// Take the first `ranks` of `candidates` (free servers in the policy's order).
fn take(ranks: usize, candidates: impl Iterator<Item = u32>, what: &str) -> Result<Vec<u32>, String> {
    let got: Vec<u32> = candidates.take(ranks).collect();
    if got.len() < ranks {
        return Err(format!("{ranks} ranks do not fit: only {} free servers {what}", got.len()));
    }
    Ok(got)
}
