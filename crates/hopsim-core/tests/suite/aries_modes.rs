//! Aries routing modes (`routing.algorithm = "aries"`): which paths each mode takes, the bias
//! at work, in-order delivery, and deadlock freedom at saturation with the `auto` VC policy.
use crate::common;

use hopsim_core::routing::{self, AriesMode, CandidateBuf, Congestion, Hop, IdleNetwork, RouteCtx, RouteState, Routing, Rng};
use hopsim_core::topology::{self, Topology};
use hopsim_core::spec;
use rand::{Rng as _, SeedableRng};
use std::sync::Arc;

/// 4 groups of 2 chassis x 3 routers, 2 servers each, 2 global links per router (bundles of 4).
const ARIES: &str = "kind = \"aries\"\ngroups = 4\nchassis = 2\nblades = 3\ncolumn_links = 2\nglobal_links_per_switch = 2\nservers_per_switch = 2";

fn run(mode: &str, traffic: &str, load: f64, extra: &str) -> hopsim_core::RunResult {
    common::run(&format!(
        "[topology]\n{ARIES}\n[router]\nvcs = 8\n[routing]\nalgorithm = \"aries\"\nmode = \"{mode}\"\n{extra}\n[traffic]\n{traffic}\nload = {load}\n[run]\nwarmup = 2000\ncycles = 8000\nwatchdog = 3000\nseed = 5\n"
    ))
}

fn build(mode: &str) -> (Arc<dyn Topology>, Arc<dyn Routing>) {
    let s = spec::from_toml_str(&format!("[topology]\n{ARIES}\n[router]\nvcs = 8\n[routing]\nalgorithm = \"aries\"\nmode = \"{mode}\"\n[traffic]\nload = 0.1\n")).unwrap();
    let t = topology::build(&s).unwrap();
    let r = routing::build(&s, &t).unwrap_or_else(|e| panic!("{e}"));
    (t, r)
}

/// Walk a packet hop by hop on an idle network; returns the groups of the switches it passes
/// through, in order (consecutive repeats merged), and its hops.
fn walk(t: &dyn Topology, r: &dyn Routing, src: usize, dst: usize, rng: &mut Rng) -> (Vec<usize>, usize, RouteState) {
    let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
    r.on_inject(&mut st, rng);
    let (mut cur, mut hops, mut groups) = (src, 0, vec![t.group_of(src)]);
    let mut out = CandidateBuf::default();
    let mut first = st;
    while cur != dst {
        r.route(&mut RouteCtx { switch: cur, rng, congestion: &IdleNetwork }, &mut st, &mut out.out());
        if hops == 0 {
            first = st;
        }
        let c = out.as_slice()[0];
        r.on_hop(&mut st, cur, &c.hop);
        cur = t.neighbour(cur, c.hop.port as usize).unwrap().switch as usize;
        hops += 1;
        if *groups.last().unwrap() != t.group_of(cur) {
            groups.push(t.group_of(cur));
        }
        assert!(hops <= r.max_hops(), "a path longer than the routing's longest");
    }
    (groups, hops, first)
}

#[test]
fn min_hash_is_minimal_nmin_hash_goes_through_one_intermediate_group() {
    let mut rng = Rng::seed_from_u64(3);
    for mode in ["min_hash", "nmin_hash", "in_order", "adaptive"] {
        let (t, r) = build(mode);
        let n = t.num_switches();
        for _ in 0..2000 {
            let (src, dst) = (rng.gen_range(0..n), rng.gen_range(0..n));
            if src == dst {
                continue;
            }
            let (groups, hops, st) = walk(t.as_ref(), r.as_ref(), src, dst, &mut rng);
            let (gs, gd) = (t.group_of(src), t.group_of(dst));
            match mode {
                "nmin_hash" => {
                    assert!(st.valiant, "nmin_hash routed {src} -> {dst} minimally");
                    if gs != gd {
                        assert_eq!(groups.len(), 3, "{src} -> {dst}: groups {groups:?}");
                        assert!(groups[1] != gs && groups[1] != gd);
                        assert!(hops <= 8);
                    } else {
                        assert_eq!(groups, vec![gs]);
                        assert!(hops <= 4);
                    }
                }
                _ => {
                    // On an idle network the adaptive mode takes a minimal path too.
                    assert!(!st.valiant, "{mode} routed {src} -> {dst} non-minimally");
                    let expect = if gs == gd { vec![gs] } else { vec![gs, gd] };
                    assert_eq!(groups, expect, "{mode}");
                    assert!(hops <= if gs == gd { 2 } else { 5 }, "{mode}: {hops} hops");
                }
            }
        }
    }
}

/// Queues the test sets on the source router's ports.
struct Ports(Vec<u32>);

impl Congestion for Ports {
    fn port_queue(&self, _switch: usize, port: usize) -> u32 {
        self.0[port]
    }
    fn port_free(&self, _switch: usize, port: usize) -> u32 {
        panic!("the Aries modes read queues, not room (port {port})")
    }
}

#[test]
fn the_bias_keeps_packets_minimal_until_the_minimal_queue_outweighs_it() {
    // Every port of the source router but one loaded: the adaptive modes go non-minimally
    // exactly when a non-minimal first hop is emptier by more than the bias.
    let (t, _) = build("adaptive");
    let (src, dst) = (0, t.num_switches() - 1);
    let ports = t.network_ports(src);
    let mut rng = Rng::seed_from_u64(9);
    let share = |mode: &str, load: &Ports, rng: &mut Rng| {
        let (_, r) = build(mode);
        let mut nonmin = 0;
        for _ in 0..400 {
            let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
            r.on_inject(&mut st, rng);
            let mut out = CandidateBuf::default();
            r.route(&mut RouteCtx { switch: src, rng, congestion: load }, &mut st, &mut out.out());
            nonmin += usize::from(st.valiant);
        }
        nonmin as f64 / 400.0
    };
    let idle = Ports(vec![0; ports]);
    let busy = Ports(vec![40; ports]);
    assert_eq!(share("adaptive", &idle, &mut rng), 0.0, "an idle network: ties go minimal");
    assert_eq!(share("adaptive", &busy, &mut rng), 0.0, "equal queues: the shorter path");
    // Minimal first hops full (every port a minimal path may start on), others empty.
    let mut lopsided = vec![0; ports];
    let (probe, r) = build("min_hash");
    for _ in 0..200 {
        let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, header: rng.gen(), ..Default::default() };
        r.on_inject(&mut st, &mut rng);
        let mut out = CandidateBuf::default();
        r.route(&mut RouteCtx { switch: src, rng: &mut rng, congestion: &IdleNetwork }, &mut st, &mut out.out());
        let Hop { port, .. } = out.as_slice()[0].hop;
        lopsided[port as usize] = 48;
    }
    let _ = probe;
    let lopsided = Ports(lopsided);
    let (adaptive, low, high) = (share("adaptive", &lopsided, &mut rng), share("adaptive_low_bias", &lopsided, &mut rng), share("adaptive_high_bias", &lopsided, &mut rng));
    // 48 phits on the minimal hop, times its hops: more than the low bias (12: an eighth of a
    // VC's 96 phits) plus nothing, not more than the high bias (48) plus nothing.
    // (Non-minimal candidates whose first hop is a loaded minimal port stay behind.)
    assert!(adaptive > 0.2, "adaptive {adaptive}");
    assert!(low > 0.2 && low <= adaptive, "low bias {low}, adaptive {adaptive}");
    assert_eq!(high, 0.0, "high bias {high}");
}

#[test]
fn in_order_delivers_every_message_in_order() {
    let msgs = "pattern = \"uniform\"";
    let extra = "[message]\npackets = 8";
    let r = common::run(&format!(
        "[topology]\n{ARIES}\n[router]\nvcs = 8\n[routing]\nalgorithm = \"aries\"\nmode = \"in_order\"\n[traffic]\n{msgs}\nload = 0.5\n{extra}\n[run]\nwarmup = 1000\ncycles = 6000\nseed = 2\n"
    ));
    assert_eq!(r.metrics.packets_out_of_order, 0);
    assert!(r.metrics.messages_measured_delivered > 100);
    // The adaptive mode, with several paths and VCs per pair, does reorder: the check can fail.
    let r = common::run(&format!(
        "[topology]\n{ARIES}\n[router]\nvcs = 8\n[routing]\nalgorithm = \"aries\"\nmode = \"adaptive\"\n[traffic]\n{msgs}\nload = 0.5\n{extra}\n[run]\nwarmup = 1000\ncycles = 6000\nseed = 2\n"
    ));
    assert!(r.metrics.packets_out_of_order > 0);
}

#[test]
fn every_mode_is_deadlock_free_at_saturation_and_high_bias_is_more_minimal() {
    for traffic in ["pattern = \"uniform\"", "pattern = \"adv\"\nadv_offset = 1"] {
        for mode in AriesMode::ALL {
            let r = run(mode.name(), traffic, 1.0, "");
            assert!(!r.metrics.deadlock, "{} {traffic}: {}", mode.name(), r.metrics.deadlock_where);
            assert!(r.metrics.accepted_load > 0.05, "{} {traffic}: {}", mode.name(), r.metrics.accepted_load);
            let f = r.metrics.per_mode[&format!("nonminimal_fraction_{}", mode.name())];
            match mode {
                AriesMode::MinHash | AriesMode::InOrder => assert_eq!(f, 0.0),
                // Every packet between two routers (ADV has no pair on one router).
                AriesMode::NminHash if traffic.contains("adv") => assert_eq!(f, 1.0),
                AriesMode::NminHash => assert!(f > 0.95, "{f}"),
                _ => {}
            }
        }
    }
    for load in [0.2, 0.4, 0.7] {
        let (d, h) = (run("adaptive", "pattern = \"uniform\"", load, ""), run("adaptive_high_bias", "pattern = \"uniform\"", load, ""));
        let (fd, fh) = (d.metrics.nonminimal_fraction, h.metrics.nonminimal_fraction);
        eprintln!("uniform {load}: non-minimal adaptive {fd:.3}, high bias {fh:.3}");
        assert!(fh < fd, "load {load}: high bias {fh} against adaptive {fd}");
    }
}

#[test]
fn a_burst_replaces_the_traffic_for_its_cycles_and_adaptive_routing_follows_it() {
    // Uniform at 0.1, then ADV+1 at 0.3 for 4,000 cycles, then uniform again: the offered
    // load of each 500-cycle bin follows, and the adaptive mode sends a larger share of
    // packets non-minimally during the burst, when ADV's minimal paths are congested.
    let toml = format!(
        "[topology]\n{ARIES}\n[router]\nvcs = 8\n[routing]\nalgorithm = \"aries\"\n[traffic]\npattern = \"uniform\"\nload = 0.1\nadv_offset = 1\n\
         [traffic.burst]\npattern = \"adv\"\nload = 0.3\nstart = 4000\ncycles = 4000\n[run]\nwarmup = 0\ncycles = 12000\ntemporal_bin = 500\nseed = 4\n"
    );
    let r = common::run(&toml);
    let t = &r.temporal;
    let mean = |lo: u64, hi: u64, v: &[f64]| {
        let x: Vec<f64> = t.start.iter().zip(v).filter(|(&s, _)| s >= lo && s < hi).map(|(_, &f)| f).collect();
        x.iter().sum::<f64>() / x.len() as f64
    };
    let (before, during, after) = (mean(1000, 4000, &t.offered_load), mean(4000, 8000, &t.offered_load), mean(9000, 12000, &t.offered_load));
    assert!((before - 0.1).abs() < 0.015 && (during - 0.3).abs() < 0.03 && (after - 0.1).abs() < 0.015, "offered {before:.3} {during:.3} {after:.3}");
    // The run's offered load is what was generated: 0.1 for 8,000 cycles, 0.3 for 4,000.
    let expected = (0.1 * 8000.0 + 0.3 * 4000.0) / 12000.0;
    assert!((r.metrics.offered_load - expected).abs() < 0.01, "offered_load {} against {expected:.3}", r.metrics.offered_load);
    let (nm_before, nm_during) = (mean(1000, 4000, &t.nonminimal_fraction), mean(5000, 8000, &t.nonminimal_fraction));
    assert!(nm_during > nm_before + 0.1, "non-minimal share {nm_before:.3} before the burst, {nm_during:.3} during it");
}

/// The share of packets routed non-minimally per 25-cycle bin (by the cycle they left their
/// NIC), averaged over 8 seeds: uniform traffic at 0.05, a burst of ADV+1 at 0.25 over cycles
/// 4,000-7,000, uniform again. 5 groups of 4 routers, every router holding a link to every
/// other group, global links of `latency` cycles.
fn nonminimal_share_around_a_burst(latency: u32) -> Vec<f64> {
    let mut sum = vec![(0.0, 0u32); 400];
    for seed in 1..=8 {
        let r = common::run(&format!(
            "[topology]\nkind = \"aries\"\ngroups = 5\nchassis = 1\nblades = 4\ncolumn_links = 1\nglobal_links_per_switch = 4\nservers_per_switch = 4\n\
             [link.global]\nlatency = {latency}\n[router]\nvcs = 8\ninput_buffer_phits = 840\noutput_buffer = 2\n[packet]\nphits = 5\n\
             [routing]\nalgorithm = \"aries\"\n[traffic]\npattern = \"uniform\"\nload = 0.05\nadv_offset = 1\n\
             [traffic.burst]\npattern = \"adv\"\nload = 0.25\nstart = 4000\ncycles = 3000\n[run]\nwarmup = 0\ncycles = 10000\ntemporal_bin = 25\nseed = {seed}\n"
        ));
        for (i, &f) in r.temporal.nonminimal_fraction.iter().enumerate() {
            if !f.is_nan() {
                sum[i].0 += f;
                sum[i].1 += 1;
            }
        }
    }
    sum.iter().map(|&(s, n)| if n > 0 { s / n as f64 } else { f64::NAN }).collect()
}

#[test]
fn phantom_congestion_outlasts_a_burst_longer_on_longer_global_links() {
    // After the burst (bin 280 = cycle 7,000) the real congestion is gone within a few
    // hundred cycles, but a router sees its global links' far buffers only through credits,
    // which come back a link latency later: the share of detours stays high for about a
    // credit round trip of the global links (2 x latency), longer on longer links.
    let mut settled = Vec::new();
    for latency in [20u32, 100, 400] {
        let m = nonminimal_share_around_a_burst(latency);
        let mean = |lo: usize, hi: usize| m[lo..hi].iter().sum::<f64>() / (hi - lo) as f64;
        let (before, during) = (mean(100, 160), mean(240, 280));
        assert!(during > before + 0.1, "latency {latency}: {before:.3} before the burst, {during:.3} during it");
        let threshold = before + 0.25 * (during - before);
        let smooth = |i: usize| (m[i - 1] + m[i] + m[i + 1]) / 3.0;
        let cycles = (280..398).find(|&i| smooth(i) <= threshold).map(|i| (i - 280) as u32 * 25).unwrap_or(u32::MAX);
        eprintln!("global latency {latency}: non-minimal {before:.3} before, {during:.3} during; back within a quarter of the rise {cycles} cycles after the burst");
        settled.push(cycles);
    }
    // Measured: 50, 150 and 450 cycles for credit round trips of 40, 200 and 800.
    assert!(settled[0] <= 100 && settled[0] < settled[1] && settled[1] < settled[2], "{settled:?}");
    assert!(settled[2] >= 250 && settled[2] <= 1000, "{settled:?}");
}

#[test]
fn link_loads_per_class_add_up_and_detours_double_the_global_load() {
    let (min, nmin) = (run("min_hash", "pattern = \"adv\"\nadv_offset = 1", 0.1, ""), run("nmin_hash", "pattern = \"adv\"\nadv_offset = 1", 0.1, ""));
    for r in [&min, &nmin] {
        let m = &r.metrics;
        let mut weighted = 0.0;
        for class in ["row", "column", "global"] {
            let n = r.links.class.iter().filter(|&&c| c == class).count() as f64;
            weighted += n * m.per_link_class[&format!("link_load_mean_{class}")];
        }
        assert!((weighted / r.links.class.len() as f64 - m.link_load_mean).abs() < 1e-9);
    }
    // Same accepted load; every detour crosses two global links instead of one.
    assert!((min.metrics.accepted_load - nmin.metrics.accepted_load).abs() < 0.01);
    let ratio = nmin.metrics.per_link_class["link_load_mean_global"] / min.metrics.per_link_class["link_load_mean_global"];
    assert!((ratio - 2.0).abs() < 0.1, "global load ratio {ratio}");
}

#[test]
fn each_link_names_its_far_end_and_the_far_end_links_back() {
    let r = run("adaptive", "", 0.05, "");
    let l = &r.links;
    assert!(!l.switch.is_empty());
    let index: std::collections::HashMap<(u32, u16), usize> = (0..l.switch.len()).map(|i| ((l.switch[i], l.port[i]), i)).collect();
    for i in 0..l.switch.len() {
        // Aries links are bidirectional: the far end's port of the same number leads back,
        // over a link of the same class.
        let back = index[&(l.to_switch[i], l.to_port[i])];
        assert_eq!((l.to_switch[back], l.to_port[back]), (l.switch[i], l.port[i]));
        assert_eq!(l.class[back], l.class[i]);
    }
}
