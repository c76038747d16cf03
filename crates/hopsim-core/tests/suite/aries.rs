//! The Cray Aries network: sizes and link classes against the formulas, distances against a
//! breadth-first search, minimal paths walked hop by hop within the Aries hop limits, and
//! minimal routing with its `auto` VC policy deadlock-free at saturation.
use crate::common;

use hopsim_core::routing::{self, CandidateBuf, IdleNetwork, RouteCtx, RouteState, Routing, Rng};
use hopsim_core::topology::{self, LinkClass, Topology};
use hopsim_core::{spec, topology_json, vc};
use rand::{Rng as _, SeedableRng};
use std::sync::Arc;

/// (chassis, blades, column_links, global links per router h, servers p, groups g).
type Size = (usize, usize, usize, usize, usize, usize);

fn aries(size: Size) -> String {
    let (c, b, m, h, p, g) = size;
    format!("kind = \"aries\"\nchassis = {c}\nblades = {b}\ncolumn_links = {m}\nglobal_links_per_switch = {h}\nservers_per_switch = {p}\ngroups = {g}")
}

fn spec_of(topo: &str, extra: &str) -> spec::Validated {
    spec::from_toml_str(&format!("[topology]\n{topo}\n{extra}\n[traffic]\nload = 0.1\n")).unwrap_or_else(|e| panic!("{e}"))
}

const SIZES: [Size; 6] = [
    (2, 3, 1, 1, 1, 3),  // small: a bundle of 3 links per pair
    (2, 3, 2, 2, 2, 13), // the most groups 2 x 3 routers with h = 2 can join: one link per pair
    (3, 2, 3, 1, 1, 4),  // 6 global ports per group over 3 others: bundles of 2
    (1, 4, 3, 2, 1, 5),  // one chassis: rows only
    (6, 16, 3, 10, 4, 7), // the Cray XC group, 7 groups: bundles of 160 links
    (6, 8, 3, 4, 4, 6),  // examples/aries-1k.toml
];

#[test]
fn sizes_and_link_classes_match_the_formulas() {
    for size in SIZES {
        let (c, b, m, h, p, g) = size;
        let s = spec_of(&aries(size), "");
        let f: serde_json::Value = serde_json::from_str(&topology_json(&serde_json::to_string(&s).unwrap(), None).unwrap()).unwrap();
        let a = c * b;
        let bundle = a * h / (g - 1);
        let (row, column, global) = (g * c * b * (b - 1) / 2, g * b * c * (c - 1) / 2 * m, g * (g - 1) / 2 * bundle);
        let local_diameter = usize::from(c > 1) + usize::from(b > 1);
        assert_eq!(f["wiring_ok"], true, "{size:?}: {}", f["wiring"]);
        assert_eq!(f["switches"], g * a, "{size:?}");
        assert_eq!(f["servers"], g * a * p, "{size:?}");
        assert_eq!(f["radix"], (b - 1) + (c - 1) * m + h + p, "{size:?}");
        assert_eq!(f["links"], row + column + global, "{size:?}");
        assert_eq!(f["diameter"], 2 * local_diameter + 1, "{size:?}");
        let classes = &f["link_classes"];
        let count = |name: &str| classes.get(name).and_then(|v| v.as_u64()).unwrap_or(0) as usize;
        assert_eq!((count("row"), count("column"), count("global"), count("injection")), (row, column, global, g * a * p), "{size:?}: {classes}");
        // Every global port beyond whole bundles stays unconnected, and only those.
        let topo = topology::build(&s).unwrap();
        let unconnected: usize = (0..topo.num_switches()).map(|sw| (0..topo.network_ports(sw)).filter(|&q| topo.neighbour(sw, q).is_none()).count()).sum();
        assert_eq!(unconnected, g * (a * h - bundle * (g - 1)), "{size:?}");
    }
    // The default group: 6 chassis x 16 blades, 3 column links, 10 global links and 4
    // servers per router.
    let f = topology::build(&spec_of("kind = \"aries\"\ngroups = 7", "")).unwrap();
    assert_eq!((f.num_switches(), f.network_ports(0), f.servers_at(0), f.diameter()), (7 * 96, 15 + 15 + 10, 4, 5));
    // Other topologies keep one server per switch by default.
    let d = topology::build(&spec_of("kind = \"dragonfly\"\nswitches_per_group = 4\nglobal_links_per_switch = 2", "")).unwrap();
    assert_eq!(d.servers_at(0), 1);
}

#[test]
fn links_join_what_their_class_says() {
    for size in SIZES {
        let (_, b, _, _, _, _) = size;
        let topo = topology::build(&spec_of(&aries(size), "")).unwrap();
        let a = topo.num_switches() / topo.groups();
        for s in 0..topo.num_switches() {
            for q in 0..topo.network_ports(s) {
                let Some(peer) = topo.neighbour(s, q) else { continue };
                let t = peer.switch as usize;
                let class = topo.link_class(s, q);
                assert_eq!(class, topo.link_class(t, peer.port as usize), "{size:?}: both ends of a link have one class");
                let (same_group, i, j) = (s / a == t / a, s % a, t % a);
                let expected = if !same_group {
                    LinkClass::Global
                } else if i / b == j / b {
                    LinkClass::Row
                } else {
                    assert_eq!(i % b, j % b, "{size:?}: a column link joins one blade position");
                    LinkClass::Column
                };
                assert_eq!(class, expected, "{size:?}: switch {s} port {q} -> {t}");
            }
        }
    }
}

/// Distances against a breadth-first search over paths with at most one global link.
#[test]
fn distance_is_the_shortest_path_with_one_global_link() {
    for size in &SIZES[..4] {
        let topo = topology::build(&spec_of(&aries(*size), "")).unwrap();
        let n = topo.num_switches();
        for src in 0..n {
            for (dst, bfs) in common::one_global_distances(topo.as_ref(), src).into_iter().enumerate() {
                assert_eq!(topo.distance(src, dst), bfs, "{size:?}: {src} -> {dst}");
            }
        }
    }
}

fn parts(topo: &str, algo: &str, vcs: usize) -> (Arc<dyn Topology>, Arc<dyn Routing>, Arc<dyn vc::VcPolicy>) {
    let s = spec_of(topo, &format!("[router]\nvcs = {vcs}\n[routing]\nalgorithm = \"{algo}\""));
    let t = topology::build(&s).unwrap();
    let r = routing::build(&s, &t).unwrap_or_else(|e| panic!("{e}"));
    let v = hopsim_core::deadlock_freedom::build_vc_policy(&s, &t, r.as_ref()).unwrap_or_else(|e| panic!("{e}"));
    (t, r, v)
}

/// One packet walked as the engine does: (switches visited, global hops, VC class per hop).
fn walk(topo: &dyn Topology, r: &dyn Routing, v: &dyn vc::VcPolicy, src: usize, dst: usize, rng: &mut Rng) -> (Vec<usize>, usize, Vec<u32>) {
    let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
    r.on_inject(&mut st, rng);
    let (mut cur, mut path, mut globals, mut vcs) = (src, vec![src], 0, Vec::new());
    let mut out = CandidateBuf::default();
    while cur != dst {
        r.route(&mut RouteCtx { switch: cur, rng, congestion: &IdleNetwork }, &mut st, &mut out.out());
        assert_eq!(out.len(), 1, "minimal and Valiant give one hop");
        let hop = out.as_slice()[0].hop;
        let mask = v.allowed(&st, &hop) & v.all();
        assert_ne!(mask, 0, "{}: a hop with no VC", v.name());
        vcs.push(mask.trailing_zeros());
        let class = topo.link_class(cur, hop.port as usize);
        assert_eq!(hop.class == 1, class == LinkClass::Global, "Hop::class is 1 exactly on global links");
        let next = topo.neighbour(cur, hop.port as usize).expect("connected port").switch as usize;
        r.on_hop(&mut st, cur, &hop);
        globals += hop.class as usize;
        cur = next;
        path.push(cur);
        assert!(path.len() <= 2 * topo.diameter() + 1, "{}: path {path:?} too long", r.name());
    }
    (path, globals, vcs)
}

#[test]
fn minimal_paths_keep_the_aries_hop_limits() {
    let mut rng = Rng::seed_from_u64(26);
    for size in SIZES {
        let (t, r, v) = parts(&aries(size), "minimal", 5);
        let n = t.num_switches();
        let a = n / t.groups();
        let ar = topology::concrete::<topology::Aries>(&*t).expect("an aries network");
        let mut used = std::collections::BTreeSet::new();
        for _ in 0..3000 {
            let (src, dst) = (rng.gen_range(0..n), rng.gen_range(0..n));
            let (path, globals, vcs) = walk(t.as_ref(), r.as_ref(), v.as_ref(), src, dst, &mut rng);
            assert_eq!(*path.last().unwrap(), dst);
            let hops = path.len() - 1;
            if src / a == dst / a {
                // Inside a group: one hop per differing coordinate (chassis, blade), at most 2.
                assert_eq!((globals, hops), (0, ar.local_distance(src % a, dst % a)), "{size:?}: {path:?}");
                assert!(hops <= 2);
            } else {
                assert_eq!(globals, 1, "{size:?}: {path:?}");
                assert!(hops <= 5 && hops <= t.diameter(), "{size:?}: {path:?}");
                // Shortest to the link taken, over it, shortest from where it lands.
                let k = path.windows(2).position(|w| w[0] / a != w[1] / a).unwrap();
                let (out, arrive) = (path[k], path[k + 1]);
                assert!(ar.gateways(src / a, dst / a).iter().any(|&(i, _)| i as usize == out % a), "{size:?}: leaves from a gateway");
                assert_eq!(k, ar.local_distance(src % a, out % a), "{size:?}: {path:?}");
                assert_eq!(hops - k - 1, ar.local_distance(arrive % a, dst % a), "{size:?}: {path:?}");
                if src / a == 0 && dst / a == 1 {
                    used.insert(out);
                }
            }
            // ladder_reuse: the VC class never exceeds the hop index.
            assert!(vcs.iter().enumerate().all(|(i, &c)| c as usize <= i), "{vcs:?}");
        }
        // Packets spread over the bundle: every router with a link from group 0 to 1 was used.
        let gateways: std::collections::BTreeSet<usize> = ar.gateways(0, 1).iter().map(|&(i, _)| i as usize).collect();
        if ar.bundle <= 16 {
            assert_eq!(used, gateways, "{size:?}");
        }
    }
}

#[test]
fn valiant_paths_are_two_minimal_phases_within_twice_the_diameter() {
    let mut rng = Rng::seed_from_u64(5);
    for size in &SIZES[..3] {
        let (t, r, v) = parts(&aries(*size), "valiant", 10);
        assert_eq!(v.name(), "ladder");
        let n = t.num_switches();
        let mut longest = 0;
        for _ in 0..3000 {
            let (src, dst) = (rng.gen_range(0..n), rng.gen_range(0..n));
            let (path, globals, vcs) = walk(t.as_ref(), r.as_ref(), v.as_ref(), src, dst, &mut rng);
            assert!(globals <= 2, "{size:?}: {path:?}");
            // Ladder: hop i on VC class i exactly.
            assert!(vcs.iter().enumerate().all(|(i, &c)| c as usize == i), "{vcs:?}");
            longest = longest.max(path.len() - 1);
        }
        assert!(longest <= 2 * t.diameter() && longest > t.diameter(), "{size:?}: longest {longest}");
    }
}

fn saturated(size: Size, algo: &str, vcs: usize, pattern: &str, links: &str) -> hopsim_core::RunResult {
    common::run(&format!(
        "[topology]\n{}\n[link]\n{links}\n[router]\nvcs = {vcs}\ninput_buffer = 1\noutput_buffer = 1\n[routing]\nalgorithm = \"{algo}\"\n[traffic]\npattern = \"{pattern}\"\nload = 1.0\n[run]\nwarmup = 0\ncycles = 20000\nwatchdog = 2000\n",
        aries(size)
    ))
}

#[test]
fn minimal_and_valiant_with_their_auto_policies_survive_saturation() {
    for (size, algo, vcs) in [(SIZES[0], "minimal", 5), (SIZES[2], "minimal", 5), ((2, 4, 3, 2, 2, 3), "minimal", 6), (SIZES[0], "valiant", 10)] {
        for pattern in ["uniform", "adv"] {
            // Also with the paper's slower, longer optical global links.
            for links in ["", "gbytes_per_s = 5.25\n[link.global]\nlatency = 30\ngbytes_per_s = 4.7"] {
                let m = saturated(size, algo, vcs, pattern, links).metrics;
                assert!(!m.deadlock, "{size:?} {algo} {pattern} {links}: {}", m.deadlock_where);
                assert!(m.accepted_load > 0.05, "{size:?} {algo} {pattern} {links}: accepted {}", m.accepted_load);
            }
        }
    }
}

#[test]
fn bad_aries_keys_are_named() {
    let err = |topo: &str, extra: &str| {
        let s = spec_of(topo, extra);
        hopsim_core::simulate(&s).err().map(|e| e.to_string()).unwrap_or_default()
    };
    assert!(err("kind = \"aries\"\nchassis = 2\nblades = 2", "").contains("topology.groups"));
    let e = err("kind = \"aries\"\nchassis = 2\nblades = 2\nglobal_links_per_switch = 1\ngroups = 6", "");
    assert!(e.contains("topology.groups") && e.contains("5"), "{e}");
    assert!(err("kind = \"aries\"\ngroups = 3\nglobal_links_per_switch = 11", "").contains("topology.global_links_per_switch"));
    assert!(err("kind = \"aries\"\ngroups = 3\nswitches_per_group = 4", "").contains("topology.switches_per_group"));
    assert!(err("kind = \"dragonfly\"\nswitches_per_group = 4\nglobal_links_per_switch = 2\nchassis = 2", "").contains("topology.chassis"));
    assert!(err("kind = \"torus\"\ndims = [4, 4]\ncolumn_links = 2", "").contains("topology.column_links"));
    // Minimal routing on Aries needs a VC per hop of its 5-hop paths.
    let e = err("kind = \"aries\"\nchassis = 2\nblades = 2\ngroups = 3", "[router]\nvcs = 4\n[routing]\nalgorithm = \"minimal\"");
    assert!(e.contains("router.vcs") && e.contains("5"), "{e}");
    let e = err("kind = \"aries\"\nchassis = 2\nblades = 2\ngroups = 3", "[router]\nvcs = 6\n[routing]\nalgorithm = \"minimal\"\nvc_policy = \"min_first\"");
    assert!(e.contains("routing.vc_policy"), "{e}");
}
