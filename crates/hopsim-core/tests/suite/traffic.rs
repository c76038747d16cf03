//! Traffic patterns send where their definitions say.
use hopsim_core::routing::Rng;
use hopsim_core::topology::{self, ServerMap};
use hopsim_core::traffic;
use rand::SeedableRng;

fn build(dims: &str, servers: usize, traffic_table: &str) -> (traffic::Traffic, ServerMap, std::sync::Arc<dyn topology::Topology>) {
    let s = hopsim_core::spec::from_toml_str(&format!(
        "[topology]\nkind = \"torus\"\ndims = {dims}\nservers_per_switch = {servers}\n[traffic]\n{traffic_table}\n"
    ))
    .unwrap();
    let topo = topology::build(&s).unwrap();
    let map = ServerMap::new(topo.as_ref());
    (traffic::build(&s, topo.as_ref(), &map).unwrap(), map, topo)
}

#[test]
fn random_pairs_is_a_perfect_matching_of_the_active_servers() {
    let (t, map, _) = build("[10, 10, 10]", 1, "pattern = \"random_pairs\"\nload = 0.1\nactive_servers = 250");
    assert_eq!(t.active.len(), 250);
    let mut rng = Rng::seed_from_u64(1);
    let mut seen = std::collections::HashSet::new();
    for s in t.active.iter() {
        let d = t.pattern.destination(s as usize, &mut rng);
        assert_ne!(d, s as usize);
        assert!(t.active.iter().any(|a| a == d as u32), "partner must be active");
        assert_eq!(t.pattern.destination(d, &mut rng), s as usize, "pairs are symmetric");
        assert!(seen.insert(d), "each server is someone's partner once");
    }
    assert!(map.num_servers() == 1000);
}

#[test]
fn permutations_follow_their_coordinates() {
    let mut rng = Rng::seed_from_u64(1);
    let (t, map, topo) = build("[8, 8]", 2, "pattern = \"shift\"\nshift = [7, -1]\nload = 0.1");
    let src = map.server(topo.cartesian().unwrap().switch_at(&[3, 0]), 1);
    let dst = t.pattern.destination(src, &mut rng);
    assert_eq!(topo.coordinates(map.switch_of(dst)), vec![2, 7]);
    assert_eq!(map.local_index(dst), 1);
    for (pattern, from, to) in [("transpose", [1, 5], [5, 1]), ("bit_complement", [1, 5], [6, 2]), ("tornado", [1, 5], [4, 0])] {
        let (t, map, topo) = build("[8, 8]", 1, &format!("pattern = \"{pattern}\"\nload = 0.1"));
        let src = map.server(topo.cartesian().unwrap().switch_at(&from), 0);
        let dst = t.pattern.destination(src, &mut rng);
        assert_eq!(topo.coordinates(map.switch_of(dst)), to.to_vec(), "{pattern}");
    }
}

#[test]
fn uniform_never_sends_to_itself_and_covers_everyone() {
    let (t, _, _) = build("[4, 4]", 1, "load = 0.1");
    let mut rng = Rng::seed_from_u64(3);
    let mut counts = [0u32; 16];
    for _ in 0..16_000 {
        let d = t.pattern.destination(5, &mut rng);
        assert_ne!(d, 5);
        counts[d] += 1;
    }
    assert!(counts.iter().enumerate().filter(|(i, _)| *i != 5).all(|(_, &c)| (800..1350).contains(&c)), "{counts:?}");
}

#[test]
fn hotspot_sends_its_share_to_the_hot_server() {
    let (t, _, _) = build("[4, 4]", 1, "pattern = \"hotspot\"\nhotspots = [9]\nhotspot_fraction = 0.5\nload = 0.1");
    let mut rng = Rng::seed_from_u64(4);
    let hot = (0..10_000).filter(|_| t.pattern.destination(0, &mut rng) == 9).count() as f64 / 10_000.0;
    assert!((hot - (0.5 + 0.5 / 15.0)).abs() < 0.03, "{hot}");
}

/// `workload.kind = "periodic"`: every server starts a message every `phits / load` cycles,
/// all in step. On a ring under `shift = [1]` no two packets ever meet, so every packet
/// takes the zero-load latency exactly and the network accepts the offered load to the
/// message; a fractional interval (16 / 0.3 cycles) keeps its exact long-run rate.
#[test]
fn periodic_sources_send_at_fixed_intervals_in_step() {
    for load in [0.25, 0.3] {
        let r = crate::common::run(&format!(
            "[topology]\nkind = \"torus\"\ndims = [8]\n[packet]\nphits = 16\n[workload]\nkind = \"periodic\"\n[traffic]\npattern = \"shift\"\nshift = [1]\nload = {load}\n[run]\nwarmup = 1000\ncycles = 48000\nseed = 1\n"
        ));
        let m = &r.metrics;
        assert!((m.accepted_load - load).abs() < 0.002, "load {load}: accepted {}", m.accepted_load);
        assert_eq!(m.packet_latency_max, m.packet_latency_p50, "load {load}: latencies vary");
        assert!((m.packet_latency_mean - m.zero_load_latency).abs() < 1e-9, "load {load}: {} against {}", m.packet_latency_mean, m.zero_load_latency);
    }
    let e = crate::common::refused("[topology]\nkind = \"torus\"\ndims = [8]\n[workload]\nkind = \"periodic\"\n[traffic]\nload = 0.2\n[traffic.burst]\npattern = \"uniform\"\nload = 0.5\nstart = 10\ncycles = 10\n");
    assert!(e.to_string().starts_with("traffic.burst"), "{e}");
}
