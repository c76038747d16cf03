//! `kind = "graph"`: a network read from a file. The Slim Fly's wiring written out as an
//! edge list is the same network to every routing (its distances, its runs' hop counts and
//! throughput); minimal, all-shortest minimal, Valiant and UGAL-L on it are deadlock-free at
//! saturation with the hop ladder `auto` picks; a graph that needs more VCs says how many.
use crate::common;
use hopsim_core::{spec, topology};

/// The wiring of `kind` (a `[topology]` body) as an edge list, one line per link, its class
/// named, and the path it was written to.
fn write_wiring(topo_toml: &str, name: &str) -> String {
    let s = spec::from_toml_str(&format!("[topology]\n{topo_toml}\n[traffic]\nload = 0.1\n")).unwrap();
    let t = topology::build(&s).unwrap();
    let mut text = String::from("# written from the wiring\n");
    for a in 0..t.num_switches() {
        for p in 0..t.network_ports(a) {
            let peer = t.neighbour(a, p).unwrap();
            let b = peer.switch as usize;
            if a < b {
                text += &format!("{a} {b} {}\n", t.link_class(a, p).name());
            }
        }
    }
    let dir = std::env::temp_dir().join(format!("hopsim-graph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

const SLIM_FLY: &str = "kind = \"slim_fly\"\nq = 5\nservers_per_switch = 3";

fn graph_of_slim_fly() -> String {
    format!("kind = \"graph\"\nfile = \"{}\"\nservers_per_switch = 3", write_wiring(SLIM_FLY, "slim-fly-5.txt"))
}

fn run(topo: &str, routing: &str, traffic: &str, load: f64) -> hopsim_core::RunResult {
    common::run(&format!(
        "[topology]\n{topo}\n[router]\nvcs = 6\n[routing]\n{routing}\n[traffic]\n{traffic}\nload = {load}\n[run]\nwarmup = 2000\ncycles = 6000\nwatchdog = 3000\nseed = 4\n"
    ))
}

#[test]
fn the_slim_flys_wiring_from_a_file_is_the_same_network() {
    let as_file = graph_of_slim_fly();
    let (a, b) = (spec::from_toml_str(&format!("[topology]\n{SLIM_FLY}\n[traffic]\nload = 0.1\n")).unwrap(), spec::from_toml_str(&format!("[topology]\n{as_file}\n[traffic]\nload = 0.1\n")).unwrap());
    let (sf, g) = (topology::build(&a).unwrap(), topology::build(&b).unwrap());
    assert_eq!((g.num_switches(), g.diameter()), (sf.num_switches(), sf.diameter()));
    for x in 0..sf.num_switches() {
        assert_eq!(g.network_ports(x), sf.network_ports(x));
        for y in 0..sf.num_switches() {
            assert_eq!(g.distance(x, y), sf.distance(x, y), "{x} -> {y}");
        }
    }
    assert_eq!(topology::check_wiring(g.as_ref()), topology::check_wiring(sf.as_ref()));
    // Minimal routing takes a shortest path on both: the same mean hop count, and at a load
    // both carry, all of it.
    let routing = "algorithm = \"minimal\"";
    let (m_sf, m_g) = (run(SLIM_FLY, routing, "pattern = \"uniform\"", 0.3).metrics, run(&as_file, routing, "pattern = \"uniform\"", 0.3).metrics);
    assert!((m_sf.hops_mean - m_g.hops_mean).abs() < 0.02, "{} against {}", m_g.hops_mean, m_sf.hops_mean);
    assert!((m_g.accepted_load - 0.3).abs() < 0.01 && (m_sf.accepted_load - 0.3).abs() < 0.01);
}

#[test]
fn every_routing_on_a_graph_is_deadlock_free_at_saturation_with_the_ladder() {
    let topo = graph_of_slim_fly();
    for routing in ["algorithm = \"minimal\"", "algorithm = \"minimal\"\nminimal_paths = \"all_shortest\"", "algorithm = \"valiant\"", "algorithm = \"ugal_l\""] {
        for traffic in ["pattern = \"uniform\"", "pattern = \"random_permutation\""] {
            let r = run(&topo, routing, traffic, 1.0);
            assert!(!r.metrics.deadlock, "{routing}, {traffic}: {}", r.metrics.deadlock_where);
            assert!(r.metrics.accepted_load > 0.1, "{routing}, {traffic}: accepted {}", r.metrics.accepted_load);
        }
    }
}

#[test]
fn a_graph_refuses_a_policy_that_is_not_sound_and_too_few_vcs() {
    let topo = graph_of_slim_fly();
    let e = common::refused(&format!("[topology]\n{topo}\n[router]\nvcs = 4\n[routing]\nalgorithm = \"valiant\"\nvc_policy = \"min_last\"\n[traffic]\nload = 0.1\n"));
    assert!(e.to_string().starts_with("routing.vc_policy = \"min_last\"") && e.to_string().contains("ladder"), "{e}");
    let e = common::refused(&format!("[topology]\n{topo}\n[router]\nvcs = 2\n[routing]\nalgorithm = \"valiant\"\n[traffic]\nload = 0.1\n"));
    assert!(e.to_string().contains("needs at least 4 VCs"), "{e}");
    let e = common::refused("[topology]\nkind = \"graph\"\nfile = \"/nonexistent/g.txt\"\n[traffic]\nload = 0.1\n");
    assert!(e.to_string().starts_with("topology.file = \"/nonexistent/g.txt\": cannot read it"), "{e}");
}

/// A link's own latency (`u v class latency`) holds its flits and credits that long: on a
/// path of two switches a packet's zero-load latency grows by the difference, and the
/// engine's formula agrees with the run.
#[test]
fn a_links_own_latency_is_what_its_flits_take() {
    let dir = std::env::temp_dir().join(format!("hopsim-graph-lat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run_with = |line: &str| {
        let path = dir.join(format!("pair-{}.txt", line.len()));
        std::fs::write(&path, format!("{line}\n")).unwrap();
        common::run(&format!(
            "[topology]\nkind = \"graph\"\nfile = \"{}\"\nservers_per_switch = 1\n[link]\nlatency = 2\n[routing]\nalgorithm = \"minimal\"\n[traffic]\nload = 0.005\n[run]\nwarmup = 2000\ncycles = 40000\nseed = 1\n",
            path.display()
        ))
        .metrics
    };
    let (plain, long) = (run_with("0 1"), run_with("0 1 local 60"));
    // Every packet crosses the one link once: 58 cycles more.
    assert!((long.packet_latency_mean - plain.packet_latency_mean - 58.0).abs() < 0.5, "{} against {}", long.packet_latency_mean, plain.packet_latency_mean);
    assert!((long.packet_latency_mean - long.zero_load_latency).abs() < 0.5, "run {} against the formula {}", long.packet_latency_mean, long.zero_load_latency);
}

/// Every shortest next hop is a candidate however many there are: from a leaf of a
/// leaf-spine graph with 12 spines, 12 (more than a packet holds itself), and a run spreads
/// over all of them.
#[test]
fn all_shortest_offers_every_shortest_next_hop_beyond_what_a_packet_holds() {
    use hopsim_core::routing::{self, CandidateBuf, IdleNetwork, RouteCtx, RouteState, Rng};
    use rand::SeedableRng;
    let dir = std::env::temp_dir().join(format!("hopsim-graph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("leaf-spine-12.txt");
    let edges: String = (0..4).flat_map(|leaf| (4..16).map(move |spine| format!("{leaf} {spine}\n"))).collect();
    std::fs::write(&path, edges).unwrap();
    let topo_toml = format!("kind = \"graph\"\nfile = \"{}\"\nservers_per_switch = 2", path.display());
    let routing_toml = "algorithm = \"minimal\"\nminimal_paths = \"all_shortest\"";
    let s = spec::from_toml_str(&format!("[topology]\n{topo_toml}\n[routing]\n{routing_toml}\n[traffic]\nload = 0.1\n")).unwrap();
    let t = topology::build(&s).unwrap();
    assert_eq!(routing::max_candidates(&s, t.as_ref()), 12);
    let r = routing::build(&s, &t).unwrap();
    let mut st = RouteState { src_switch: 0, dst_switch: 1, ..Default::default() };
    let mut out = CandidateBuf::default();
    r.route(&mut RouteCtx { switch: 0, rng: &mut Rng::seed_from_u64(1), congestion: &IdleNetwork }, &mut st, &mut out.out());
    assert_eq!(out.len(), 12);
    let m = run(&topo_toml, routing_toml, "pattern = \"uniform\"", 0.5);
    let links = &m.links;
    let from_leaf_0: Vec<f64> = (0..links.load.len()).filter(|&i| links.switch[i] == 0 && links.to_switch[i] >= 4).map(|i| links.load[i]).collect();
    assert_eq!(from_leaf_0.len(), 12);
    assert!(from_leaf_0.iter().all(|&l| l > 0.02), "{from_leaf_0:?}");
}

/// A head's candidates are counted in a byte: every shortest next hop on a graph whose
/// busiest switch has more than 255 ports is refused up front, naming the key.
#[test]
fn all_shortest_on_a_switch_of_more_than_255_ports_is_refused() {
    let dir = std::env::temp_dir().join(format!("hopsim-graph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("star-300.txt");
    std::fs::write(&path, (1..=300).map(|leaf| format!("0 {leaf}\n")).collect::<String>()).unwrap();
    let toml = format!("[topology]\nkind = \"graph\"\nfile = \"{}\"\n[routing]\nalgorithm = \"minimal\"\nminimal_paths = \"all_shortest\"\n[traffic]\nload = 0.1\n", path.display());
    let e = hopsim_core::simulate(&spec::from_toml_str(&toml).unwrap()).err().expect("refused").to_string();
    assert!(e.contains("routing.algorithm") && e.contains("300"), "{e}");
}
