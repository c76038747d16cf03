//! `routers`: a job on a fixed set of `routers` routers over `groups` groups from group
//! `first_group` on, as De Sensi et al. (SC'19) ran their microbenchmarks: 1,024 nodes on 257
//! Aries routers over 6 groups of Piz Daint, 64 nodes on 33 routers over 5 groups of Cori. The
//! paper fixed one allocation so that every mode ran on the same nodes; it does not say which
//! routers those were, only how many and over how many groups, so this policy takes them
//! evenly over the groups (the first groups one more when they do not divide), each group's
//! lowest-numbered routers that have room, as a batch system filling a machine in node order
//! would.
//!
//! Ranks go in blocks, as Cray's MPI places one rank per node in node order and a router's
//! nodes are consecutive: the ranks of router 0, then of router 1, ... The ranks are shared
//! as evenly as the routers allow (the first routers one more), so every router of the set
//! holds part of the job: 1,024 ranks on 257 routers of 4 nodes are 253 routers of 4 and 4
//! of 3; 64 on 33 are 31 routers of 2 and 2 of 1. The servers a router keeps free are left
//! to later jobs (a background).

use super::{Allocation, KeyError, Machine};
use crate::routing::Rng;

keys! {
    struct Keys {
        /// where placing starts: the first server, or the first group for a policy that places by group
        offset: usize = 0,
        /// over how many groups, from offset on (all of them when not given)
        groups: Option<usize> = "all" => None,
        /// how many routers the job occupies, shared evenly over its groups
        routers: Option<usize> = "required" => None,
    }
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "routers",
    about: "a fixed set of routers, as the SC'19 noise paper placed its jobs: `routers` routers over `groups` groups from group offset, ranks in blocks per router",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    make: |spec, i| {
        let Keys { offset, groups, routers } = super::own_keys(spec, i)?;
        Ok(Box::new(Routers { routers, groups, first_group: offset }))
    },
};

pub struct Routers {
    pub routers: Option<usize>,
    pub groups: Option<usize>,
    pub first_group: usize,
}

/// A network's routers as the allocator sees them: per group, its routers in increasing
/// number, each with its free servers lowest first.
struct Layout {
    groups: Vec<Vec<Vec<u32>>>,
    /// Most servers on one router.
    servers_per_router: usize,
}

impl Layout {
    fn of(m: &Machine) -> Layout {
        let groups = m.groups.max(1);
        let switches = m.switch.iter().map(|&s| s as usize + 1).max().unwrap_or(0);
        let mut servers: Vec<Vec<u32>> = vec![Vec::new(); switches];
        let mut all = vec![0usize; switches];
        let mut group_of = vec![0usize; switches];
        for s in 0..m.servers() {
            let w = m.switch[s] as usize;
            all[w] += 1;
            group_of[w] = m.group[s] as usize;
            if m.free[s] {
                servers[w].push(s as u32);
            }
        }
        let mut by_group = vec![Vec::new(); groups];
        for (w, free) in servers.into_iter().enumerate() {
            if all[w] > 0 {
                by_group[group_of[w]].push(free);
            }
        }
        Layout { groups: by_group, servers_per_router: all.into_iter().max().unwrap_or(0) }
    }
}

/// `total` shared over `parts` as evenly as possible, the first ones one more.
fn shares(total: usize, parts: usize) -> impl Iterator<Item = usize> {
    (0..parts).map(move |k| total / parts + usize::from(k < total % parts))
}

impl Routers {
    /// The groups the job spans.
    fn span(&self, m: &Machine) -> usize {
        self.groups.unwrap_or(m.groups.max(1).saturating_sub(self.first_group))
    }
}

impl Allocation for Routers {
    fn check(&self, ranks: usize, m: &Machine) -> Result<(), KeyError> {
        let network_groups = m.groups.max(1);
        let Some(routers) = self.routers else {
            return Err(KeyError::new("routers", "", "missing; policy = \"routers\" needs the number of routers the job occupies"));
        };
        if self.first_group >= network_groups {
            return Err(KeyError::new("offset", self.first_group, format!("must be a group of the network, 0 to {}", network_groups - 1)));
        }
        let span = self.span(m);
        if span == 0 || self.first_group + span > network_groups {
            return Err(KeyError::new("groups", span, format!("must be 1 to {} (the network's {network_groups} groups from group offset {})", network_groups - self.first_group, self.first_group)));
        }
        let layout = Layout::of(m);
        let p = layout.servers_per_router;
        let per_group = layout.groups[self.first_group..self.first_group + span].iter().map(Vec::len).min().unwrap_or(0);
        if routers < span || routers > span * per_group {
            return Err(KeyError::new("routers", routers, format!("must be {span} to {} (at least one and at most {per_group} routers in each of the {span} groups)", span * per_group)));
        }
        if ranks < routers || ranks > routers * p {
            return Err(KeyError::new("routers", routers, format!("must hold the job's {ranks} ranks with every router used: {} to {ranks} routers of {p} servers", ranks.div_ceil(p.max(1)))));
        }
        Ok(())
    }

    fn place(&self, ranks: usize, m: &Machine, _rng: &mut Rng) -> Result<Vec<u32>, String> {
        let routers = self.routers.expect("checked");
        let span = self.span(m);
        let layout = Layout::of(m);
        let per_router: Vec<usize> = shares(ranks, routers).collect();
        let mut next = per_router.iter().copied().peekable();
        let mut out = Vec::with_capacity(ranks);
        for (k, count) in shares(routers, span).enumerate() {
            let g = self.first_group + k;
            let mut taken = 0;
            for free in &layout.groups[g] {
                if taken == count {
                    break;
                }
                let Some(&n) = next.peek() else { break };
                if free.len() >= n {
                    out.extend_from_slice(&free[..n]);
                    next.next();
                    taken += 1;
                }
            }
            if taken < count {
                return Err(format!("group {g} has only {taken} routers with room for their ranks, {count} asked for (routers are shared evenly over groups {}..{})", self.first_group, self.first_group + span));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// `groups` groups of `routers` routers of `p` servers, numbered group by group.
    fn machine(groups: usize, routers: usize, p: usize) -> Machine {
        let n = groups * routers * p;
        Machine { group: (0..n).map(|s| (s / (routers * p)) as u32).collect(), groups, switch: (0..n).map(|s| (s / p) as u32).collect(), free: vec![true; n] }
    }

    fn place(m: &Machine, ranks: usize, routers: usize, groups: usize, offset: usize) -> Vec<u32> {
        let policy = Routers { routers: Some(routers), groups: Some(groups), first_group: offset };
        policy.check(ranks, m).unwrap();
        policy.place(ranks, m, &mut Rng::seed_from_u64(0)).unwrap()
    }

    /// The routers in the order the ranks occupy them, with the ranks of each.
    fn blocks(m: &Machine, servers: &[u32]) -> Vec<(u32, usize)> {
        let mut out: Vec<(u32, usize)> = Vec::new();
        for &s in servers {
            let w = m.switch[s as usize];
            match out.last_mut() {
                Some((last, n)) if *last == w => *n += 1,
                _ => out.push((w, 1)),
            }
        }
        out
    }

    #[test]
    fn the_papers_placements_take_exactly_their_routers_and_groups_in_blocks() {
        // Piz Daint: 1,024 nodes on 257 routers over 6 groups; Cori: 64 nodes on 33 routers
        // over 5 groups; groups of 96 routers of 4 nodes.
        for (groups, ranks, routers, span, offset) in [(20, 1024, 257, 6, 3), (32, 64, 33, 5, 0)] {
            let m = machine(groups, 96, 4);
            let s = place(&m, ranks, routers, span, offset);
            assert_eq!(s.len(), ranks);
            let distinct: std::collections::BTreeSet<_> = s.iter().collect();
            assert_eq!(distinct.len(), ranks, "each rank on its own server");
            let b = blocks(&m, &s);
            // Each router appears once: its ranks are consecutive.
            let routers_used: std::collections::BTreeSet<_> = b.iter().map(|&(w, _)| w).collect();
            assert_eq!((b.len(), routers_used.len()), (routers, routers));
            let sizes: Vec<usize> = b.iter().map(|&(_, n)| n).collect();
            let (lo, hi) = (ranks / routers, ranks.div_ceil(routers));
            assert!(sizes.windows(2).all(|w| w[0] >= w[1]) && sizes.iter().all(|&n| n == lo || n == hi), "{sizes:?}");
            let groups_used: std::collections::BTreeSet<_> = s.iter().map(|&x| m.group[x as usize]).collect();
            assert_eq!(groups_used, (offset as u32..(offset + span) as u32).collect());
            // Routers shared evenly over the groups.
            let mut per_group = vec![0; groups];
            for &w in &routers_used {
                per_group[w as usize / 96] += 1;
            }
            let used: Vec<usize> = per_group.into_iter().filter(|&c| c > 0).collect();
            assert!(used.iter().all(|&c| c == routers / span || c == routers.div_ceil(span)), "{used:?}");
        }
        // 1,024 on 257: 253 routers of 4 and 4 of 3.
        let m = machine(6, 96, 4);
        let b = blocks(&m, &place(&m, 1024, 257, 6, 0));
        assert_eq!(b.iter().filter(|&&(_, n)| n == 4).count(), 253);
    }

    #[test]
    fn a_router_without_room_for_its_block_is_passed_over() {
        let mut m = machine(2, 4, 4);
        // An earlier job holds two servers of router 0 and all of router 1.
        for s in [0, 1, 4, 5, 6, 7] {
            m.free[s] = false;
        }
        let s = place(&m, 6, 2, 1, 0);
        assert_eq!(s, vec![8, 9, 10, 12, 13, 14]);
        // One rank per router fits router 0's free servers.
        assert_eq!(place(&m, 2, 2, 1, 0), vec![2, 8]);
    }

    #[test]
    fn keys_that_cannot_work_are_named() {
        let m = machine(3, 4, 4);
        let key = |routers: Option<usize>, groups: Option<usize>, offset: usize, ranks: usize| {
            Routers { routers, groups, first_group: offset }.check(ranks, &m).unwrap_err().key
        };
        assert_eq!(key(None, None, 0, 8), "routers");
        assert_eq!(key(Some(0), None, 0, 8), "routers");
        assert_eq!(key(Some(2), Some(3), 0, 8), "routers"); // fewer routers than groups
        assert_eq!(key(Some(13), Some(3), 0, 20), "routers"); // more than the groups hold
        assert_eq!(key(Some(9), Some(3), 0, 8), "routers"); // a router without a rank
        assert_eq!(key(Some(3), Some(3), 0, 13), "routers"); // 13 ranks on 3 routers of 4
        assert_eq!(key(Some(3), Some(4), 0, 8), "groups");
        assert_eq!(key(Some(3), Some(0), 0, 8), "groups");
        assert_eq!(key(Some(3), Some(1), 3, 8), "offset");
        assert_eq!(key(Some(3), Some(3), 1, 8), "groups");
        let e = Routers { routers: Some(9), groups: Some(3), first_group: 0 }.check(8, &m).unwrap_err();
        assert_eq!(e.value, "9");
        assert!(e.allowed.contains("2 to 8 routers"), "{}", e.allowed);
    }
}
