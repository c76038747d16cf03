//! Low-diameter networks: HyperX, dragonfly, dragonfly+, fat-tree. Sizes against the formulas
//! and the VC-management paper's Table I; minimal routes walked hop by hop; Valiant paths
//! within twice the diameter; every VC policy deadlock-free under saturated adverse traffic.
use crate::common::{self, fingerprint};

use hopsim_core::routing::{self, CandidateBuf, IdleNetwork, RouteCtx, RouteState, Routing, Rng};
use hopsim_core::topology::{self, Topology};
use hopsim_core::{spec, topology_json, vc};
use rand::{Rng as _, SeedableRng};
use std::sync::Arc;

const HX2: &str = "kind = \"hyperx\"\ndims = [4, 4]\nservers_per_switch = 4";
const DF: &str = "kind = \"dragonfly\"\nswitches_per_group = 4\nglobal_links_per_switch = 2\nservers_per_switch = 2";
const DFP: &str = "kind = \"dragonfly_plus\"\nleaves_per_group = 2\nspines_per_group = 2\nservers_per_switch = 2";

fn spec_of(topo: &str, extra: &str) -> spec::Validated {
    spec::from_toml_str(&format!("[topology]\n{topo}\n{extra}\n[traffic]\nload = 0.1\n")).unwrap_or_else(|e| panic!("{e}"))
}

fn facts(topo: &str) -> serde_json::Value {
    let s = spec_of(topo, "");
    serde_json::from_str(&topology_json(&serde_json::to_string(&s).unwrap(), None).unwrap()).unwrap()
}

#[test]
fn sizes_match_the_formulas_and_table_one() {
    // (topology, switches, servers, radix, links, diameter): the paper's Table I. Its 1D
    // HyperX counts 4032 links, 64*63, i.e. both directions; we count bidirectional links.
    let cases = [
        ("kind = \"hyperx\"\ndims = [64]\nservers_per_switch = 64", 64, 4096, 127, 2016, 1),
        ("kind = \"hyperx\"\ndims = [16, 16]\nservers_per_switch = 16", 256, 4096, 46, 3840, 2),
        ("kind = \"hyperx\"\ndims = [8, 8, 8]\nservers_per_switch = 8", 512, 4096, 29, 5376, 3),
        ("kind = \"dragonfly\"\ngroups = 73\nswitches_per_group = 12\nglobal_links_per_switch = 6\nservers_per_switch = 6", 876, 5256, 23, 7446, 3),
        ("kind = \"dragonfly\"\nswitches_per_group = 12\nglobal_links_per_switch = 6\nservers_per_switch = 6\nglobal_arrangement = \"consecutive\"", 876, 5256, 23, 7446, 3),
        ("kind = \"dragonfly_plus\"\ngroups = 65\nleaves_per_group = 8\nspines_per_group = 8\nservers_per_switch = 8", 1040, 4160, 16, 6240, 3),
        ("kind = \"fat_tree\"\nk = 4\nlevels = 3\nservers_per_switch = 4", 48, 64, 8, 128, 4),
        ("kind = \"hyperx\"\ndims = [3, 5]\nservers_per_switch = 2", 15, 30, 8, 15 * 6 / 2, 2),
        ("kind = \"dragonfly\"\ngroups = 5\nswitches_per_group = 4\nglobal_links_per_switch = 2\nservers_per_switch = 2", 20, 40, 7, 5 * 6 + 10, 3),
    ];
    for (t, switches, servers, radix, links, diameter) in cases {
        let f = facts(t);
        assert_eq!(f["wiring_ok"], true, "{t}: {}", f["wiring"]);
        assert_eq!(f["switches"], switches, "{t}");
        assert_eq!(f["servers"], servers, "{t}");
        assert_eq!(f["radix"], radix, "{t}");
        assert_eq!(f["links"], links, "{t}");
        assert_eq!(f["diameter"], diameter, "{t}");
    }
}

/// Distances against a breadth-first search (restricted to at most one global link on
/// dragonflies, their notion of minimal), and the diameter over switches with servers.
#[test]
fn distance_is_exact() {
    for t in [HX2, DF, DFP, "kind = \"hyperx\"\ndims = [3, 2, 4]", "kind = \"fat_tree\"\nk = 3\nlevels = 3", "kind = \"dragonfly\"\ngroups = 6\nswitches_per_group = 3\nglobal_links_per_switch = 2\nglobal_arrangement = \"consecutive\""] {
        let topo = topology::build(&spec_of(t, "")).unwrap();
        let n = topo.num_switches();
        let mut diameter = 0;
        for src in 0..n {
            let dist = common::one_global_distances(topo.as_ref(), src);
            for (dst, &bfs) in dist.iter().enumerate() {
                assert_eq!(topo.distance(src, dst), bfs, "{t}: {src} -> {dst}");
                if topo.servers_at(src) > 0 && topo.servers_at(dst) > 0 {
                    diameter = diameter.max(bfs);
                }
            }
        }
        assert_eq!(topo.diameter(), diameter, "{t}");
    }
}

fn parts(topo: &str, algo: &str, policy: &str, vcs: usize) -> (Arc<dyn Topology>, Arc<dyn Routing>, Arc<dyn vc::VcPolicy>) {
    let s = spec_of(topo, &format!("[router]\nvcs = {vcs}\n[routing]\nalgorithm = \"{algo}\"\nvc_policy = \"{policy}\""));
    let t = topology::build(&s).unwrap();
    let r = routing::build(&s, &t).unwrap_or_else(|e| panic!("{e}"));
    let v = hopsim_core::deadlock_freedom::build_vc_policy(&s, &t, r.as_ref()).unwrap_or_else(|e| panic!("{e}"));
    (t, r, v)
}

/// Walk a packet as the engine does (random candidate, each hop learned by the routing);
/// returns the hops and the lowest allowed VC of each hop.
fn walk(topo: &dyn Topology, r: &dyn Routing, v: &dyn vc::VcPolicy, src: usize, dst: usize, rng: &mut Rng) -> (usize, Vec<u32>) {
    let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
    r.on_inject(&mut st, rng);
    assert_ne!(v.injection(&st) & v.all(), 0);
    let mut cur = src;
    let mut out = CandidateBuf::default();
    let mut vcs = Vec::new();
    while cur != dst {
        r.route(&mut RouteCtx { switch: cur, rng, congestion: &IdleNetwork }, &mut st, &mut out.out());
        assert!(out.len() > 0);
        let target = if st.valiant && st.phase == 0 { st.intermediate as usize } else { dst };
        let c = out.as_slice()[rng.gen_range(0..out.len())];
        let mask = v.allowed(&st, &c.hop) & v.all();
        assert_ne!(mask, 0, "{}: a hop with no VC", v.name());
        vcs.push(mask.trailing_zeros());
        let next = topo.neighbour(cur, c.hop.port as usize).expect("connected port").switch as usize;
        assert_eq!(topo.distance(next, target) + 1, topo.distance(cur, target), "{} on {}: {cur} -> {next} towards {target}", r.name(), topo.kind());
        r.on_hop(&mut st, cur, &c.hop);
        cur = next;
        assert!(vcs.len() <= 2 * topo.diameter(), "{}: {} hops", r.name(), vcs.len());
    }
    (vcs.len(), vcs)
}

fn hosts(topo: &dyn Topology) -> Vec<usize> {
    (0..topo.num_switches()).filter(|&s| topo.servers_at(s) > 0).collect()
}

#[test]
fn minimal_routes_are_minimal_and_within_the_diameter() {
    let mut rng = Rng::seed_from_u64(3);
    let big_df = "kind = \"dragonfly\"\ngroups = 73\nswitches_per_group = 12\nglobal_links_per_switch = 6\nservers_per_switch = 6";
    let big_dfp = "kind = \"dragonfly_plus\"\ngroups = 65\nleaves_per_group = 8\nspines_per_group = 8\nservers_per_switch = 8";
    let ft = "kind = \"fat_tree\"\nk = 4\nlevels = 3\nservers_per_switch = 4";
    for (t, algo) in [(HX2, "dor"), (HX2, "minimal"), ("kind = \"hyperx\"\ndims = [8, 8, 8]", "minimal"), (DF, "minimal"), (big_df, "minimal"), (DFP, "minimal"), (big_dfp, "minimal"), (ft, "minimal")] {
        let (topo, r, v) = parts(t, algo, "ladder", 6);
        let h = hosts(topo.as_ref());
        let pairs: Vec<(usize, usize)> = if h.len() <= 40 {
            h.iter().flat_map(|&a| h.iter().map(move |&b| (a, b))).collect()
        } else {
            (0..4000).map(|_| (h[rng.gen_range(0..h.len())], h[rng.gen_range(0..h.len())])).collect()
        };
        for (a, b) in pairs {
            let (hops, _) = walk(topo.as_ref(), r.as_ref(), v.as_ref(), a, b, &mut rng);
            assert_eq!(hops, topo.distance(a, b));
            assert!(hops <= topo.diameter());
        }
    }
}

#[test]
fn valiant_paths_are_within_twice_the_diameter_and_ladder_climbs() {
    let mut rng = Rng::seed_from_u64(5);
    for (t, vcs_ladder, vcs_2p) in [(HX2, 4, 4), ("kind = \"hyperx\"\ndims = [4, 3, 5]", 6, 6), (DF, 6, 8), (DFP, 6, 6)] {
        for (policy, vcs) in [("ladder", vcs_ladder), ("ladder_reuse", vcs_ladder), ("min_first", vcs_2p), ("min_last", vcs_2p), ("min_both", vcs_2p)] {
            let (topo, r, v) = parts(t, "valiant", policy, vcs);
            let h = hosts(topo.as_ref());
            let mut longest = 0;
            for _ in 0..3000 {
                let (a, b) = (h[rng.gen_range(0..h.len())], h[rng.gen_range(0..h.len())]);
                let (hops, vc_path) = walk(topo.as_ref(), r.as_ref(), v.as_ref(), a, b, &mut rng);
                // On dragonflies distance counts paths with one global link; a Valiant path
                // with two may be shorter.
                assert!(hops <= 2 * topo.diameter() && (topo.groups() > 0 || hops >= topo.distance(a, b)));
                longest = longest.max(hops);
                if policy == "ladder" {
                    assert!(vc_path.windows(2).all(|w| w[0] < w[1]), "{t} ladder: VCs {vc_path:?}");
                    assert!(vc_path.iter().enumerate().all(|(i, &c)| c as usize >= i * vcs / (2 * topo.diameter())));
                }
                // (On a dragonfly local and global ports have separate class layouts.)
                if policy.starts_with("min_") && topo.kind() != "dragonfly" {
                    assert!(vc_path.windows(2).all(|w| w[0] <= w[1]), "{t} {policy}: VCs {vc_path:?}");
                }
            }
            assert_eq!(longest, 2 * topo.diameter(), "{t} {policy}: some Valiant path takes 2D hops");
        }
    }
}

#[test]
fn valiant_redraw_avoids_source_and_destination() {
    let mut rng = Rng::seed_from_u64(9);
    let s = spec_of(HX2, "[router]\nvcs = 4\n[routing]\nalgorithm = \"valiant\"\nvc_policy = \"min_last\"\nvaliant_redraw = true");
    let t = topology::build(&s).unwrap();
    let r = routing::build(&s, &t).unwrap();
    let mut minimal = 0;
    for _ in 0..5000 {
        let mut st = RouteState { src_switch: rng.gen_range(0..16), dst_switch: rng.gen_range(0..16), ..Default::default() };
        r.on_inject(&mut st, &mut rng);
        assert!(st.intermediate != st.src_switch && st.intermediate != st.dst_switch);
        minimal += usize::from(!st.valiant);
    }
    assert_eq!(minimal, 0);
    // Without redraw, about 2/16 of the packets are minimal.
    let s = spec_of(HX2, "[router]\nvcs = 4\n[routing]\nalgorithm = \"valiant\"\nvc_policy = \"min_last\"");
    let r = routing::build(&s, &t).unwrap();
    for _ in 0..5000 {
        let mut st = RouteState { src_switch: rng.gen_range(0..16), dst_switch: rng.gen_range(0..16), ..Default::default() };
        r.on_inject(&mut st, &mut rng);
        minimal += usize::from(!st.valiant);
    }
    assert!((400..900).contains(&minimal), "{minimal} minimal packets");
}

fn run_spec(topo: &str, algo: &str, policy: &str, vcs: usize, traffic: &str, load: f64, cycles: u64) -> hopsim_core::RunResult {
    run_injecting(topo, algo, policy, vcs, traffic, load, cycles, "policy")
}

#[allow(clippy::too_many_arguments)]
fn run_injecting(topo: &str, algo: &str, policy: &str, vcs: usize, traffic: &str, load: f64, cycles: u64, injection: &str) -> hopsim_core::RunResult {
    common::run(&format!(
        "[topology]\n{topo}\n[router]\nvcs = {vcs}\n[routing]\nalgorithm = \"{algo}\"\nvc_policy = \"{policy}\"\ninjection_vcs = \"{injection}\"\n[traffic]\n{traffic}\nload = {load}\n[run]\nwarmup = 2000\ncycles = {cycles}\nwatchdog = 3000\nseed = 2\n"
    ))
}

/// The adverse pattern of each small network and the VC count of each policy on it.
fn adverse() -> [(&'static str, &'static str, usize, usize); 3] {
    [(HX2, "pattern = \"shift\"\nshift = [1, 1]", 4, 4), (DF, "pattern = \"adv\"", 6, 8), (DFP, "pattern = \"adv\"", 6, 6)]
}

#[test]
fn every_vc_policy_is_deadlock_free_under_saturated_adverse_valiant_traffic() {
    for (t, traffic, vcs_ladder, vcs_2p) in adverse() {
        for (policy, vcs) in [("ladder", vcs_ladder), ("ladder_reuse", vcs_ladder), ("min_first", vcs_2p), ("min_last", vcs_2p), ("min_both", vcs_2p)] {
            // Injection buffers hold no channel of the dependency graph: injecting into any
            // of their VCs must keep every policy deadlock-free.
            for injection in ["policy", "any", "any_first"] {
                let r = run_injecting(t, "valiant", policy, vcs, traffic, 1.0, 20_000, injection);
                assert!(!r.metrics.deadlock, "{t} {policy} {injection}: {}", r.metrics.deadlock_where);
                assert!(r.metrics.accepted_load > 0.15, "{t} {policy} {injection}: accepted {}", r.metrics.accepted_load);
                eprintln!("{} valiant {policy} ({vcs} VCs, injection {injection}): accepted {:.3} at offered 1.0", t.lines().next().unwrap(), r.metrics.accepted_load);
            }
        }
    }
    // Minimal routing saturated too (uniform, and ADV on the dragonflies).
    for (t, traffic, policy, vcs) in [(HX2, "pattern = \"uniform\"", "none", 1), (DF, "pattern = \"adv_random\"", "min_first", 4), (DFP, "pattern = \"uniform\"", "none", 1), ("kind = \"fat_tree\"\nk = 4\nlevels = 3\nservers_per_switch = 4", "pattern = \"random_permutation\"", "none", 1)] {
        let r = run_spec(t, "minimal", policy, vcs, traffic, 1.0, 10_000);
        assert!(!r.metrics.deadlock, "{t} minimal {policy}: {}", r.metrics.deadlock_where);
    }
}

#[test]
fn accepted_equals_offered_below_saturation() {
    for (t, traffic, vcs_ladder, _) in adverse() {
        let r = run_spec(t, "valiant", "ladder_reuse", vcs_ladder, traffic, 0.25, 10_000);
        assert!((r.metrics.accepted_load - 0.25).abs() < 0.02, "{t}: accepted {}", r.metrics.accepted_load);
    }
    let r = run_spec(HX2, "minimal", "none", 2, "pattern = \"uniform\"", 0.5, 10_000);
    assert!((r.metrics.accepted_load - 0.5).abs() < 0.03, "accepted {}", r.metrics.accepted_load);
}

#[test]
fn adv_sends_to_the_same_position_h_groups_ahead() {
    use hopsim_core::traffic;
    let s = spec::from_toml_str(&format!("[topology]\n{DF}\n[traffic]\npattern = \"adv\"\nload = 0.1\n")).unwrap();
    let t = topology::build(&s).unwrap();
    let servers = topology::ServerMap::new(t.as_ref());
    let tr = traffic::build(&s, t.as_ref(), &servers).unwrap();
    let mut rng = Rng::seed_from_u64(1);
    let per_group = 8;
    for src in 0..servers.num_servers() {
        let d = tr.pattern.destination(src, &mut rng);
        assert_eq!(d / per_group, (src / per_group + 2) % 9);
        assert_eq!(d % per_group, src % per_group);
    }
    let s = spec::from_toml_str(&format!("[topology]\n{DFP}\n[traffic]\npattern = \"adv_random\"\nadv_offset = 1\nload = 0.1\n")).unwrap();
    let t = topology::build(&s).unwrap();
    let servers = topology::ServerMap::new(t.as_ref());
    let tr = traffic::build(&s, t.as_ref(), &servers).unwrap();
    for src in 0..servers.num_servers() {
        let d = tr.pattern.destination(src, &mut rng);
        assert_eq!(t.group_of(servers.switch_of(d)), (t.group_of(servers.switch_of(src)) + 1) % t.groups());
    }
}

#[test]
fn wrong_keys_name_the_key() {
    let err = |topo: &str, extra: &str| {
        let s = spec::from_toml_str(&format!("[topology]\n{topo}\n{extra}\n[traffic]\nload = 0.1\n")).unwrap();
        hopsim_core::engine::Simulation::check(&s).unwrap_err().to_string()
    };
    assert!(err("kind = \"dragonfly\"\nswitches_per_group = 4\nglobal_links_per_switch = 2\ndims = [4]", "").contains("topology.dims"));
    assert!(err("kind = \"dragonfly\"\nswitches_per_group = 4", "").contains("topology.global_links_per_switch"));
    assert!(err("kind = \"dragonfly\"\nswitches_per_group = 4\nglobal_links_per_switch = 2\ngroups = 10", "").contains("topology.groups"));
    assert!(err("kind = \"hyperx\"\ndims = [4, 4]\nk = 3", "").contains("topology.k"));
    assert!(err(DF, "[router]\nvcs = 4\n[routing]\nalgorithm = \"valiant\"\nvc_policy = \"ladder\"").contains("router.vcs"));
    assert!(err(DF, "[router]\nvcs = 2\n[routing]\nalgorithm = \"valiant\"\nvc_policy = \"min_first\"").contains("router.vcs"));
    // The peers' dragonfly classes: three of them, and only on a dragonfly.
    assert!(err(DF, "[router]\nvcs = 2\n[routing]\nalgorithm = \"ugal_l\"\nvc_policy = \"global_hops\"").contains("router.vcs"));
    assert!(err(DF, "[router]\nvcs = 2\n[routing]\nalgorithm = \"ugal_l\"\nvc_policy = \"optical_dateline\"").contains("router.vcs"));
    assert!(err(HX2, "[router]\nvcs = 3\n[routing]\nalgorithm = \"ugal_l\"\nvc_policy = \"optical_dateline\"").contains("needs a dragonfly"));
    assert!(err(HX2, "[router]\nvcs = 3\n[routing]\nalgorithm = \"ugal_l\"\nvc_policy = \"global_hops\"").contains("needs a dragonfly"));
    assert!(err(HX2, "[routing]\nalgorithm = \"rdr\"").contains("routing.algorithm"));
    assert!(err("kind = \"torus\"\ndims = [4, 4]", "[routing]\nalgorithm = \"dor\"\nvaliant_redraw = true").contains("routing.valiant_redraw"));
    assert!(err(HX2, "[router]\nvcs = 4\n[routing]\nalgorithm = \"valiant\"\nvc_policy = \"dateline\"").contains("routing.vc_policy"));
    assert!(err(DF, "[router]\nvcs = 8\n[routing]\nalgorithm = \"valiant\"\nvc_policy = \"ladder\"\nladder_vcs_per_step = 2").contains("routing.ladder_vcs_per_step"));
}

/// `routing.ladder_vcs_per_step = 1` on 8 VCs is the 6-VC ladder of a dragonfly (Table III of
/// the VC-management paper): same run, phit for phit, as a router with only 6 VCs, so the
/// two spare VCs carry nothing, not even injected packets. Other policies refuse the key,
/// unless the experiment sweeps the policy: then they ignore it.
#[test]
fn ladder_on_fewer_vcs_than_the_router_has_leaves_the_rest_unused() {
    let run = |policy: &str, vcs: usize, extra: &str| {
        common::run(&format!(
            "[topology]\n{DF}\n[router]\nvcs = {vcs}\njsq_tie_break = \"random\"\n[routing]\nalgorithm = \"valiant\"\nvc_policy = \"{policy}\"\ninjection_vcs = \"any\"\n{extra}\n[traffic]\npattern = \"adv\"\nload = 1.0\n[run]\nwarmup = 1000\ncycles = 4000\nseed = 3\n"
        ))
    };
    for policy in ["ladder", "ladder_reuse"] {
        let six = run(policy, 6, "");
        let eight = run(policy, 8, "ladder_vcs_per_step = 1");
        let same = |r: &hopsim_core::RunResult| serde_json::to_value((&r.temporal, &r.links, &r.counters, r.metrics.packets_delivered, r.metrics.phit_hops)).unwrap();
        assert_eq!(same(&six), same(&eight), "{policy}");
        let spread = run(policy, 8, "");
        assert_ne!(six.metrics.phit_hops, spread.metrics.phit_hops, "{policy}: all 8 VCs spread over the steps should differ");
    }
    let plain = run("min_first", 8, "").metrics;
    let swept = "ladder_vcs_per_step = 1\n[sweep]\n\"routing.vc_policy\" = [\"min_first\", \"ladder\"]";
    assert_eq!(plain.phit_hops, run("min_first", 8, swept).metrics.phit_hops);
    let alone = hopsim_core::spec::from_toml_str(&format!(
        "[topology]\n{DF}\n[router]\nvcs = 8\n[routing]\nalgorithm = \"valiant\"\nvc_policy = \"min_first\"\nladder_vcs_per_step = 1\n[traffic]\nload = 1.0\n"
    ));
    let e = alone.and_then(|s| hopsim_core::engine::Simulation::check(&s)).unwrap_err();
    assert_eq!(e.to_string(), "routing.ladder_vcs_per_step = 1: unknown key for routing.vc_policy = \"min_first\"; allowed keys: algorithm, vc_policy, injection_vcs, queue_reach, ejection_vcs");
}

/// With the ladder, a server may inject only into VC 0 of its switch's input buffer, so one
/// blocked head holds up every packet behind it whatever its first hop; injecting into any
/// VC removes that head-of-line blocking and the saturated network accepts more.
#[test]
fn injecting_into_any_vc_relieves_head_of_line_blocking_at_injection() {
    let traffic = "pattern = \"shift\"\nshift = [1, 1]";
    let accepted = |injection| run_injecting(HX2, "valiant", "ladder_reuse", 4, traffic, 1.0, 20_000, injection).metrics.accepted_load;
    let (policy, any, first) = (accepted("policy"), accepted("any"), accepted("any_first"));
    assert!(any > policy * 1.02, "injection any {any:.4}, policy {policy:.4}");
    assert!(first > policy * 1.02, "injection any_first {first:.4}, policy {policy:.4}");
}

/// `ejection_vcs = "policy"` gives a packet only its class's VCs of its server's port: under
/// `min_first` every packet from another group reaches its server in one class, so with 1-flit
/// packets, one packet per input VC at a time and the output VC held until the tail leaves,
/// they take the port one at a time and the saturated network accepts less than when any VC
/// of the port will do. The ladder has no classes at ejection, so there both rules are one.
#[test]
fn ejecting_in_the_packets_class_serialises_its_server_port() {
    let run = |policy: &str, vcs: usize, ejection: &str| {
        common::run(&format!(
            "[topology]\n{DF}\n[router]\nvcs = {vcs}\ninput_buffer_phits = 64\noutput_buffer_phits = 2\nflow_control = \"wormhole\"\n\
             vc_allocation = \"before_switch\"\nnext_head_routing = \"after_tail\"\n[packet]\nphits = 1\n[routing]\nalgorithm = \"minimal\"\n\
             vc_policy = \"{policy}\"\ninjection_vcs = \"any\"\nejection_vcs = \"{ejection}\"\n[traffic]\nload = 0.6\n\
             [run]\nwarmup = 2000\ncycles = 4000\nseed = 5\n"
        ))
    };
    let (any, class) = (run("min_first", 4, "any").metrics, run("min_first", 4, "policy").metrics);
    assert!(class.accepted_load < any.accepted_load * 0.97, "policy {:.4} against any {:.4}", class.accepted_load, any.accepted_load);
    assert_eq!(fingerprint(&run("ladder", 3, "any")), fingerprint(&run("ladder", 3, "policy")));
}

/// Each hop `valiant_paths = "all_shortest"` offers at `cur` towards `target` leads one hop
/// nearer (distances by breadth-first search of the wiring), and all such hops are offered.
#[test]
fn all_shortest_valiant_offers_every_hop_one_nearer_and_only_those() {
    let s = spec_of(DF, "[routing]\nalgorithm = \"valiant\"\nvaliant_paths = \"all_shortest\"");
    let t = topology::build(&s).unwrap();
    let r = routing::build(&s, &t).unwrap_or_else(|e| panic!("{e}"));
    let n = t.num_switches();
    // Plain breadth-first distances over the wiring (links are bidirectional).
    let bfs = |src: usize| {
        let mut d = vec![usize::MAX; n];
        d[src] = 0;
        let mut queue = std::collections::VecDeque::from([src]);
        while let Some(v) = queue.pop_front() {
            for p in 0..t.network_ports(v) {
                let w = t.neighbour(v, p).unwrap().switch as usize;
                if d[w] == usize::MAX {
                    d[w] = d[v] + 1;
                    queue.push_back(w);
                }
            }
        }
        d
    };
    let dist: Vec<Vec<usize>> = (0..n).map(bfs).collect();
    let mut rng = Rng::seed_from_u64(5);
    let mut several = 0;
    for cur in 0..n {
        for target in (0..n).filter(|&x| x != cur) {
            // Phase 1 towards `target`: the intermediate is behind the packet.
            let mut st = RouteState { src_switch: cur as u32, dst_switch: target as u32, intermediate: cur as u32, phase: 1, ..Default::default() };
            let mut out = CandidateBuf::default();
            r.route(&mut RouteCtx { switch: cur, rng: &mut rng, congestion: &IdleNetwork }, &mut st, &mut out.out());
            let offered: Vec<usize> = out.as_slice().iter().map(|c| c.hop.port as usize).collect();
            let nearer: Vec<usize> =
                (0..t.network_ports(cur)).filter(|&p| t.neighbour(cur, p).is_some_and(|peer| dist[peer.switch as usize][target] + 1 == dist[cur][target])).collect();
            assert_eq!(offered, nearer, "switch {cur} towards {target}");
            several += usize::from(offered.len() > 1);
        }
    }
    // The option only matters where some pair has several shortest next hops.
    assert!(several > 0);
}

#[test]
fn all_shortest_valiant_is_deadlock_free_on_the_ladders_only_and_loads_global_links_more() {
    let run = |paths: &str, policy: &str, load: f64| {
        common::run(&format!(
            "[topology]\n{DF}\n[router]\nvcs = 6\n[routing]\nalgorithm = \"valiant\"\nvaliant_paths = \"{paths}\"\nvc_policy = \"{policy}\"\n[traffic]\nload = {load}\n[run]\nwarmup = 2000\ncycles = 6000\nwatchdog = 3000\nseed = 2\n"
        ))
    };
    for policy in ["ladder", "ladder_reuse"] {
        let r = run("all_shortest", policy, 1.0);
        assert!(!r.metrics.deadlock && r.metrics.accepted_load > 0.1, "{policy}: {:?}", r.metrics.deadlock_where);
        assert!(r.metrics.hops_max <= 6);
    }
    // Below saturation both accept what is offered; every-shortest paths cross more global links.
    let (lgl, all) = (run("topology", "ladder", 0.1), run("all_shortest", "ladder", 0.1));
    assert!((lgl.metrics.accepted_load - all.metrics.accepted_load).abs() < 0.005);
    let ratio = all.metrics.per_link_class["link_load_mean_global"] / lgl.metrics.per_link_class["link_load_mean_global"];
    assert!(ratio > 1.03, "global load ratio {ratio}");
    let refused = |extra: &str| {
        let s = spec::from_toml_str(&format!("[topology]\n{DF}\n[router]\nvcs = 8\n[routing]\n{extra}\n[traffic]\nload = 0.1\n")).unwrap();
        hopsim_core::engine::Simulation::check(&s).expect_err("refused").to_string()
    };
    let e = refused("algorithm = \"valiant\"\nvaliant_paths = \"all_shortest\"\nvc_policy = \"min_last\"");
    assert!(e.contains("routing.vc_policy") && e.contains("ladder"), "{e}");
    let e = refused("algorithm = \"minimal\"\nvaliant_paths = \"all_shortest\"");
    assert!(e.contains("routing.valiant_paths"), "{e}");
    let e = refused("algorithm = \"valiant\"\nvaliant_paths = \"shortest\"");
    assert!(e.contains("routing.valiant_paths") && e.contains("all_shortest"), "{e}");
}

/// Walk a packet as `walk` does and give, for each hop, the lowest VC its policy allows and
/// whether the hop is global, with the ejection class at the destination.
fn walk_classes(topo: &dyn Topology, r: &dyn Routing, v: &dyn vc::VcPolicy, src: usize, dst: usize, rng: &mut Rng) -> (Vec<(u32, bool, u8, bool)>, u32) {
    let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
    r.on_inject(&mut st, rng);
    let (mut cur, mut out, mut hops) = (src, CandidateBuf::default(), Vec::new());
    while cur != dst {
        r.route(&mut RouteCtx { switch: cur, rng, congestion: &IdleNetwork }, &mut st, &mut out.out());
        let c = out.as_slice()[rng.gen_range(0..out.len())];
        let mask = v.allowed(&st, &c.hop) & v.all();
        assert_eq!(mask.count_ones(), 1, "{}: one VC per class on 3 VCs", v.name());
        hops.push((mask.trailing_zeros(), c.hop.class == 1, st.phase, st.valiant));
        r.on_hop(&mut st, cur, &c.hop);
        cur = topo.neighbour(cur, c.hop.port as usize).expect("connected port").switch as usize;
    }
    let ejection = v.ejection(&st) & v.all();
    assert_eq!(ejection.count_ones(), 1);
    (hops, ejection.trailing_zeros())
}

/// SST Merlin's dragonfly VCs (`global_hops`): every hop is on the VC that counts the global
/// hops taken before it, the global hop itself included in the class it leaves, on minimal
/// and Valiant paths alike.
#[test]
fn global_hops_puts_each_hop_on_the_count_of_global_hops_before_it() {
    let mut rng = Rng::seed_from_u64(11);
    for algo in ["minimal", "valiant"] {
        let (topo, r, v) = parts(DF, algo, "global_hops", 3);
        let h = hosts(topo.as_ref());
        let mut seen = [false; 3];
        for _ in 0..3000 {
            let (a, b) = (h[rng.gen_range(0..h.len())], h[rng.gen_range(0..h.len())]);
            let (hops, ejection) = walk_classes(topo.as_ref(), r.as_ref(), v.as_ref(), a, b, &mut rng);
            let mut global = 0;
            for &(vc, is_global, _, _) in &hops {
                assert_eq!(vc, global, "{algo}: hops {hops:?}");
                seen[vc as usize] = true;
                global += u32::from(is_global);
            }
            assert_eq!(ejection, global.min(2), "{algo}: ejection after {hops:?}");
        }
        assert_eq!(seen, [true, true, algo == "valiant"], "{algo}");
    }
}

/// BookSim2's dragonfly UGAL VCs (`optical_dateline`, `dragonfly.cpp`: `out_vc = f->ph`):
/// VC 0 on every hop to the intermediate, local or global; VC 1 after it up to the global
/// hop; VC 2 on that global hop and after it, and from the first hop for a minimal packet
/// that stays in its group.
#[test]
fn optical_dateline_gives_booksim2s_phase_vcs() {
    let mut rng = Rng::seed_from_u64(12);
    let mut shared = 0;
    for algo in ["minimal", "valiant"] {
        let (topo, r, v) = parts(DF, algo, "optical_dateline", 3);
        let h = hosts(topo.as_ref());
        for _ in 0..3000 {
            let (a, b) = (h[rng.gen_range(0..h.len())], h[rng.gen_range(0..h.len())]);
            let (hops, ejection) = walk_classes(topo.as_ref(), r.as_ref(), v.as_ref(), a, b, &mut rng);
            let same_group = topo.group_of(a) == topo.group_of(b);
            let mut global_in_phase = false;
            let mut last_phase = 0;
            for &(vc, is_global, phase, valiant) in &hops {
                if phase != last_phase {
                    global_in_phase = false;
                    last_phase = phase;
                }
                let want = if valiant && phase == 0 {
                    0
                } else if is_global || global_in_phase || (!valiant && same_group) {
                    2
                } else {
                    1
                };
                assert_eq!(vc, want, "{algo} {a} -> {b}: hops {hops:?}");
                global_in_phase |= is_global;
            }
            // A detour's local hop in its intermediate group shares VC 0 with its source group's.
            let phase0: Vec<_> = hops.iter().filter(|h| h.3 && h.2 == 0).collect();
            if phase0.len() == 3 && phase0[1].1 {
                assert!(phase0.iter().all(|h| h.0 == 0));
                shared += 1;
            }
            let want_ejection = hops.last().map_or(2, |&(vc, ..)| vc);
            assert_eq!(ejection, want_ejection, "{algo}: ejection after {hops:?}");
        }
    }
    assert!(shared > 100, "{shared} detours with local-global-local to the intermediate");
}

