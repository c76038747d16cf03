//! Slim Fly: the MMS graph against its definition (size, degree, diameter 2 by breadth-first
//! search, distances), minimal routes as short as the graph allows, Valiant within twice the
//! diameter, the hop ladder deadlock-free at saturation, and bad keys named.
use crate::common;

use hopsim_core::routing::{self, CandidateBuf, IdleNetwork, RouteCtx, RouteState, Rng};
use hopsim_core::topology::{self, Topology};
use hopsim_core::{spec, topology_json};
use rand::SeedableRng;

fn spec_of(topo: &str, extra: &str) -> spec::Validated {
    spec::from_toml_str(&format!("[topology]\nkind = \"slim_fly\"\n{topo}\n{extra}\n[traffic]\nload = 0.1\n")).unwrap_or_else(|e| panic!("{e}"))
}

fn bfs(topo: &dyn Topology, src: usize) -> Vec<usize> {
    let mut dist = vec![usize::MAX; topo.num_switches()];
    dist[src] = 0;
    let mut queue = std::collections::VecDeque::from([src]);
    while let Some(s) = queue.pop_front() {
        for p in 0..topo.network_ports(s) {
            let t = topo.neighbour(s, p).expect("every Slim Fly port is connected").switch as usize;
            if dist[t] == usize::MAX {
                dist[t] = dist[s] + 1;
                queue.push_back(t);
            }
        }
    }
    dist
}

#[test]
fn mms_graphs_have_their_size_degree_and_diameter_two() {
    // q = 4w + δ: 2q^2 switches of (3q - δ)/2 network ports; servers default to half of them.
    for (q, ports) in [(3usize, 5usize), (5, 7), (7, 11), (11, 17), (13, 19)] {
        let s = spec_of(&format!("q = {q}"), "");
        let facts: serde_json::Value = serde_json::from_str(&topology_json(&serde_json::to_string(&s).unwrap(), None).unwrap()).unwrap();
        assert_eq!(facts["wiring_ok"], true, "q = {q}: {}", facts["wiring"]);
        assert_eq!(facts["switches"], 2 * q * q, "q = {q}");
        assert_eq!(facts["links"], 2 * q * q * ports / 2, "q = {q}");
        assert_eq!(facts["radix"], ports + ports.div_ceil(2), "q = {q}");
        let topo = topology::build(&s).unwrap();
        let mut diameter = 0;
        for src in 0..topo.num_switches() {
            assert_eq!(topo.network_ports(src), ports);
            let dist = bfs(topo.as_ref(), src);
            for (dst, &d) in dist.iter().enumerate() {
                assert_eq!(topo.distance(src, dst), d, "q = {q}: {src} -> {dst}");
                diameter = diameter.max(d);
            }
        }
        assert_eq!((diameter, topo.diameter()), (2, 2), "q = {q}");
    }
}

/// Walk a packet from `src` to `dst` as the engine does; returns its hops.
fn walk(topo: &dyn Topology, algo: &str, src: usize, dst: usize, rng: &mut Rng) -> usize {
    let s = spec_of("q = 5", &format!("[router]\nvcs = 4\n[routing]\nalgorithm = \"{algo}\""));
    let t = topology::build(&s).unwrap();
    let r = routing::build(&s, &t).unwrap_or_else(|e| panic!("{e}"));
    let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
    r.on_inject(&mut st, rng);
    let (mut cur, mut hops) = (src, 0);
    let mut out = CandidateBuf::default();
    while cur != dst {
        r.route(&mut RouteCtx { switch: cur, rng, congestion: &IdleNetwork }, &mut st, &mut out.out());
        let c = out.as_slice()[0];
        r.on_hop(&mut st, cur, &c.hop);
        cur = topo.neighbour(cur, c.hop.port as usize).unwrap().switch as usize;
        hops += 1;
        assert!(hops <= 2 * topo.diameter(), "{algo}: {src} -> {dst} longer than twice the diameter");
    }
    hops
}

#[test]
fn minimal_routes_are_shortest_and_valiant_within_twice_the_diameter() {
    let topo = topology::build(&spec_of("q = 5", "")).unwrap();
    let mut rng = Rng::seed_from_u64(7);
    let n = topo.num_switches();
    let mut longer = 0;
    for src in 0..n {
        for dst in 0..n {
            assert_eq!(walk(topo.as_ref(), "minimal", src, dst, &mut rng), topo.distance(src, dst), "{src} -> {dst}");
            if src != dst && walk(topo.as_ref(), "valiant", src, dst, &mut rng) > topo.distance(src, dst) {
                longer += 1;
            }
        }
    }
    assert!(longer > n * (n - 1) / 2, "Valiant should detour most packets, detoured {longer}");
}

#[test]
fn the_hop_ladder_keeps_saturated_valiant_and_minimal_deadlock_free() {
    for (algo, vcs, most) in [("minimal", 2, 2), ("valiant", 4, 4)] {
        let r = common::run(&format!(
            "[topology]\nkind = \"slim_fly\"\nq = 5\nservers_per_switch = 4\n[router]\nvcs = {vcs}\n[routing]\nalgorithm = \"{algo}\"\n\
             [traffic]\npattern = \"uniform\"\nload = 1.0\n[run]\nwarmup = 1000\ncycles = 5000\nwatchdog = 3000\n"
        ));
        assert!(!r.metrics.deadlock, "{algo}: deadlock at {}", r.metrics.deadlock_where);
        assert!(r.metrics.accepted_load > 0.2, "{algo}: accepted {}", r.metrics.accepted_load);
        assert!(r.metrics.hops_max <= most, "{algo}: {} hops", r.metrics.hops_max);
    }
}

#[test]
fn bad_keys_and_unsound_policies_are_named() {
    let err = |topo: &str, extra: &str| {
        spec::from_toml_str(&format!("[topology]\nkind = \"slim_fly\"\n{topo}\n{extra}\n[traffic]\nload = 0.1\n"))
            .and_then(|s| hopsim_core::engine::Simulation::check(&s).map(|_| ()))
            .expect_err("refused")
            .to_string()
    };
    assert!(err("q = 9", "").contains("topology.q"), "not prime");
    assert!(err("q = 47", "").contains("topology.q"), "too large");
    assert!(err("", "").contains("topology.q"), "missing");
    assert!(err("q = \"five\"", "").contains("topology.q"), "wrong type");
    assert!(err("q = 5\ndims = [4]", "").contains("topology.dims"), "another kind's key");
    assert!(err("q = 5", "[routing]\nalgorithm = \"ugal_l\"").contains("routing.algorithm"));
    assert!(err("q = 5", "[routing]\nalgorithm = \"minimal\"\nvc_policy = \"min_first\"").contains("routing.vc_policy"));
    assert!(err("q = 5", "[routing]\nalgorithm = \"valiant\"\n[router]\nvcs = 2").contains("vcs"));
}
