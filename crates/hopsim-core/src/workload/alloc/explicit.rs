//! `explicit`: the servers listed, rank i on `servers[i]`.

use super::{Allocation, Machine};
use crate::routing::Rng;

keys! {
    struct Keys {
        /// the server of each rank
        servers: Option<Vec<usize>> = "required" => None,
    }
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "explicit",
    about: "the server of each rank, as listed",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    make: |spec, i| {
        let Keys { servers } = super::own_keys(spec, i)?;
        Ok(Box::new(Explicit { servers: servers.unwrap_or_default() }))
    },
};

pub struct Explicit {
    pub servers: Vec<usize>,
}

impl Allocation for Explicit {
    fn place(&self, ranks: usize, m: &Machine, _rng: &mut Rng) -> Result<Vec<u32>, String> {
        if self.servers.len() != ranks {
            return Err(format!("lists {} servers for {ranks} ranks", self.servers.len()));
        }
        let mut seen = std::collections::HashSet::new();
        for &s in &self.servers {
            if s >= m.servers() {
                return Err(format!("server {s} is not in the network (servers 0..{})", m.servers()));
            }
            if !m.free[s] || !seen.insert(s) {
                return Err(format!("server {s} is taken twice (by this job or an earlier one)"));
            }
        }
        Ok(self.servers.iter().map(|&s| s as u32).collect())
    }
}
