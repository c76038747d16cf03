//! Zero-load latency equals the documented formula (docs/model.md):
//! T0 = (H + 2) L + (H + 1)(d + 1) + (P - 1), for H switch-to-switch hops, link latency L,
//! pipeline delay d and P phits per packet, under VCT and wormhole alike.
use crate::common;

fn formula(h: u64, l: u64, d: u64, p: u64) -> f64 {
    ((h + 2) * l + (h + 1) * (d + 1) + p - 1) as f64
}

/// One server sends to the server `shift` switches away: no other traffic, no contention.
fn one_flow(shift: &str, l: u64, d: u64, p: u64, fc: &str, dims: &str) -> hopsim_core::RunResult {
    common::run(&format!(
        r#"[topology]
kind = "torus"
dims = {dims}
[link]
latency = {l}
[router]
pipeline_delay = {d}
flow_control = "{fc}"
[packet]
phits = {p}
[traffic]
pattern = "shift"
shift = {shift}
load = 0.02
active_servers = 1
[run]
warmup = 1000
cycles = 20000
"#
    ))
}

#[test]
fn latency_matches_formula_for_several_distances_and_parameters() {
    for (shift, h) in [("[1, 0]", 1), ("[2, 1]", 3), ("[4, 3]", 7), ("[-3, -4]", 7), ("[0, 0]", 0)] {
        for (l, d, p) in [(1, 1, 16), (3, 0, 8), (2, 4, 1), (5, 2, 32)] {
            for fc in ["vct", "wormhole"] {
                let r = one_flow(shift, l, d, p, fc, "[8, 8]");
                let m = &r.metrics;
                assert!(m.packets_measured_delivered > 5, "too few packets");
                assert_eq!(m.hops_mean, h as f64, "hops for shift {shift}");
                let t0 = formula(h, l, d, p);
                // Packets of one flow may queue behind each other at the NIC only; the network
                // latency (injection to ejection) is exactly the formula for every packet.
                assert!((m.network_latency_mean - t0).abs() < 1e-9, "{fc} shift {shift} L={l} d={d} P={p}: {} != {t0}", m.network_latency_mean);
                assert_eq!(m.packet_latency_p50, t0, "{fc} shift {shift} L={l} d={d} P={p}");
                assert!((m.zero_load_latency - t0).abs() < 1e-9);
            }
        }
    }
}

#[test]
fn zero_load_latency_on_3d_and_5d_tori() {
    let r = one_flow("[5, 5, 5]", 1, 1, 16, "vct", "[10, 10, 10]");
    assert_eq!(r.metrics.hops_mean, 15.0);
    assert_eq!(r.metrics.network_latency_mean, formula(15, 1, 1, 16));
    let r = one_flow("[2, 2, 2, 2, 1]", 2, 1, 4, "wormhole", "[4, 4, 4, 4, 2]");
    assert_eq!(r.metrics.hops_mean, 9.0);
    assert_eq!(r.metrics.network_latency_mean, formula(9, 2, 1, 4));
}

#[test]
fn mean_latency_at_low_uniform_load_is_close_to_formula() {
    let r = common::run(&common::torus("[8, 8]", "[traffic]\nload = 0.02\n[run]\nwarmup = 2000\ncycles = 40000\n"));
    let m = &r.metrics;
    // Mean distance of an 8x8 torus without self-traffic: 4 * 64 / 63.
    assert!((m.hops_mean - 256.0 / 63.0).abs() < 0.05, "hops {}", m.hops_mean);
    let rel = (m.network_latency_mean - m.zero_load_latency) / m.zero_load_latency;
    assert!((0.0..0.03).contains(&rel), "network latency {} vs zero-load {}", m.network_latency_mean, m.zero_load_latency);
}

/// With link classes of their own latency the formula sums the links' latencies:
/// T0 = sum of the latencies of the injection link, the H hops and the ejection link
///      + (H + 1)(d + 1) + (P - 1).
fn classes_flow(shift: &str, extra: &str) -> hopsim_core::RunResult {
    common::run(&format!(
        "[topology]\nkind = \"torus\"\ndims = [8, 8]\n[link]\nlatency = 2\n{extra}\n[router]\npipeline_delay = 1\n[packet]\nphits = 8\n[traffic]\npattern = \"shift\"\nshift = {shift}\nload = 0.02\nactive_servers = 1\n[run]\nwarmup = 1000\ncycles = 20000\n"
    ))
}

#[test]
fn zero_load_latency_sums_the_latency_of_each_link_class() {
    let (l, d, p) = (2, 1, 8);
    for (shift, h0, h1) in [("[2, 1]", 2, 1), ("[0, 3]", 0, 3), ("[-1, 0]", 1, 0)] {
        for (inj, l1) in [(1, 7), (5, 2), (3, 30)] {
            let r = classes_flow(shift, &format!("[link.dim1]\nlatency = {l1}\n[link.injection]\nlatency = {inj}"));
            let m = &r.metrics;
            let h = h0 + h1;
            let t0 = (2 * inj + h0 * l + h1 * l1 + (h + 1) * (d + 1) + p - 1) as f64;
            assert_eq!(m.hops_mean, h as f64);
            assert_eq!(m.packet_latency_p50, t0, "shift {shift} injection {inj} dim1 {l1}");
            assert!((m.network_latency_mean - t0).abs() < 1e-9, "shift {shift}: {} != {t0}", m.network_latency_mean);
            assert!((m.zero_load_latency - t0).abs() < 1e-9, "shift {shift}: zero-load {} != {t0}", m.zero_load_latency);
        }
    }
    // Without [link.<class>] tables the latency is link.latency everywhere: the classic formula.
    let r = classes_flow("[2, 1]", "");
    assert_eq!(r.metrics.network_latency_mean, formula(3, l, d, p));
}

/// On Aries (row, column, global and injection links of four latencies) two servers that
/// send only to each other never meet in a buffer: their minimal paths run in opposite
/// directions, and with one global link per pair of groups (7 groups of 6 routers, h = 1)
/// all paths of one flow are equally long, so a packet never catches up with the one before;
/// input buffers of 32 packets cover the credit round trip of the long global links.
/// Each packet takes exactly its path's zero-load latency: the time measured equals the
/// formula summed over the links each packet crossed.
#[test]
fn aries_zero_load_latency_follows_the_link_classes() {
    let run = |links: &str, seed: u64| {
        common::run(&format!(
            "[topology]\nkind = \"aries\"\nchassis = 2\nblades = 3\ncolumn_links = 2\nglobal_links_per_switch = 1\ngroups = 7\nservers_per_switch = 2\n[link]\nlatency = 2\n{links}\n[router]\nvcs = 5\ninput_buffer = 32\n[routing]\nalgorithm = \"minimal\"\n[traffic]\nload = 0.05\nactive_servers = 2\n[run]\nseed = {seed}\nwarmup = 1000\ncycles = 40000\n"
        ))
        .metrics
    };
    let mut longer = 0.0;
    for seed in 1..=4 {
        let same = run("", seed);
        let classes = run("[link.global]\nlatency = 60\n[link.row]\nlatency = 3\n[link.column]\nlatency = 5\n[link.injection]\nlatency = 1", seed);
        for m in [&same, &classes] {
            assert!(m.packets_measured_delivered > 100);
            assert!((m.network_latency_mean - m.zero_load_latency).abs() < 1e-9, "seed {seed}: {} != {}", m.network_latency_mean, m.zero_load_latency);
        }
        // Same packets, same paths: only the link latencies differ.
        assert_eq!((same.packets_measured_delivered, same.hops_mean), (classes.packets_measured_delivered, classes.hops_mean));
        longer += classes.zero_load_latency - same.zero_load_latency;
    }
    assert!(longer > 50.0, "the global links' 58 extra cycles show: {longer}");
}

/// A link class with 3/4 of the fastest class's bandwidth carries 0.75 phits per cycle: one
/// server flooding its neighbour over such links gets exactly that, in the long run.
#[test]
fn a_slower_link_class_carries_its_share_of_a_phit_per_cycle() {
    for fc in ["vct", "wormhole"] {
        one_slow_class(fc);
    }
}

fn one_slow_class(fc: &str) {
    let run = |links: &str| {
        common::run(&format!(
            "[topology]\nkind = \"torus\"\ndims = [8]\n[link]\ngbytes_per_s = 10.0\n{links}\n[router]\nflow_control = \"{fc}\"\n[traffic]\npattern = \"shift\"\nshift = [1]\nload = 1.0\nactive_servers = 1\n[run]\nwarmup = 2000\ncycles = 48000\n"
        ))
        .metrics
    };
    let fast = run("");
    let slow = run("[link.dim0]\ngbytes_per_s = 7.5");
    // (The fastest links lose a little to the round trip of credits; the slow link is the
    // bottleneck and runs at its full rate.)
    assert!(fast.accepted_load > 0.95, "{fc}: {}", fast.accepted_load);
    assert!((slow.accepted_load - 0.75).abs() < 1e-3, "{fc}: {}", slow.accepted_load);
    assert!((slow.link_load_max - 0.75).abs() < 1e-3, "{fc}: {}", slow.link_load_max);
    // Faster injection links make the cycle (a phit time on the fastest link) half as long:
    // the 10 GB/s network links carry half a phit per cycle.
    let faster = run("[link.injection]\ngbytes_per_s = 20.0");
    assert!((faster.accepted_load - 0.5).abs() < 1e-3, "{fc}: {}", faster.accepted_load);
}

/// `[link.<class>]` tables that repeat `[link]` change nothing: the same run, bit for bit.
#[test]
fn class_tables_equal_to_the_defaults_change_nothing() {
    let run = |links: &str| {
        let r = common::run(&format!(
            "[topology]\nkind = \"torus\"\ndims = [4, 4]\nservers_per_switch = 2\n[link]\nlatency = 2\ngbytes_per_s = 5.25\n{links}\n[routing]\nalgorithm = \"rdr\"\n[router]\nvcs = 3\n[traffic]\nload = 0.7\n[run]\nwarmup = 1000\ncycles = 5000\n"
        ));
        let mut m = serde_json::to_value(&r.metrics).unwrap();
        for k in ["wall_seconds", "router_cycles_per_second", "phits_moved_per_second"] {
            m.as_object_mut().unwrap().remove(k);
        }
        (m, serde_json::to_value(&r.links).unwrap())
    };
    let plain = run("");
    assert_eq!(plain, run("[link.dim0]\nlatency = 2\n[link.injection]\ngbytes_per_s = 5.25\n[link.dim1]\nlatency = 2\ngbytes_per_s = 5.25"));
    assert_ne!(plain, run("[link.dim1]\nlatency = 3"), "a different latency shows");
}
