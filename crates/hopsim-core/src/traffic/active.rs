//! The servers that generate traffic (`traffic.active_servers`, `traffic.active_fraction`):
//! every server of the network, or a drawn subset. Every server, the common case, holds no
//! list: an MPI rank of a network of millions of servers would otherwise keep a list of all
//! of them in each pattern and workload that reads it. A subset's list is shared by them.

use std::sync::Arc;

#[derive(Debug, Clone)]
pub enum Active {
    /// Servers `0..n`.
    All(u32),
    /// These servers, ascending.
    Listed(Arc<[u32]>),
}

impl Active {
    /// The servers `list`, ascending, of a network of `n`: `All` if that is every one.
    pub fn of(list: Vec<u32>, n: usize) -> Self {
        if list.len() == n {
            debug_assert!(list.iter().enumerate().all(|(i, &s)| i == s as usize), "ascending and unique");
            Active::All(n as u32)
        } else {
            Active::Listed(list.into())
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Active::All(n) => *n as usize,
            Active::Listed(list) => list.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th active server, in ascending order.
    #[inline]
    pub fn at(&self, i: usize) -> u32 {
        match self {
            Active::All(n) => {
                assert!(i < *n as usize, "active server {i} of {n}");
                i as u32
            }
            Active::Listed(list) => list[i],
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(move |i| self.at(i))
    }

    /// The active servers among `servers`, in ascending order.
    pub fn within(&self, servers: std::ops::Range<usize>) -> impl Iterator<Item = u32> + '_ {
        let (from, to) = match self {
            Active::All(n) => (servers.start.min(*n as usize), servers.end.min(*n as usize)),
            Active::Listed(list) => (list.partition_point(|&s| (s as usize) < servers.start), list.partition_point(|&s| (s as usize) < servers.end)),
        };
        (from..to).map(move |i| self.at(i))
    }

    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }

    /// Bytes it holds (the memory estimate, engine/memory).
    pub fn bytes(&self) -> u64 {
        match self {
            Active::All(_) => 0,
            Active::Listed(list) => 4 * list.len() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Active;

    #[test]
    fn every_server_is_held_as_a_count_and_a_subset_as_its_list() {
        let all = Active::of((0..5).collect(), 5);
        assert!(matches!(all, Active::All(5)) && all.bytes() == 0);
        assert_eq!(all.to_vec(), vec![0, 1, 2, 3, 4]);
        let some = Active::of(vec![1, 3], 5);
        assert_eq!((some.len(), some.at(1), some.bytes()), (2, 3, 8));
        assert_eq!(some.iter().collect::<Vec<_>>(), vec![1, 3]);
    }

    /// A destination drawn among every server is the one the list of them gave (the same
    /// draws from the same stream), so that holding a count changes no run's results.
    #[test]
    fn a_count_draws_what_the_list_drew() {
        use rand::SeedableRng;
        let n = 1000;
        let (all, listed) = (Active::All(n), Active::Listed((0..n).collect::<Vec<u32>>().into()));
        let (mut a, mut b) = (crate::routing::Rng::seed_from_u64(7), crate::routing::Rng::seed_from_u64(7));
        for src in 0..5000 {
            let src = src % n as usize;
            assert_eq!(crate::traffic::uniform_other(&all, src, &mut a), crate::traffic::uniform_other(&listed, src, &mut b));
        }
    }
}
