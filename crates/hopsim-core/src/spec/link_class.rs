//! Link classes: what kind of cable a link is, in the words of each network. The engine owns
//! them (not the routings) because a class carries physical properties: `[link.<class>]`
//! gives it its own latency and bandwidth, and the links table reports it per channel. They
//! are part of the experiment file's vocabulary, below the topologies that assign them.

/// The class of a link. Both channels of a link have the same class; a server's link to its
/// switch is `Injection` in both directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LinkClass {
    /// Torus, mesh and HyperX links along dimension d (0-based).
    Dimension(u8),
    /// Inside a dragonfly group; the leaf-spine links of a dragonfly+ group.
    Local,
    /// Between groups (dragonfly, dragonfly+, Aries optical links).
    Global,
    /// Aries: between routers of one chassis (backplane).
    Row,
    /// Aries: between routers at the same blade position of a group's chassis (copper cables).
    Column,
    /// Fat-tree links between levels l and l + 1 (0 = leaves).
    Level(u8),
    /// Between a server (its NIC) and its switch.
    Injection,
}

/// Dimensions and fat-tree levels are at most 16, so their names are static.
const MAX_INDEXED: usize = 16;
const DIMENSION_NAMES: [&str; MAX_INDEXED] =
    ["dim0", "dim1", "dim2", "dim3", "dim4", "dim5", "dim6", "dim7", "dim8", "dim9", "dim10", "dim11", "dim12", "dim13", "dim14", "dim15"];
const LEVEL_NAMES: [&str; MAX_INDEXED] = [
    "level0", "level1", "level2", "level3", "level4", "level5", "level6", "level7", "level8", "level9", "level10", "level11", "level12", "level13",
    "level14", "level15",
];

/// Every class name a spec may use, for error messages.
pub const LINK_CLASS_NAMES: &str = "injection, local, global, row, column, dim0..dim15, level0..level15";

impl LinkClass {
    pub fn name(self) -> &'static str {
        match self {
            LinkClass::Dimension(d) => DIMENSION_NAMES[d as usize],
            LinkClass::Local => "local",
            LinkClass::Global => "global",
            LinkClass::Row => "row",
            LinkClass::Column => "column",
            LinkClass::Level(l) => LEVEL_NAMES[l as usize],
            LinkClass::Injection => "injection",
        }
    }

    pub fn from_name(name: &str) -> Option<LinkClass> {
        let indexed = |names: &[&str; MAX_INDEXED]| names.iter().position(|&n| n == name).map(|i| i as u8);
        match name {
            "local" => Some(LinkClass::Local),
            "global" => Some(LinkClass::Global),
            "row" => Some(LinkClass::Row),
            "column" => Some(LinkClass::Column),
            "injection" => Some(LinkClass::Injection),
            _ => indexed(&DIMENSION_NAMES).map(LinkClass::Dimension).or_else(|| indexed(&LEVEL_NAMES).map(LinkClass::Level)),
        }
    }

    /// Class of dimension `d` (topologies have at most 16 dimensions).
    pub fn dimension(d: usize) -> LinkClass {
        debug_assert!(d < MAX_INDEXED);
        LinkClass::Dimension(d as u8)
    }

    /// Class of the links between fat-tree levels `l` and `l + 1`.
    pub fn level(l: usize) -> LinkClass {
        debug_assert!(l < MAX_INDEXED);
        LinkClass::Level(l as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let mut all = vec![LinkClass::Local, LinkClass::Global, LinkClass::Row, LinkClass::Column, LinkClass::Injection];
        all.extend((0..MAX_INDEXED).map(LinkClass::dimension));
        all.extend((0..MAX_INDEXED).map(LinkClass::level));
        for c in all {
            assert_eq!(LinkClass::from_name(c.name()), Some(c), "{}", c.name());
        }
        assert_eq!(LinkClass::from_name("dim16"), None);
        assert_eq!(LinkClass::from_name("up"), None);
    }
}
