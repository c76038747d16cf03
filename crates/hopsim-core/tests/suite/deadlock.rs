//! DOR with a dateline never deadlocks, even saturated for a long time; without the dateline
//! (one VC) the watchdog catches the ring deadlock.
use crate::common;

fn saturated(dims: &str, fc: &str, policy: &str, vcs: usize, cycles: u64) -> hopsim_core::RunResult {
    common::run(&format!(
        r#"[topology]
kind = "torus"
dims = {dims}
[router]
vcs = {vcs}
flow_control = "{fc}"
input_buffer = 1
output_buffer = 1
[routing]
vc_policy = "{policy}"
[traffic]
load = 1.0
[run]
warmup = 0
cycles = {cycles}
watchdog = 3000
"#
    ))
}

#[test]
fn dor_dateline_survives_saturation() {
    for (dims, fc) in [("[8, 8]", "vct"), ("[4, 4, 4]", "vct"), ("[8, 8]", "wormhole"), ("[5]", "vct"), ("[3, 3, 2, 2]", "wormhole")] {
        for policy in ["dateline", "dateline_partition"] {
            let m = saturated(dims, fc, policy, 2, 40_000).metrics;
            assert!(!m.deadlock, "{dims} {fc} {policy}: {}", m.deadlock_where);
            assert!(m.accepted_load > 0.1, "{dims} {fc} {policy}: accepted {}", m.accepted_load);
        }
    }
}

#[test]
fn watchdog_catches_ring_deadlock_without_dateline() {
    for fc in ["vct", "wormhole"] {
        let m = saturated("[8, 8]", fc, "none", 1, 200_000).metrics;
        assert!(m.deadlock, "{fc}: expected a deadlock");
        assert!(m.deadlock_cycle.unwrap() < 200_000);
        assert!(m.deadlock_where.contains("switch"), "{}", m.deadlock_where);
        assert!(m.packets_in_flight_end > 0);
    }
}

#[test]
fn mesh_dor_needs_no_dateline() {
    let m = common::run(
        "[topology]\nkind = \"mesh\"\ndims = [6, 6]\n[router]\nvcs = 1\n[routing]\nvc_policy = \"none\"\n[traffic]\nload = 1.0\n[run]\nwarmup = 0\ncycles = 30000\nwatchdog = 3000\n",
    )
    .metrics;
    assert!(!m.deadlock, "{}", m.deadlock_where);
}

/// A channel of a reported wait-for cycle: upstream switch, switch, VC.
#[derive(Debug, PartialEq)]
struct Channel {
    from: Vec<usize>,
    to: Vec<usize>,
}

/// The channels of `deadlock_where`, as `switch a [x, y] -> switch b [x, y] vc v; ...`.
fn cycle_channels(place: &str) -> Vec<Channel> {
    let list = place.split("waiting for the next: ").nth(1).unwrap_or_else(|| panic!("no cycle in {place:?}"));
    let coords = |s: &str| -> Vec<usize> {
        let inner = s.split('[').nth(1).and_then(|t| t.split(']').next()).unwrap_or_else(|| panic!("no coordinates in {s:?}"));
        inner.split(", ").map(|c| c.parse().unwrap()).collect()
    };
    list.split("; ")
        .map(|ch| {
            let (from, to) = ch.split_once(" -> ").unwrap_or_else(|| panic!("not a channel: {ch:?}"));
            Channel { from: coords(from), to: coords(to) }
        })
        .collect()
}

fn one_vc_none(dims: &str, fc: &str, load: f64, seed: u64) -> hopsim_core::RunResult {
    common::run(&format!(
        "[topology]\nkind = \"torus\"\ndims = {dims}\n[router]\nvcs = 1\nflow_control = \"{fc}\"\n[routing]\nvc_policy = \"none\"\n[traffic]\nload = {load}\n[run]\nwarmup = 0\ncycles = 30000\nseed = {seed}\n"
    ))
}

#[test]
fn partial_deadlocks_are_found_with_their_cycle_of_channels() {
    // Rings and tori under DOR with one VC and no dateline: every one of these wedges part of
    // the network while other flows still move (the default watchdog of 20000 cycles
    // without any movement never fires in these 30000 cycles).
    let mut cases = vec![
        ("[8]", "vct", 1.0, 1),
        ("[8]", "wormhole", 1.0, 1),
        ("[8, 8]", "vct", 0.5, 1),
        ("[8, 8]", "wormhole", 1.0, 2),
        ("[6, 6]", "vct", 0.8, 2),
        ("[4, 4, 4]", "vct", 1.0, 1),
        ("[4, 4, 4]", "wormhole", 1.0, 2),
    ];
    for seed in 1..=3 {
        for load in [0.6, 0.8] {
            cases.extend([("[8]", "vct", load, seed), ("[10]", "vct", load, seed), ("[8, 8]", "vct", load, seed)]);
        }
    }
    for (dims, fc, load, seed) in cases {
        let what = format!("{dims} {fc} load {load} seed {seed}");
        let m = one_vc_none(dims, fc, load, seed).metrics;
        assert!(m.deadlock, "{what}: no deadlock found");
        let formed = m.deadlock_cycle.unwrap();
        assert!(formed < m.cycles && m.cycles < 30_000 && m.cycles - formed <= 2 * 1024 + 1, "{what}: formed {formed}, stopped at {}", m.cycles);
        assert!(m.packets_in_flight_end > 0);
        let channels = cycle_channels(&m.deadlock_where);
        let side: usize = dims.trim_matches(|c| c == '[' || c == ']').split(", ").next().unwrap().parse().unwrap();
        // DOR with one VC: the cycle is a whole ring, one dimension, one direction, each
        // channel leading into the next and the last into the first.
        assert_eq!(channels.len(), side, "{what}: {}", m.deadlock_where);
        for (i, c) in channels.iter().enumerate() {
            let next = &channels[(i + 1) % channels.len()];
            assert_eq!(c.to, next.from, "{what}: channel {i} does not lead into the next: {}", m.deadlock_where);
            let differ = c.from.iter().zip(&c.to).filter(|(a, b)| a != b).count();
            assert_eq!(differ, 1, "{what}: not a link of one ring: {c:?}");
        }
        // Partial: some input VCs of the network can still move.
        let stuck: usize = m.deadlock_where.split("; ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        let input_vcs = m.switches as usize * (2 * dims.split(',').count() + 1);
        assert!(stuck >= side && stuck < input_vcs, "{what}: {stuck} of {input_vcs} input VCs stuck");
    }
}

#[test]
fn deadlock_free_configurations_never_report_one_at_saturation() {
    // Saturated for long, under several seeds: congestion and tree saturation, never a
    // cycle of waits (the routing and low_diameter suites check many more).
    let cases = [
        ("[6, 6]", "vct", "dor", "dateline", 2),
        ("[6, 6]", "wormhole", "dor", "dateline_partition", 2),
        ("[5, 5]", "vct", "min_adaptive", "escape", 3),
        ("[4, 4]", "vct", "rdr", "escape", 3),
        ("[4, 4]", "wormhole", "valiant", "phase_dateline", 4),
        ("[8]", "vct", "romm", "phase_dateline", 4),
    ];
    for (dims, fc, algo, policy, vcs) in cases {
        for seed in 1..=3 {
            let m = common::run(&format!(
                "[topology]\nkind = \"torus\"\ndims = {dims}\n[router]\nvcs = {vcs}\nflow_control = \"{fc}\"\ninput_buffer = 1\noutput_buffer = 1\n[routing]\nalgorithm = \"{algo}\"\nvc_policy = \"{policy}\"\n[traffic]\npattern = \"uniform\"\nload = 1.0\n[run]\nwarmup = 0\ncycles = 20000\nseed = {seed}\n"
            ))
            .metrics;
            assert!(!m.deadlock, "{dims} {fc} {algo} {policy} seed {seed}: {}", m.deadlock_where);
            assert!(m.accepted_load > 0.05, "{dims} {fc} {algo} seed {seed}: accepted {}", m.accepted_load);
        }
    }
}
