//! Routing algorithms on tori and meshes: routes are minimal where they must be (walked hop by
//! hop, and measured in runs), RDR's choices are uniform, no algorithm deadlocks when
//! saturated, and accepted load follows offered load below saturation.
use crate::common;

use hopsim_core::routing::{self, CandidateBuf, IdleNetwork, RouteCtx, RouteState, Routing, Rng};
use hopsim_core::topology::{self, Topology};
use hopsim_core::{spec, vc};
use rand::{Rng as _, SeedableRng};
use std::sync::Arc;

/// The algorithms, each with the VC policy and VC count that make it deadlock-free on a torus.
const ALGOS: [(&str, &str, usize); 5] =
    [("dor", "dateline", 2), ("rdr", "escape", 3), ("romm", "phase_dateline", 4), ("min_adaptive", "escape", 3), ("valiant", "phase_dateline", 4)];

fn parts(kind: &str, dims: &str, algo: &str, policy: &str, vcs: usize) -> (Arc<dyn Topology>, Arc<dyn Routing>, Arc<dyn vc::VcPolicy>) {
    let toml = format!(
        "[topology]\nkind = \"{kind}\"\ndims = {dims}\n[router]\nvcs = {vcs}\n[routing]\nalgorithm = \"{algo}\"\nvc_policy = \"{policy}\"\n[traffic]\nload = 0.1\n"
    );
    let s = spec::from_toml_str(&toml).unwrap();
    let topo = topology::build(&s).unwrap();
    let r = routing::build(&s, &topo).unwrap();
    let v = hopsim_core::deadlock_freedom::build_vc_policy(&s, &topo, r.as_ref()).unwrap();
    (topo, r, v)
}

/// Walk one packet from `src` to `dst` as the engine would, taking a random candidate at each
/// switch; returns (hops, hops of the first phase for two-phase routings).
fn walk(topo: &dyn Topology, r: &dyn Routing, v: &dyn vc::VcPolicy, src: usize, dst: usize, rng: &mut Rng) -> (usize, usize) {
    let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
    r.on_inject(&mut st, rng);
    assert_ne!(v.injection(&st) & v.all(), 0, "{}: no injection VC", r.name());
    let (mut cur, mut hops, mut first) = (src, 0, None);
    let mut out = CandidateBuf::default();
    while cur != dst {
        r.route(&mut RouteCtx { switch: cur, rng, congestion: &IdleNetwork }, &mut st, &mut out.out());
        if st.valiant && st.phase == 1 && first.is_none() {
            first = Some(hops);
            assert_eq!(cur, st.intermediate as usize, "{}: phase 1 begins at the intermediate", r.name());
        }
        assert!(out.len() > 0, "{}: no candidate at {cur} for {dst}", r.name());
        for c in out.as_slice() {
            assert_ne!(v.allowed(&st, &c.hop) & v.all(), 0, "{}: a candidate with no VC", r.name());
            let next = topo.neighbour(cur, c.hop.port as usize).expect("candidate port is connected").switch as usize;
            let target = if st.valiant && st.phase == 0 { st.intermediate as usize } else { dst };
            assert_eq!(topo.distance(next, target) + 1, topo.distance(cur, target), "{}: hop {cur} -> {next} not towards {target}", r.name());
        }
        let hop = out.as_slice()[rng.gen_range(0..out.len())].hop;
        if hop.wraps {
            st.wrapped |= 1 << hop.dim;
        }
        cur = topo.neighbour(cur, hop.port as usize).unwrap().switch as usize;
        hops += 1;
        assert!(hops <= 2 * topo.diameter(), "{}: {hops} hops", r.name());
    }
    // A Valiant packet whose first phase passes through its destination is ejected there, as
    // the engine does; ROMM's first phase never passes the destination unless it ends there.
    if r.name() == "romm" && first.is_none() && src != dst {
        assert_eq!(st.intermediate as usize, dst);
    }
    (hops, first.unwrap_or(hops))
}

#[test]
fn every_step_of_every_route_is_minimal_where_it_must_be() {
    let mut rng = Rng::seed_from_u64(7);
    for (kind, dims) in [("torus", "[8, 8]"), ("torus", "[5, 4, 6]"), ("torus", "[2, 3, 4, 2]"), ("mesh", "[4, 5, 3]"), ("torus", "[9]")] {
        for (algo, policy, vcs) in ALGOS {
            let (topo, r, v) = parts(kind, dims, algo, policy, vcs);
            let n = topo.num_switches();
            let mut sum = (0, 0);
            for _ in 0..3000 {
                let (src, dst) = (rng.gen_range(0..n), rng.gen_range(0..n));
                let (hops, _) = walk(topo.as_ref(), r.as_ref(), v.as_ref(), src, dst, &mut rng);
                let d = topo.distance(src, dst);
                if algo == "valiant" {
                    assert!(hops >= d && hops <= 2 * topo.diameter(), "{kind} {dims} valiant: {hops} hops for distance {d}");
                } else {
                    assert_eq!(hops, d, "{kind} {dims} {algo}: {src} -> {dst}");
                }
                sum = (sum.0 + hops, sum.1 + d);
            }
            if algo == "valiant" {
                assert!(sum.0 > sum.1, "{kind} {dims}: valiant never went out of its way");
            }
        }
    }
}

#[test]
fn rdr_picks_uniformly_among_unfinished_dimensions() {
    // From the origin of a 4-D torus to a switch differing in dimensions 0, 2 and 3.
    let (topo, r, _) = parts("torus", "[6, 6, 6, 6]", "rdr", "escape", 3);
    let grid = topo.cartesian().unwrap();
    let dst = grid.switch_at(&[2, 0, 5, 3]);
    let mut rng = Rng::seed_from_u64(11);
    let mut counts = [0u64; 4];
    let mut out = CandidateBuf::default();
    let calls = 30_000;
    for _ in 0..calls {
        let mut st = RouteState { src_switch: 0, dst_switch: dst as u32, ..Default::default() };
        r.on_inject(&mut st, &mut rng);
        r.route(&mut RouteCtx { switch: 0, rng: &mut rng, congestion: &IdleNetwork }, &mut st, &mut out.out());
        let first = out.as_slice()[0];
        assert_eq!(first.priority, 0);
        assert!(!first.hop.escape);
        counts[first.hop.dim as usize] += 1;
        // The escape hop is the DOR hop, on the escape VCs.
        let esc = out.as_slice()[1];
        assert!(esc.hop.escape && esc.hop.dim == 0 && esc.priority == 1);
    }
    assert_eq!(counts[1], 0, "dimension 1 is already corrected");
    let expected = calls as f64 / 3.0;
    let chi2: f64 = [0, 2, 3].iter().map(|&d| (counts[d] as f64 - expected).powi(2) / expected).sum();
    // 2 degrees of freedom: P(chi2 > 13.8) = 0.001.
    assert!(chi2 < 13.8, "counts {counts:?}, chi-square {chi2}");
}

#[test]
fn auto_picks_a_sound_policy() {
    for algo in ["dor", "rdr", "romm", "min_adaptive", "valiant"] {
        let m = common::run(&format!(
            "[topology]\nkind = \"torus\"\ndims = [4, 4]\n[router]\nvcs = 4\ninput_buffer = 1\noutput_buffer = 1\n[routing]\nalgorithm = \"{algo}\"\nvc_policy = \"auto\"\n[traffic]\nload = 1.0\n[run]\nwarmup = 0\ncycles = 10000\nwatchdog = 3000\n"
        ))
        .metrics;
        assert!(!m.deadlock, "{algo}: {}", m.deadlock_where);
    }
}

#[test]
fn unsound_combinations_are_refused() {
    let base = "[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\nload = 0.1\n";
    for (extra, key) in [
        // The default policy (auto) picks escape VCs for rdr: 3 VCs needed on a torus.
        ("[routing]\nalgorithm = \"rdr\"\n", "router.vcs"),
        ("[routing]\nalgorithm = \"min_adaptive\"\nvc_policy = \"dateline\"\n", "routing.vc_policy"),
        ("[routing]\nalgorithm = \"valiant\"\n", "router.vcs"),
        ("[routing]\nalgorithm = \"valiant\"\nvc_policy = \"dateline\"\n[router]\nvcs = 4\n", "routing.vc_policy"),
        ("[routing]\nalgorithm = \"romm\"\nvc_policy = \"escape\"\n[router]\nvcs = 4\n", "routing.vc_policy"),
        ("[routing]\nalgorithm = \"dor\"\nvc_policy = \"escape\"\n[router]\nvcs = 4\n", "routing.vc_policy"),
        ("[routing]\nalgorithm = \"valiant\"\nvc_policy = \"phase_dateline\"\n[router]\nvcs = 3\n", "router.vcs"),
        ("[routing]\nalgorithm = \"rdr\"\nvc_policy = \"escape\"\n[router]\nvcs = 2\n", "router.vcs"),
    ] {
        let s = spec::from_toml_str(&format!("{base}{extra}")).unwrap();
        let e = hopsim_core::simulate(&s).err().unwrap_or_else(|| panic!("accepted: {extra}")).to_string();
        assert!(e.contains(key), "{extra}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

fn run_algo(algo: &str, policy: &str, vcs: usize, router: &str, body: &str) -> hopsim_core::RunResult {
    common::run(&format!("[router]\nvcs = {vcs}\n{router}\n[routing]\nalgorithm = \"{algo}\"\nvc_policy = \"{policy}\"\n{body}"))
}

#[test]
fn one_flow_takes_exactly_the_torus_distance() {
    for (dims, shift, d) in [("[8, 8]", "[3, -2]", 5), ("[8, 8]", "[4, 4]", 8), ("[5, 6, 4]", "[2, 3, -1]", 6)] {
        for (algo, policy, vcs) in ALGOS {
            let r = run_algo(
                algo,
                policy,
                vcs,
                "",
                &format!(
                    "[topology]\nkind = \"torus\"\ndims = {dims}\n[traffic]\npattern = \"shift\"\nshift = {shift}\nload = 0.05\nactive_servers = 1\n[run]\nwarmup = 500\ncycles = 10000\n"
                ),
            );
            let m = &r.metrics;
            assert!(m.packets_measured_delivered > 10);
            if algo == "valiant" {
                assert!(m.hops_mean >= d as f64 && m.hops_mean <= 2.0 * m.switches as f64, "{dims} valiant: {}", m.hops_mean);
            } else {
                assert_eq!(m.hops_mean, d as f64, "{dims} {algo}");
            }
        }
    }
}

/// Every algorithm at load 1.0 with one-packet buffers for 30,000 cycles: the watchdog
/// (3,000 cycles without progress) must never fire.
fn saturate(cases: &[(&str, &str, &str, &str)]) {
    const CYCLES: u64 = 30_000;
    for &(kind, dims, fc, pattern) in cases {
        for (algo, policy, vcs) in ALGOS {
            let r = run_algo(
                algo,
                policy,
                vcs,
                &format!("flow_control = \"{fc}\"\ninput_buffer = 1\noutput_buffer = 1"),
                &format!(
                    "[topology]\nkind = \"{kind}\"\ndims = {dims}\n[traffic]\npattern = \"{pattern}\"\nload = 1.0\n[run]\nwarmup = 0\ncycles = {CYCLES}\nwatchdog = 3000\n"
                ),
            );
            let m = &r.metrics;
            assert!(!m.deadlock, "{kind} {dims} {fc} {pattern} {algo}: {}", m.deadlock_where);
            assert!(m.accepted_load > 0.03, "{dims} {fc} {pattern} {algo}: accepted {}", m.accepted_load);
        }
    }
}

#[test]
fn saturated_vct_runs_never_deadlock() {
    saturate(&[("torus", "[8, 8]", "vct", "uniform"), ("torus", "[4, 4, 4]", "vct", "tornado"), ("torus", "[8, 8]", "vct", "tornado")]);
}

#[test]
fn saturated_wormhole_runs_never_deadlock() {
    saturate(&[
        ("torus", "[8, 8]", "wormhole", "uniform"),
        ("torus", "[4, 4, 4]", "wormhole", "tornado"),
        ("torus", "[8, 8]", "wormhole", "tornado"),
        ("mesh", "[5, 5, 3]", "wormhole", "uniform"),
    ]);
}

#[test]
fn accepted_equals_offered_below_saturation() {
    // Loads well below each algorithm's saturation (docs/model.md: 8x8 torus uniform saturates
    // near 0.7 for DOR, 0.8 for RDR and min_adaptive, 0.6 for ROMM, 0.3 for Valiant).
    for (algo, policy, vcs) in ALGOS {
        let valiant = algo == "valiant";
        for (kind, dims, pattern, load) in [
            ("torus", "[8, 8]", "uniform", if valiant { 0.2 } else { 0.45 }),
            ("torus", "[8, 8]", "tornado", 0.12),
            ("torus", "[4, 4, 4]", "uniform", if valiant { 0.2 } else { 0.4 }),
            ("mesh", "[6, 6]", "uniform", 0.15),
        ] {
            let r = run_algo(
                algo,
                policy,
                vcs,
                "",
                &format!(
                    "[topology]\nkind = \"{kind}\"\ndims = {dims}\n[traffic]\npattern = \"{pattern}\"\nload = {load}\n[run]\nwarmup = 3000\ncycles = 15000\n"
                ),
            );
            let m = &r.metrics;
            let what = format!("{kind} {dims} {pattern} {algo} at {load}");
            assert!(!m.deadlock, "{what}");
            // Against the load this run generated (the Bernoulli sources' own noise aside) ...
            assert!(((m.accepted_load - m.generated_load) / m.generated_load).abs() < 0.02, "{what}: accepted {} generated {}", m.accepted_load, m.generated_load);
            // ... and, more loosely for that noise, against the nominal load.
            assert!(((m.accepted_load - load) / load).abs() < 0.04, "{what}: accepted {}", m.accepted_load);
        }
    }
}

/// The saturation table of docs/model.md: `cargo test --release -p hopsim-core --test routing
/// -- --ignored --nocapture saturation_table`.
#[test]
#[ignore]
fn saturation_table() {
    for pattern in ["uniform", "tornado"] {
        for (algo, policy, _) in ALGOS {
            let mut row = Vec::new();
            for load in [0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0] {
                let m = run_algo(
                    algo,
                    policy,
                    4,
                    "",
                    &format!("[topology]\nkind = \"torus\"\ndims = [8, 8]\n[traffic]\npattern = \"{pattern}\"\nload = {load}\n[run]\nwarmup = 5000\ncycles = 20000\n"),
                )
                .metrics;
                assert!(!m.deadlock);
                row.push(format!("{load}:{:.3}", m.accepted_load));
            }
            println!("{pattern} {algo}: {}", row.join(" "));
        }
    }
}

#[test]
fn every_algorithm_policy_workload_and_motif_is_found_by_its_own_name() {
    // The enum and the registry come from one list, so a variant always has its entry; what
    // can still go wrong is two entries with one name (the second would be unreachable).
    use hopsim_core::{routing::Algorithm, vc::Policy, workload::motifs::MotifKind, workload::Kind as Workload};
    for &a in Algorithm::ALL {
        assert_eq!(Algorithm::from_name(a.name()), Some(a), "{a:?}");
    }
    for &p in Policy::ALL {
        assert_eq!(Policy::from_name(p.name()), Some(p), "{p:?}");
    }
    for &w in Workload::ALL {
        assert_eq!(Workload::from_name(w.name()), Some(w), "{w:?}");
    }
    for &m in MotifKind::ALL {
        assert_eq!(MotifKind::from_name(m.name()), Some(m), "{m:?}");
    }
}

/// A congestion view that fails when read.
struct Blindfold;

impl routing::Congestion for Blindfold {
    fn port_queue(&self, switch: usize, port: usize) -> u32 {
        panic!("read the queue of port {port} of switch {switch}")
    }
    fn waiting_for(&self, switch: usize, port: usize) -> u32 {
        panic!("read the heads waiting for port {port} of switch {switch}")
    }
    fn port_free(&self, switch: usize, port: usize) -> u32 {
        panic!("read the room behind port {port} of switch {switch}")
    }
}

/// Walks packets of every algorithm in `algorithms` on each of `networks` it is defined on
/// (random pairs, a random candidate at every switch, seen through `congestion`), calling
/// `on_hop(routing, state before, state after, hop)` at each hop the routing learns.
fn walk_every_algorithm(
    algorithms: impl Iterator<Item = routing::Algorithm>,
    networks: &[(&str, &str)],
    congestion: &dyn routing::Congestion,
    mut on_hop: impl FnMut(&dyn Routing, &RouteState, &RouteState, &routing::Hop),
) {
    let mut rng = Rng::seed_from_u64(5);
    for alg in algorithms {
        let mut routed = 0;
        for (kind, keys) in networks {
            let toml = format!("[topology]\nkind = \"{kind}\"\n{keys}\n[router]\nvcs = 8\n[routing]\nalgorithm = \"{}\"\n[traffic]\nload = 0.1\n", alg.name());
            let s = spec::from_toml_str(&toml).unwrap();
            if hopsim_core::deadlock_freedom::check_defined(&s, kind).is_err() {
                continue;
            }
            let topo = topology::build(&s).unwrap();
            let r = routing::build(&s, &topo).unwrap();
            let n = topo.num_switches();
            for _ in 0..200 {
                let (src, dst) = (rng.gen_range(0..n), rng.gen_range(0..n));
                let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
                r.on_inject(&mut st, &mut rng);
                let (mut cur, mut hops) = (src, 0);
                let mut out = CandidateBuf::default();
                while cur != dst && hops <= 2 * topo.diameter() + 2 {
                    r.route(&mut RouteCtx { switch: cur, rng: &mut rng, congestion }, &mut st, &mut out.out());
                    let hop = out.as_slice()[rng.gen_range(0..out.len())].hop;
                    let before = st;
                    r.on_hop(&mut st, cur, &hop);
                    on_hop(r.as_ref(), &before, &st, &hop);
                    cur = topo.neighbour(cur, hop.port as usize).unwrap().switch as usize;
                    hops += 1;
                }
                routed += 1;
            }
        }
        assert!(routed > 0, "{} builds on none of the networks", alg.name());
    }
}

#[test]
fn algorithms_registered_as_blind_never_read_a_queue() {
    // The engine gives a leaving flit's output space back lazily when routing is blind
    // (router/step.rs, `release_needed`): an algorithm that reads queues after all would see
    // space still held. Every blind algorithm routes here, on every network it builds on,
    // with a view that fails if read.
    let networks = [("torus", "dims = [4, 4]"), ("dragonfly", "switches_per_group = 4\nglobal_links_per_switch = 2"), ("hyperx", "dims = [3, 3, 3]")];
    walk_every_algorithm(routing::Algorithm::ALL.iter().copied().filter(|a| !a.reads_queues()), &networks, &Blindfold, |_, _, _, _| {});
}

#[test]
#[should_panic(expected = "read the queue")]
fn the_blindfold_catches_an_algorithm_that_reads_queues() {
    let toml = "[topology]\nkind = \"dragonfly\"\nswitches_per_group = 4\nglobal_links_per_switch = 2\n[router]\nvcs = 4\n[routing]\nalgorithm = \"ugal_l\"\n[traffic]\nload = 0.1\n";
    let s = spec::from_toml_str(toml).unwrap();
    let topo = topology::build(&s).unwrap();
    let r = routing::build(&s, &topo).unwrap();
    let mut rng = Rng::seed_from_u64(5);
    let dst = topo.num_switches() - 1;
    let mut st = RouteState { src_switch: 0, dst_switch: dst as u32, ..Default::default() };
    r.on_inject(&mut st, &mut rng);
    r.route(&mut RouteCtx { switch: 0, rng: &mut rng, congestion: &Blindfold }, &mut st, &mut CandidateBuf::default().out());
}

/// DOR with either dateline policy is called directly, not through the traits
/// (engine/head_routing.rs): the results must be those of routing every head through them,
/// on a torus (datelines crossed) and a mesh (none), with ties broken both ways.
#[test]
fn dor_called_directly_routes_as_through_the_traits() {
    for (kind, dims, policy, direct) in [
        ("torus", "[6, 4]", "dateline", true),
        ("torus", "[4, 4, 4]", "dateline_partition", true),
        ("mesh", "[5, 5]", "dateline", true),
        ("torus", "[6, 4]", "phase_dateline", false),
    ] {
        let toml = format!(
            "[topology]\nkind = \"{kind}\"\ndims = {dims}\n[router]\nvcs = 4\n[packet]\nphits = 4\n[routing]\nalgorithm = \"dor\"\nvc_policy = \"{policy}\"\n\
             [traffic]\npattern = \"uniform\"\nload = 0.5\n[run]\nwarmup = 200\ncycles = 3000\nseed = 5\n"
        );
        let s = spec::from_toml_str(&toml).unwrap();
        let run = |traits: bool| {
            let mut sim = hopsim_core::engine::Simulation::new(&s).unwrap();
            if traits {
                assert_eq!(sim.route_through_traits(), direct, "{kind} {policy}: called directly");
            }
            sim.run()
        };
        let r = run(false);
        assert!(r.metrics.packets_delivered > 1000, "{kind} {policy}");
        assert!(common::fingerprint(&run(true)) == common::fingerprint(&r), "{kind} {dims} {policy}: other results through the traits");
    }
}

/// On a ring of 8 under uniform traffic the destinations 1, 2, 3 steps ahead go the positive
/// way and 1, 2, 3 behind the negative; the one 4 away goes either way. With ties drawn per
/// packet both directions carry the same; with every tie positive (SST Merlin's rule) the
/// positive channels carry (1+2+3+4)/8 of that and the negative (1+2+3)/8.
#[test]
fn ring_ties_split_the_half_way_destination_or_send_it_the_positive_way() {
    let loads = |ties: &str| {
        let r = common::run(&format!(
            "[topology]\nkind = \"torus\"\ndims = [8]\n[router]\nvcs = 2\n[routing]\nalgorithm = \"dor\"\nring_ties = \"{ties}\"\n\
             [traffic]\npattern = \"uniform\"\nload = 0.2\n[run]\nwarmup = 2000\ncycles = 40000\nseed = 4\n"
        ));
        let l = &r.links;
        let mean = |dir: i8| {
            let xs: Vec<f64> = (0..l.load.len()).filter(|&i| l.direction[i] == dir).map(|i| l.load[i]).collect();
            xs.iter().sum::<f64>() / xs.len() as f64
        };
        // Uniform traffic excludes the source: a packet takes (1+2+3+2)/7 = 8/7 hops each way
        // on average with ties split, so each channel carries 8/7 of the load.
        let per_unit = 0.2 * 8.0 / 7.0;
        (mean(1) / per_unit, mean(-1) / per_unit)
    };
    let (pos, neg) = loads("random");
    assert!((pos - 1.0).abs() < 0.05 && (neg - 1.0).abs() < 0.05, "random ties: {pos:.3} / {neg:.3}");
    let (pos, neg) = loads("positive");
    assert!((pos - 1.25).abs() < 0.05 && (neg - 0.75).abs() < 0.05, "positive ties: {pos:.3} / {neg:.3}");
}

/// The engine calls `Routing::on_hop` only for algorithms whose `learns_hops` says so and
/// counts the hops of the others itself: every other algorithm's `on_hop` must only count.
#[test]
fn algorithms_that_say_they_learn_nothing_of_their_hops_only_count_them() {
    let networks = [("torus", "dims = [4, 4]"), ("dragonfly", "switches_per_group = 4\nglobal_links_per_switch = 2"), ("hyperx", "dims = [3, 3, 3]"), ("aries", "groups = 3\nchassis = 2\nblades = 3")];
    walk_every_algorithm(routing::Algorithm::ALL.iter().copied(), &networks, &IdleNetwork, |r, before, after, hop| {
        let mut counted = *before;
        counted.count_hop(hop);
        if !r.learns_hops() {
            assert_eq!(format!("{after:?}"), format!("{counted:?}"), "{}: on_hop does more than count, and learns_hops says no", r.name());
        }
    });
}
