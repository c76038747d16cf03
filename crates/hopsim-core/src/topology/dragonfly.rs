//! Canonical dragonfly (Kim et al.): `groups` groups of `a = switches_per_group` switches, each
//! group a complete graph; each switch has `h = global_links_per_switch` global links and `p =
//! servers_per_switch` servers. Groups default to a*h + 1 (one global link between every pair
//! of groups); fewer groups leave the last global ports of each group unconnected.
//!
//! Switch `G*a + i` is switch i of group G. Ports: 0..a-1 local (port j leads to switch j of
//! the group if j < i, else j + 1), then h global ports; global port x of switch i is the
//! group's global port i*h + x, wired by `global_arrangement` (palmtree by default).

use super::{check_size, group_count, Arrangement, LinkClass, PortPeer, Topology};
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;

#[derive(Debug, Clone)]
pub struct Dragonfly {
    pub a: usize,
    pub h: usize,
    pub p: usize,
    pub g: usize,
    pub arrangement: Arrangement,
}

pub const KIND: super::Kind = super::Kind {
    name: "dragonfly",
    about: "groups of a switches, a complete graph each, joined by global links (Kim et al.)",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    servers_per_switch: "1",
    build: |spec| Ok(std::sync::Arc::new(build(spec)?)),
};

keys! {
    /// The keys of a dragonfly, read from `[topology]`.
    struct Keys {
        /// a: switches per group (a complete graph)
        switches_per_group: Option<usize> = "required" => None,
        /// h: global links per switch
        global_links_per_switch: Option<usize> = "required" => None,
        /// number of groups, 2 to a*h+1 (one global link per pair of groups)
        groups: Option<usize> = "a*h+1" => None,
        /// palmtree or consecutive wiring of the global links
        global_arrangement: String = "palmtree",
    }
}

pub fn build(spec: &Spec) -> SpecResult<Dragonfly> {
    let t = &spec.topology;
    let keys: Keys = super::own_keys(spec)?;
    let a = keys.switches_per_group.ok_or_else(|| SpecError::new("topology.switches_per_group", "", "missing; a dragonfly needs switches per group, e.g. 12"))?;
    let h = keys.global_links_per_switch.ok_or_else(|| SpecError::new("topology.global_links_per_switch", "", "missing; a dragonfly needs global links per switch, e.g. 6"))?;
    if a == 0 || a > 4096 {
        return Err(SpecError::new("topology.switches_per_group", a, "must be between 1 and 4096"));
    }
    if h == 0 || h > 4096 {
        return Err(SpecError::new("topology.global_links_per_switch", h, "must be between 1 and 4096"));
    }
    let g = group_count(keys.groups, a * h + 1, "switches_per_group * global_links_per_switch")?;
    let arrangement = Arrangement::from_spec(&keys.global_arrangement)?;
    let p = t.servers_per_switch_or(1);
    let switches = (g * a) as u128;
    check_size("topology.groups", g.to_string(), switches, switches * p as u128, (a - 1 + h + p) as u128)?;
    Ok(Dragonfly { a, h, p, g, arrangement })
}

impl Dragonfly {
    /// The switch (index in its group) and port of group `from` whose global link leads to `to`.
    #[inline]
    pub fn gateway(&self, from: usize, to: usize) -> (usize, usize) {
        let k = self.arrangement.port_to(self.g, from, to);
        (k / self.h, self.a - 1 + k % self.h)
    }
    /// Local port of switch index `i` that leads to switch index `j` of the same group.
    #[inline]
    pub fn local_port(i: usize, j: usize) -> usize {
        debug_assert_ne!(i, j);
        if j < i {
            j
        } else {
            j - 1
        }
    }
    /// Local hops to join `i` and `j` inside a group (0 or 1).
    #[inline]
    fn w(i: usize, j: usize) -> usize {
        usize::from(i != j)
    }
}

impl Topology for Dragonfly {
    fn kind(&self) -> &'static str {
        "dragonfly"
    }
    fn num_switches(&self) -> usize {
        self.g * self.a
    }
    fn network_ports(&self, _switch: usize) -> usize {
        self.a - 1 + self.h
    }
    fn servers_at(&self, _switch: usize) -> usize {
        self.p
    }
    fn neighbour(&self, switch: usize, port: usize) -> Option<PortPeer> {
        let (group, i) = (switch / self.a, switch % self.a);
        if port + 1 < self.a {
            let j = if port < i { port } else { port + 1 };
            return Some(PortPeer { switch: (group * self.a + j) as u32, port: Self::local_port(j, i) as u16 });
        }
        let x = port + 1 - self.a;
        if x >= self.h {
            return None;
        }
        let (other, k) = self.arrangement.peer(self.g, group, i * self.h + x)?;
        Some(PortPeer { switch: (other * self.a + k / self.h) as u32, port: (self.a - 1 + k % self.h) as u16 })
    }
    fn distance(&self, s: usize, t: usize) -> usize {
        let (gs, i, gt, j) = (s / self.a, s % self.a, t / self.a, t % self.a);
        if gs == gt {
            return Self::w(i, j);
        }
        let (out, _) = self.gateway(gs, gt);
        let (arrive, _) = self.gateway(gt, gs);
        Self::w(i, out) + 1 + Self::w(arrive, j)
    }
    fn diameter(&self) -> usize {
        if self.a > 1 {
            3
        } else {
            1
        }
    }
    /// Local ports are dimension 0, global ports dimension 1 (for link-load maps).
    fn port_dimension(&self, _switch: usize, port: usize) -> Option<usize> {
        Some(usize::from(port + 1 >= self.a))
    }
    fn link_class(&self, _switch: usize, port: usize) -> LinkClass {
        if port + 1 >= self.a {
            LinkClass::Global
        } else {
            LinkClass::Local
        }
    }
    fn description(&self) -> String {
        format!(
            "dragonfly: {} groups of {} switches (complete graph), {} global link(s) and {} server(s) per switch, {} arrangement",
            self.g,
            self.a,
            self.h,
            self.p,
            self.arrangement.name()
        )
    }
    fn groups(&self) -> usize {
        self.g
    }
    fn group_of(&self, switch: usize) -> usize {
        switch / self.a
    }
    fn global_links_per_switch(&self) -> usize {
        self.h
    }
}
