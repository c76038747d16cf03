//! Dragonfly+ (Shpiner et al.): `groups` groups, each a complete bipartite graph of
//! `leaves_per_group` leaves (L) and `spines_per_group` spines (S), i.e. a two-level fat-tree.
//! Servers (`servers_per_switch` each) attach to leaves only; each spine carries
//! `global_links_per_switch` global links (h, default L, which balances a spine's radix).
//! Groups default to S*h + 1 (one global link between every pair of groups).
//!
//! Switch `G*(L+S) + i` is leaf i of group G for i < L, spine i - L otherwise. Leaf ports:
//! 0..S up to spine j. Spine ports: 0..L down to leaf l, then h global ports; global port x
//! of spine j is the group's global port j*h + x, wired by `global_arrangement` (palmtree).

use super::{check_size, group_count, Arrangement, LinkClass, PortPeer, Topology};
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;

#[derive(Debug, Clone)]
pub struct DragonflyPlus {
    pub leaves: usize,
    pub spines: usize,
    pub h: usize,
    pub p: usize,
    pub g: usize,
    pub arrangement: Arrangement,
}

pub const KIND: super::Kind = super::Kind {
    name: "dragonfly_plus",
    about: "groups of leaves and spines (complete bipartite) joined by the spines' global links",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    servers_per_switch: "1",
    build: |spec| Ok(std::sync::Arc::new(build(spec)?)),
};

keys! {
    /// The keys of a dragonfly+, read from `[topology]`.
    struct Keys {
        /// leaf switches per group; servers on leaves only
        leaves_per_group: Option<usize> = "required" => None,
        /// spine switches per group
        spines_per_group: Option<usize> = "required" => None,
        /// h: global links per spine
        global_links_per_switch: Option<usize> = "leaves_per_group" => None,
        /// number of groups, 2 to spines*h+1
        groups: Option<usize> = "spines*h+1" => None,
        /// palmtree or consecutive wiring of the global links
        global_arrangement: String = "palmtree",
    }
}

pub fn build(spec: &Spec) -> SpecResult<DragonflyPlus> {
    let t = &spec.topology;
    let keys: Keys = super::own_keys(spec)?;
    let leaves = keys.leaves_per_group.ok_or_else(|| SpecError::new("topology.leaves_per_group", "", "missing; a dragonfly_plus needs leaves per group, e.g. 8"))?;
    let spines = keys.spines_per_group.ok_or_else(|| SpecError::new("topology.spines_per_group", "", "missing; a dragonfly_plus needs spines per group, e.g. 8"))?;
    if leaves == 0 || leaves > 4096 {
        return Err(SpecError::new("topology.leaves_per_group", leaves, "must be between 1 and 4096"));
    }
    if spines == 0 || spines > 4096 {
        return Err(SpecError::new("topology.spines_per_group", spines, "must be between 1 and 4096"));
    }
    let h = keys.global_links_per_switch.unwrap_or(leaves);
    if h == 0 || h > 4096 {
        return Err(SpecError::new("topology.global_links_per_switch", h, "must be between 1 and 4096 global links per spine"));
    }
    let g = group_count(keys.groups, spines * h + 1, "spines_per_group * global_links_per_switch")?;
    let arrangement = Arrangement::from_spec(&keys.global_arrangement)?;
    let p = t.servers_per_switch_or(1);
    let switches = (g * (leaves + spines)) as u128;
    let radix = (spines + p).max(leaves + h) as u128;
    check_size("topology.groups", g.to_string(), switches, (g * leaves) as u128 * p as u128, radix)?;
    Ok(DragonflyPlus { leaves, spines, h, p, g, arrangement })
}

impl DragonflyPlus {
    #[inline]
    pub fn group_size(&self) -> usize {
        self.leaves + self.spines
    }
    #[inline]
    pub fn is_leaf(&self, switch: usize) -> bool {
        switch % self.group_size() < self.leaves
    }
    /// The spine index (in its group) and port of group `from` whose global link leads to `to`.
    #[inline]
    pub fn gateway(&self, from: usize, to: usize) -> (usize, usize) {
        let k = self.arrangement.port_to(self.g, from, to);
        (k / self.h, self.leaves + k % self.h)
    }
    /// Hops between two switches of one group (indices in the group): 1 leaf-spine, 2 else.
    #[inline]
    fn w(&self, i: usize, j: usize) -> usize {
        if i == j {
            0
        } else if (i < self.leaves) != (j < self.leaves) {
            1
        } else {
            2
        }
    }
}

impl Topology for DragonflyPlus {
    fn kind(&self) -> &'static str {
        "dragonfly_plus"
    }
    fn num_switches(&self) -> usize {
        self.g * self.group_size()
    }
    fn network_ports(&self, switch: usize) -> usize {
        if self.is_leaf(switch) {
            self.spines
        } else {
            self.leaves + self.h
        }
    }
    fn servers_at(&self, switch: usize) -> usize {
        if self.is_leaf(switch) {
            self.p
        } else {
            0
        }
    }
    fn neighbour(&self, switch: usize, port: usize) -> Option<PortPeer> {
        let n = self.group_size();
        let (group, i) = (switch / n, switch % n);
        let first = group * n;
        if i < self.leaves {
            return (port < self.spines).then(|| PortPeer { switch: (first + self.leaves + port) as u32, port: i as u16 });
        }
        let j = i - self.leaves;
        if port < self.leaves {
            return Some(PortPeer { switch: (first + port) as u32, port: j as u16 });
        }
        let x = port - self.leaves;
        if x >= self.h {
            return None;
        }
        let (other, k) = self.arrangement.peer(self.g, group, j * self.h + x)?;
        Some(PortPeer { switch: (other * n + self.leaves + k / self.h) as u32, port: (self.leaves + k % self.h) as u16 })
    }
    fn distance(&self, s: usize, t: usize) -> usize {
        let n = self.group_size();
        let (gs, i, gt, j) = (s / n, s % n, t / n, t % n);
        if gs == gt {
            return self.w(i, j);
        }
        let (out, _) = self.gateway(gs, gt);
        let (arrive, _) = self.gateway(gt, gs);
        self.w(i, self.leaves + out) + 1 + self.w(self.leaves + arrive, j)
    }
    /// Between leaves (the switches with servers): up, global, down.
    fn diameter(&self) -> usize {
        3
    }
    /// Leaf-spine ports are dimension 0, global ports dimension 1 (for link-load maps).
    fn port_dimension(&self, switch: usize, port: usize) -> Option<usize> {
        Some(usize::from(!self.is_leaf(switch) && port >= self.leaves))
    }
    /// Leaf-spine links are the group's local links.
    fn link_class(&self, switch: usize, port: usize) -> LinkClass {
        if !self.is_leaf(switch) && port >= self.leaves {
            LinkClass::Global
        } else {
            LinkClass::Local
        }
    }
    fn description(&self) -> String {
        format!(
            "dragonfly+: {} groups of {} leaves + {} spines (complete bipartite), {} global link(s) per spine, {} server(s) per leaf, {} arrangement",
            self.g,
            self.leaves,
            self.spines,
            self.h,
            self.p,
            self.arrangement.name()
        )
    }
    fn groups(&self) -> usize {
        self.g
    }
    fn tier(&self, switch: usize) -> usize {
        usize::from(!self.is_leaf(switch))
    }
    fn group_of(&self, switch: usize) -> usize {
        switch / self.group_size()
    }
    fn global_links_per_switch(&self) -> usize {
        self.h
    }
}
