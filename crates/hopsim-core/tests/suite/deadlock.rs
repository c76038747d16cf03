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
