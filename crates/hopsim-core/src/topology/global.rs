//! How the global links of a dragonfly-like network join its groups: each group has `ports`
//! global ports (numbered switch by switch, `h` per switch); with `g` groups, port `k < g - 1`
//! of every group links to a distinct other group, so any two groups share exactly one link.
//! Ports `k >= g - 1` stay unconnected when there are fewer groups than `ports + 1`.

use crate::error::{SpecError, SpecResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrangement {
    /// Camarero et al.'s palmtree: port k of group G goes to group G + k + 1 (mod g), arriving
    /// on its port g - 2 - k.
    Palmtree,
    /// Port k of group G goes to the k-th other group in increasing order.
    Consecutive,
}

impl Arrangement {
    pub fn from_spec(value: &str) -> SpecResult<Self> {
        match value {
            "palmtree" => Ok(Arrangement::Palmtree),
            "consecutive" => Ok(Arrangement::Consecutive),
            other => Err(SpecError::new("topology.global_arrangement", format!("{other:?}"), "allowed: \"palmtree\", \"consecutive\"")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Arrangement::Palmtree => "palmtree",
            Arrangement::Consecutive => "consecutive",
        }
    }
    /// The group and global port reached from global port `k` of `group`, if connected.
    #[inline]
    pub fn peer(self, groups: usize, group: usize, k: usize) -> Option<(usize, usize)> {
        if k + 1 >= groups {
            return None;
        }
        let other = match self {
            Arrangement::Palmtree => (group + k + 1) % groups,
            Arrangement::Consecutive => {
                if k < group {
                    k
                } else {
                    k + 1
                }
            }
        };
        Some((other, self.port_to(groups, other, group)))
    }
    /// The global port of `from` whose link leads to group `to` (`from != to`).
    #[inline]
    pub fn port_to(self, groups: usize, from: usize, to: usize) -> usize {
        debug_assert_ne!(from, to);
        match self {
            Arrangement::Palmtree => (to + groups - from - 1) % groups,
            Arrangement::Consecutive => {
                if to < from {
                    to
                } else {
                    to - 1
                }
            }
        }
    }
}
