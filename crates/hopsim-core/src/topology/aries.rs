//! The Cray Aries network (Alverson et al., "Cray XC Series Network"): a dragonfly whose
//! groups are `chassis` x `blades` routers (6 x 16 = 96 in a Cray XC cabinet pair), each with
//! `servers_per_switch` servers (4 nodes per Aries router).
//!
//! * Row (backplane): inside a chassis every router links to every other, one link each.
//! * Column (copper): routers at the same blade position of the group's chassis link
//!   all-to-all with `column_links` parallel links (3 tiles per pair in Aries).
//! * Global (optical): `global_links_per_switch` = h (at most 10) links to other groups.
//!
//! Switch `G*a + i` (a = chassis x blades) is router i = c * blades + b of group G: chassis c,
//! blade b. Ports: row ports 0..blades-1 (port j leads to blade j if j < b, else j + 1), then
//! column ports, `column_links` per other chassis in increasing order (lane t of the x-th
//! other chassis is `blades - 1 + x * column_links + t`), then the h global ports; global port
//! x of router i is the group's global port k = i * h + x.
//!
//! Arrangement of the global links: with `g` groups every pair of groups shares a bundle of
//! `bundle = (a * h) / (g - 1)` parallel links (1 with the largest g = a * h + 1). Global
//! port k of group G, with j = k mod (g - 1) and r = k div (g - 1), is link r of the bundle to
//! group G + j + 1 (mod g), arriving on that group's port r * (g - 1) + (g - 2 - j): a
//! palmtree per bundle round. Consecutive ports go to different groups, so the links of a
//! bundle land on different routers; ports k >= bundle * (g - 1) stay unconnected.

use super::{check_size, LinkClass, PortPeer, Topology};
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;

#[derive(Debug, Clone)]
pub struct Aries {
    pub chassis: usize,
    pub blades: usize,
    pub column_links: usize,
    pub h: usize,
    pub p: usize,
    pub g: usize,
    /// Parallel global links between every pair of groups.
    pub bundle: usize,
    /// `gateways[j][r]`: (router index in the group, port) of link r of the bundle from any
    /// group G to group G + j + 1 (mod g); the same for every G (palmtree symmetry).
    gateways: Vec<Vec<(u16, u16)>>,
}

/// Largest number of global links per router (Aries has 10 optical ports).
pub const MAX_GLOBAL_LINKS: usize = 10;

pub const KIND: super::Kind = super::Kind {
    name: "aries",
    about: "Cray XC: groups of chassis x blades routers (row and column links) joined by global links",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    servers_per_switch: "4",
    build: |spec| Ok(std::sync::Arc::new(build(spec)?)),
};

keys! {
    /// The keys of an Aries network, read from `[topology]`.
    struct Keys {
        /// chassis per group, 1 to 256
        chassis: usize = 6,
        /// routers (blades) per chassis, 1 to 256
        blades: usize = 16,
        /// parallel column links between each pair of chassis at one blade position, 1 to 16
        column_links: usize = 3,
        /// global links per router, 1 to 10
        global_links_per_switch: usize = 10,
        /// 2 to chassis*blades*global_links_per_switch+1
        groups: Option<usize> = "required" => None,
    }
}

pub fn build(spec: &Spec) -> SpecResult<Aries> {
    let t = &spec.topology;
    let Keys { chassis, blades, column_links, global_links_per_switch: h, groups } = super::own_keys(spec)?;
    if !(1..=256).contains(&chassis) {
        return Err(SpecError::new("topology.chassis", chassis, "must be between 1 and 256 chassis per group"));
    }
    if !(1..=256).contains(&blades) {
        return Err(SpecError::new("topology.blades", blades, "must be between 1 and 256 routers (blades) per chassis"));
    }
    if !(1..=16).contains(&column_links) {
        return Err(SpecError::new("topology.column_links", column_links, "must be between 1 and 16 parallel links per pair of chassis"));
    }
    if !(1..=MAX_GLOBAL_LINKS).contains(&h) {
        return Err(SpecError::new("topology.global_links_per_switch", h, format!("must be between 1 and {MAX_GLOBAL_LINKS} global links per Aries router")));
    }
    let a = chassis * blades;
    let max = a * h + 1;
    let g = groups.ok_or_else(|| SpecError::new("topology.groups", "", format!("missing; an aries network needs a number of groups, 2 to chassis * blades * global_links_per_switch + 1 = {max}")))?;
    if g < 2 || g > max {
        return Err(SpecError::new("topology.groups", g, format!("must be between 2 and chassis * blades * global_links_per_switch + 1 = {max}")));
    }
    let p = t.servers_per_switch_or(4);
    let switches = (g * a) as u128;
    let radix = (blades - 1 + (chassis - 1) * column_links + h + p) as u128;
    check_size("topology.groups", g.to_string(), switches, switches * p as u128, radix)?;
    Ok(Aries::new(chassis, blades, column_links, h, p, g))
}

impl Aries {
    pub fn new(chassis: usize, blades: usize, column_links: usize, h: usize, p: usize, g: usize) -> Self {
        let a = chassis * blades;
        let bundle = a * h / (g - 1);
        let first_global = blades - 1 + (chassis - 1) * column_links;
        let gateways = (0..g - 1)
            .map(|j| {
                (0..bundle)
                    .map(|r| {
                        let k = r * (g - 1) + j;
                        ((k / h) as u16, (first_global + k % h) as u16)
                    })
                    .collect()
            })
            .collect();
        Aries { chassis, blades, column_links, h, p, g, bundle, gateways }
    }

    /// Routers per group.
    #[inline]
    pub fn group_size(&self) -> usize {
        self.chassis * self.blades
    }

    /// First global port of every router.
    #[inline]
    pub fn first_global_port(&self) -> usize {
        self.blades - 1 + (self.chassis - 1) * self.column_links
    }

    /// The group's global links to group `to` (`from != to`): (router index in the group,
    /// port), one per link of the bundle; the far end of link r is link r of `gateways(to, from)`.
    #[inline]
    pub fn gateways(&self, from: usize, to: usize) -> &[(u16, u16)] {
        debug_assert_ne!(from, to);
        &self.gateways[(to + self.g - from - 1) % self.g]
    }

    /// The port of `x`'s k-ary index among `n` (its own left out) that leads to `y`.
    #[inline]
    fn other_index(x: usize, y: usize) -> usize {
        debug_assert_ne!(x, y);
        if y < x {
            y
        } else {
            y - 1
        }
    }

    /// Row port of router index `i` to the router of its chassis at blade `b`.
    #[inline]
    pub fn row_port(&self, i: usize, b: usize) -> usize {
        Self::other_index(i % self.blades, b)
    }

    /// Column port (lane `lane`) of router index `i` to the router at its blade in chassis `c`.
    #[inline]
    pub fn column_port(&self, i: usize, c: usize, lane: usize) -> usize {
        self.blades - 1 + Self::other_index(i / self.blades, c) * self.column_links + lane
    }

    /// Local hops between router indices `i` and `j` of one group: one per coordinate
    /// (chassis, blade) that differs.
    #[inline]
    pub fn local_distance(&self, i: usize, j: usize) -> usize {
        usize::from(i / self.blades != j / self.blades) + usize::from(i % self.blades != j % self.blades)
    }

    /// The next local hop from router index `i` towards `j` (`i != j`) of the same group,
    /// along a minimal path: the row or column link when they share a chassis or a blade,
    /// else the first hop of row-then-column or (with `column_first`) column-then-row.
    /// Column hops take lane `lane` (< `column_links`) of the parallel links.
    #[inline]
    pub fn local_hop(&self, i: usize, j: usize, column_first: bool, lane: usize) -> (usize, LinkClass) {
        let (ci, bi, cj, bj) = (i / self.blades, i % self.blades, j / self.blades, j % self.blades);
        if ci != cj && (bi == bj || column_first) {
            (self.column_port(i, cj, lane), LinkClass::Column)
        } else {
            (self.row_port(i, bj), LinkClass::Row)
        }
    }

    /// Local hops of the longest minimal path inside a group.
    pub fn local_diameter(&self) -> usize {
        usize::from(self.chassis > 1) + usize::from(self.blades > 1)
    }
}

impl Topology for Aries {
    fn kind(&self) -> &'static str {
        "aries"
    }
    fn num_switches(&self) -> usize {
        self.g * self.group_size()
    }
    fn network_ports(&self, _switch: usize) -> usize {
        self.first_global_port() + self.h
    }
    fn servers_at(&self, _switch: usize) -> usize {
        self.p
    }
    fn neighbour(&self, switch: usize, port: usize) -> Option<PortPeer> {
        let a = self.group_size();
        let (group, i) = (switch / a, switch % a);
        let (c, b) = (i / self.blades, i % self.blades);
        let first = group * a;
        if port + 1 < self.blades {
            let b2 = if port < b { port } else { port + 1 };
            let j = c * self.blades + b2;
            return Some(PortPeer { switch: (first + j) as u32, port: self.row_port(j, b) as u16 });
        }
        let fg = self.first_global_port();
        if port < fg {
            let q = port + 1 - self.blades;
            let (x, lane) = (q / self.column_links, q % self.column_links);
            let c2 = if x < c { x } else { x + 1 };
            let j = c2 * self.blades + b;
            return Some(PortPeer { switch: (first + j) as u32, port: self.column_port(j, c, lane) as u16 });
        }
        if port >= fg + self.h {
            return None;
        }
        let k = i * self.h + port - fg;
        let (j, r) = (k % (self.g - 1), k / (self.g - 1));
        if r >= self.bundle {
            return None;
        }
        let other = (group + j + 1) % self.g;
        let k2 = r * (self.g - 1) + (self.g - 2 - j);
        Some(PortPeer { switch: (other * a + k2 / self.h) as u32, port: (fg + k2 % self.h) as u16 })
    }
    /// Inside a group: one hop per differing coordinate. Between groups: the shortest path
    /// with one global link, over the best link of the bundle.
    fn distance(&self, s: usize, t: usize) -> usize {
        let a = self.group_size();
        let (gs, i, gt, j) = (s / a, s % a, t / a, t % a);
        if gs == gt {
            return self.local_distance(i, j);
        }
        let there = self.gateways(gs, gt);
        let back = self.gateways(gt, gs);
        there.iter().zip(back).map(|(&(out, _), &(arrive, _))| self.local_distance(i, out as usize) + 1 + self.local_distance(arrive as usize, j)).min().expect("a bundle has a link")
    }
    /// The longest minimal path: minimal routing may take any link of the bundle, so up to
    /// two local hops to it, the global hop and two local hops after it (5), even where a
    /// shorter path over another link of the bundle exists. VC ladders size by this.
    fn diameter(&self) -> usize {
        2 * self.local_diameter() + 1
    }
    /// Row ports are dimension 0, column ports 1, global ports 2 (for link-load maps).
    fn port_dimension(&self, switch: usize, port: usize) -> Option<usize> {
        Some(match self.link_class(switch, port) {
            LinkClass::Row => 0,
            LinkClass::Column => 1,
            _ => 2,
        })
    }
    fn link_class(&self, _switch: usize, port: usize) -> LinkClass {
        if port + 1 < self.blades {
            LinkClass::Row
        } else if port < self.first_global_port() {
            LinkClass::Column
        } else {
            LinkClass::Global
        }
    }
    fn description(&self) -> String {
        format!(
            "aries: {} groups of {} chassis x {} routers (row all-to-all, columns all-to-all x {} links), {} global link(s) per router ({} per pair of groups), {} server(s) per router",
            self.g, self.chassis, self.blades, self.column_links, self.h, self.bundle, self.p
        )
    }
    fn groups(&self) -> usize {
        self.g
    }
    fn group_of(&self, switch: usize) -> usize {
        switch / self.group_size()
    }
    fn global_links_per_switch(&self) -> usize {
        self.h
    }
}
