//! One run split across threads (`run.threads`) gives bit-identical results to one thread,
//! whatever the thread count: on a torus, a HyperX with Valiant (random intermediates), a
//! Dragonfly with UGAL (adaptive, local and global), the Aries network's adaptive routing,
//! wormhole flow control, a deadlocking network, and workloads that make the NICs and the
//! run's own thread work while the switches step (ping-pong, bandwidth windows under a GET
//! protocol, an allreduce job beside background traffic), and also when each thread delivers
//! and steps block by block of switches (engine/blocks.rs).
use crate::common::{self, fingerprint, nets};

/// A run on `threads` threads with every phase of every cycle split among them (the small
/// networks here would otherwise do each phase on one thread), delivering and stepping in
/// blocks of `1 << shift` switches if given (they would otherwise be one block), checked as
/// `common::run` does.
fn run_split(toml: &str, shift: Option<u32>) -> hopsim_core::RunResult {
    let spec = hopsim_core::spec::from_toml_str(toml).unwrap_or_else(|e| panic!("bad spec: {e}\n{toml}"));
    let mut sim = hopsim_core::engine::Simulation::new(&spec).unwrap_or_else(|e| panic!("bad spec: {e}"));
    sim.split_every_phase();
    if let Some(shift) = shift {
        sim.walk_in_blocks(shift);
    }
    let r = sim.run();
    assert!(r.metrics.phits_conserved, "phits not conserved: {}", r.metrics.deadlock_where);
    assert!(r.metrics.credits_conserved, "credits not conserved: {}", r.metrics.deadlock_where);
    r
}

/// `body` (a spec without `[run]`) with `run` lines, on 1, 2 and 3 threads, and on each
/// delivering and stepping block by block of 4 switches, as far larger networks do: all the
/// same as one thread delivering every event of a cycle before any step.
fn same_on_1_2_3_threads(body: &str, run: &str) -> hopsim_core::RunResult {
    let with = |t: usize, shift| run_split(&format!("{body}\n[run]\n{run}\nthreads = {t}\n"), shift);
    let one = with(1, None);
    let print = fingerprint(&one);
    for (t, shift) in [(2, None), (3, None), (1, Some(2)), (2, Some(2)), (3, Some(2))] {
        assert_eq!(fingerprint(&with(t, shift)), print, "{t} threads, blocks {shift:?}, differ from one thread on\n{body}");
    }
    one
}

#[test]
fn a_torus_is_the_same_on_1_2_and_3_threads() {
    let r = same_on_1_2_3_threads(
        "[topology]\nkind = \"torus\"\ndims = [6, 6, 6]\n[traffic]\npattern = \"uniform\"\nload = 0.5",
        "warmup = 500\ncycles = 2000\nseed = 5",
    );
    assert!(r.metrics.packets_delivered > 1000);
}

#[test]
fn a_hyperx_with_valiant_is_the_same_on_1_2_and_3_threads() {
    let r = same_on_1_2_3_threads(nets::HYPERX_VALIANT_SATURATED, "warmup = 500\ncycles = 2000\nseed = 2");
    assert!(r.metrics.accepted_load < r.metrics.offered_load, "saturated");
}

#[test]
fn a_dragonfly_with_ugal_is_the_same_on_1_2_and_3_threads() {
    // UGAL-L reads its own switch's queues, UGAL-G those of switches other threads own.
    for algorithm in ["ugal_l", "ugal_g"] {
        let r = same_on_1_2_3_threads(&nets::dragonfly_ugal(algorithm), "warmup = 500\ncycles = 2000\nseed = 9");
        assert!(r.metrics.packets_delivered > 1000, "{algorithm}");
    }
    // UGAL-G routing heads inside their switches' steps, which other threads run at once:
    // what it reads of other switches is the last cycle's end.
    let at_front = nets::dragonfly_ugal("ugal_g").replace("[router]\n", "[router]\nnext_head_routing = \"at_front\"\n");
    let r = same_on_1_2_3_threads(&at_front, "warmup = 500\ncycles = 2000\nseed = 9");
    assert!(r.metrics.packets_delivered > 1000, "at_front");
}

#[test]
fn wormhole_flow_control_is_the_same_on_1_2_and_3_threads() {
    // A packet spans several switches, owned by different threads.
    same_on_1_2_3_threads(
        "[topology]\nkind = \"torus\"\ndims = [8, 8]\n[router]\nflow_control = \"wormhole\"\ninput_buffer_phits = 4\n\
         [traffic]\npattern = \"uniform\"\nload = 0.4",
        "warmup = 300\ncycles = 1500\nseed = 3",
    );
}

#[test]
fn a_deadlock_is_found_at_the_same_cycle_on_1_2_and_3_threads() {
    // A ring without a dateline deadlocks under load; the watchdog and the detector run on
    // the run's own thread over the same state.
    let r = same_on_1_2_3_threads(nets::DEADLOCKING_RING, "warmup = 100\ncycles = 200000");
    assert!(r.metrics.deadlock, "this ring must deadlock");
}

#[test]
fn a_ping_pong_workload_is_the_same_on_1_2_and_3_threads() {
    let r = same_on_1_2_3_threads(&nets::ping_pong("[5, 5, 5]", 20), "warmup = 0\ncycles = 2000000");
    assert!(r.metrics.workload_complete);
    assert_eq!(r.metrics.samples, 30);
}

#[test]
fn the_aries_adaptive_routing_is_the_same_on_1_2_and_3_threads() {
    let r = same_on_1_2_3_threads(nets::ARIES_ADAPTIVE, "warmup = 500\ncycles = 2000\nseed = 4");
    assert!(r.metrics.packets_delivered > 1000);
}

#[test]
fn bandwidth_windows_under_a_get_protocol_are_the_same_on_1_2_and_3_threads() {
    // Packets are made and freed while the switches step.
    let r = same_on_1_2_3_threads(nets::GET_BANDWIDTH_WINDOWS, "warmup = 0\ncycles = 1000000");
    assert!(r.metrics.workload_complete && r.metrics.responses_received > 0);
}

#[test]
fn an_allreduce_job_beside_background_traffic_is_the_same_on_1_2_and_3_threads() {
    let r = same_on_1_2_3_threads(nets::ALLREDUCE_BESIDE_BACKGROUND, "warmup = 0\ncycles = 1000000");
    assert!(r.jobs[0].complete && r.jobs[1].messages > 0);
}

#[test]
fn a_run_draining_past_its_window_is_the_same_on_1_2_and_3_threads() {
    // The run's thread fires the next cycle's timers while the others step only when the
    // loop is sure to reach that cycle: a drain ends as soon as its last measured packet is
    // delivered, which those timers must not outrun.
    let r = same_on_1_2_3_threads("[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\npattern = \"uniform\"\nload = 0.9", "warmup = 100\ncycles = 400\ndrain = 20000");
    assert!(r.metrics.packets_generated > 0);
}

#[test]
fn more_threads_than_switches_run_one_per_switch() {
    same_on_1_2_3_threads("[topology]\nkind = \"torus\"\ndims = [2]\n[traffic]\nload = 0.3", "warmup = 100\ncycles = 500");
}

#[test]
fn zero_threads_is_refused_naming_the_key() {
    let err = hopsim_core::spec::from_toml_str("[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\nload = 0.1\n[run]\nthreads = 0\n")
        .expect_err("run.threads = 0 is refused");
    assert_eq!(err.key, "run.threads", "{err}");
}

#[test]
fn a_small_network_keeps_its_phases_on_one_thread_with_the_same_results() {
    // Without `split_every_phase`: few switches a cycle, so every phase stays on the run's
    // thread, and the results are those of one thread.
    let body = "[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\nload = 0.4\n[run]\nwarmup = 200\ncycles = 1000\n";
    let one = common::run(&format!("{body}threads = 1\n"));
    let two = common::run(&format!("{body}threads = 2\n"));
    assert_eq!(fingerprint(&one), fingerprint(&two));
}
