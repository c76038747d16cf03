//! k-ary n-tree (Petrini & Vanneschi): `levels` = n levels of k^(n-1) switches; servers
//! (`servers_per_switch`, k in the classic tree) on the leaves (level 0) only.
//!
//! Switch `l * k^(n-1) + w` is switch w of level l; w is read as n-1 base-k digits. Switch
//! (w, l) links to (w', l+1) when w and w' differ at most in digit l. Ports: down ports 0..k
//! first (levels > 0; port j leads to digit l-1 = j), then up ports (levels < n-1; up port u
//! leads to digit l = u).

use super::{check_size, LinkClass, PortPeer, Topology};
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;

#[derive(Debug, Clone)]
pub struct FatTree {
    pub k: usize,
    pub levels: usize,
    pub p: usize,
    /// Switches per level, k^(n-1).
    pub per_level: usize,
    /// k^d for each digit d.
    pow: Vec<usize>,
}

pub const KIND: super::Kind = super::Kind {
    name: "fat_tree",
    about: "k-ary n-tree: servers on the leaves, up/down links between levels",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    servers_per_switch: "1",
    build: |spec| Ok(std::sync::Arc::new(build(spec)?)),
};

keys! {
    /// The keys of a fat tree, read from `[topology]`.
    struct Keys {
        /// k of the k-ary n-tree
        k: Option<usize> = "required" => None,
        /// n of the k-ary n-tree: levels of switches
        levels: Option<usize> = "required" => None,
    }
}

pub fn build(spec: &Spec) -> SpecResult<FatTree> {
    let t = &spec.topology;
    let keys: Keys = super::own_keys(spec)?;
    let k = keys.k.ok_or_else(|| SpecError::new("topology.k", "", "missing; a fat_tree (k-ary n-tree) needs k, e.g. 4"))?;
    let levels = keys.levels.ok_or_else(|| SpecError::new("topology.levels", "", "missing; a fat_tree (k-ary n-tree) needs levels, e.g. 3"))?;
    if !(2..=1024).contains(&k) {
        return Err(SpecError::new("topology.k", k, "must be between 2 and 1024"));
    }
    if !(1..=16).contains(&levels) {
        return Err(SpecError::new("topology.levels", levels, "must be between 1 and 16"));
    }
    let per_level = (k as u128).saturating_pow(levels as u32 - 1);
    let p = t.servers_per_switch_or(1);
    check_size("topology.levels", levels.to_string(), per_level * levels as u128, per_level * p as u128, (2 * k + p) as u128)?;
    Ok(FatTree::new(k, levels, p))
}

impl FatTree {
    pub fn new(k: usize, levels: usize, p: usize) -> Self {
        let pow: Vec<usize> = (0..levels).map(|d| k.pow(d as u32)).collect();
        FatTree { k, levels, p, per_level: pow[levels - 1], pow }
    }
    #[inline]
    pub fn level(&self, switch: usize) -> usize {
        switch / self.per_level
    }
    #[inline]
    pub fn digit(&self, switch: usize, d: usize) -> usize {
        (switch % self.per_level) / self.pow[d] % self.k
    }
    #[inline]
    fn with_digit(&self, switch: usize, d: usize, v: usize) -> usize {
        switch - self.digit(switch, d) * self.pow[d] + v * self.pow[d]
    }
    /// Down ports of a switch at `level` (they come first).
    #[inline]
    pub fn down_ports(&self, level: usize) -> usize {
        if level > 0 {
            self.k
        } else {
            0
        }
    }
}

impl Topology for FatTree {
    fn tier(&self, switch: usize) -> usize {
        self.level(switch)
    }
    fn kind(&self) -> &'static str {
        "fat_tree"
    }
    fn num_switches(&self) -> usize {
        self.per_level * self.levels
    }
    fn network_ports(&self, switch: usize) -> usize {
        let l = self.level(switch);
        self.down_ports(l) + if l + 1 < self.levels { self.k } else { 0 }
    }
    fn servers_at(&self, switch: usize) -> usize {
        if self.level(switch) == 0 {
            self.p
        } else {
            0
        }
    }
    fn neighbour(&self, switch: usize, port: usize) -> Option<PortPeer> {
        let l = self.level(switch);
        let down = self.down_ports(l);
        if port < down {
            let other = self.with_digit(switch, l - 1, port) - self.per_level;
            let back = self.down_ports(l - 1) + self.digit(switch, l - 1);
            return Some(PortPeer { switch: other as u32, port: back as u16 });
        }
        let u = port - down;
        if l + 1 >= self.levels || u >= self.k {
            return None;
        }
        let other = self.with_digit(switch, l, u) + self.per_level;
        Some(PortPeer { switch: other as u32, port: self.digit(switch, l) as u16 })
    }
    /// A path that visits levels m..=L changes exactly digits m..L-1, so the distance is that
    /// of the shortest walk from level l1 to l2 covering [m, L]: 2(L - m) - |l1 - l2|.
    fn distance(&self, a: usize, b: usize) -> usize {
        let (la, lb) = (self.level(a), self.level(b));
        let differ: Vec<usize> = (0..self.levels - 1).filter(|&d| self.digit(a, d) != self.digit(b, d)).collect();
        let lo = differ.first().copied().unwrap_or(usize::MAX);
        let hi1 = differ.last().map_or(0, |&d| d + 1);
        let m = la.min(lb).min(lo);
        let top = la.max(lb).max(hi1);
        2 * (top - m) - la.abs_diff(lb)
    }
    /// Between leaves: up to the root level and down.
    fn diameter(&self) -> usize {
        2 * (self.levels - 1)
    }
    /// Ports between levels l and l+1 are dimension l (for link-load maps).
    fn port_dimension(&self, switch: usize, port: usize) -> Option<usize> {
        let l = self.level(switch);
        Some(if port < self.down_ports(l) { l - 1 } else { l })
    }
    fn link_class(&self, switch: usize, port: usize) -> LinkClass {
        let l = self.level(switch);
        LinkClass::level(if port < self.down_ports(l) { l - 1 } else { l })
    }
    fn description(&self) -> String {
        format!("{}-ary {}-tree (fat-tree) with {} server(s) per leaf", self.k, self.levels, self.p)
    }
}
