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
