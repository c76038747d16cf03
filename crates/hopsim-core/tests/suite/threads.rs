//! One run split across threads (`run.threads`) gives bit-identical results to one thread,
//! whatever the thread count: on a torus, a HyperX with Valiant (random intermediates), a
//! Dragonfly with UGAL (adaptive, local and global), the Aries network's adaptive routing,
//! wormhole flow control, a deadlocking network, and workloads that make the NICs and the
//! run's own thread work while the switches step (ping-pong, bandwidth windows under a GET
//! protocol, an allreduce job beside background traffic), and also when each thread delivers
//! and steps block by block of switches (engine/blocks.rs).
use crate::common;

/// Everything a run reports except its wall-clock speed.
fn fingerprint(r: &hopsim_core::RunResult) -> String {
    let mut r = r.clone();
    r.metrics.wall_seconds = 0.0;
    r.metrics.router_cycles_per_second = 0.0;
    r.metrics.phits_moved_per_second = 0.0;
    serde_json::to_string(&r).unwrap()
}

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
    // Saturated: heads meet at every switch each cycle and Valiant draws their intermediates.
    let r = same_on_1_2_3_threads(
        "[topology]\nkind = \"hyperx\"\ndims = [4, 4]\nservers_per_switch = 4\n[router]\nvcs = 4\n\
         [routing]\nalgorithm = \"valiant\"\nvc_policy = \"ladder\"\n[traffic]\npattern = \"uniform\"\nload = 1.0",
        "warmup = 500\ncycles = 2000\nseed = 2",
    );
    assert!(r.metrics.accepted_load < r.metrics.offered_load, "saturated");
}

#[test]
fn a_dragonfly_with_ugal_is_the_same_on_1_2_and_3_threads() {
    // UGAL-L reads its own switch's queues, UGAL-G those of switches other threads own.
    for algorithm in ["ugal_l", "ugal_g"] {
        let r = same_on_1_2_3_threads(
            &format!(
                "[topology]\nkind = \"dragonfly\"\nswitches_per_group = 4\nglobal_links_per_switch = 2\nservers_per_switch = 2\n\
                 [router]\nvcs = 6\njsq_tie_break = \"random\"\n[routing]\nalgorithm = \"{algorithm}\"\n\
                 [traffic]\npattern = \"uniform\"\nload = 0.6"
            ),
            "warmup = 500\ncycles = 2000\nseed = 9",
        );
        assert!(r.metrics.packets_delivered > 1000, "{algorithm}");
    }
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
    let r = same_on_1_2_3_threads(
        "[topology]\nkind = \"torus\"\ndims = [8, 8]\n[router]\nvcs = 1\ninput_buffer = 1\noutput_buffer = 1\n\
         [routing]\nvc_policy = \"none\"\n[traffic]\npattern = \"uniform\"\nload = 1.0",
        "warmup = 100\ncycles = 200000",
    );
    assert!(r.metrics.deadlock, "this ring must deadlock");
}

#[test]
fn a_ping_pong_workload_is_the_same_on_1_2_and_3_threads() {
    let r = same_on_1_2_3_threads(
        "[topology]\nkind = \"torus\"\ndims = [5, 5, 5]\n[link]\ngbytes_per_s = 2.0\n[packet]\nphits = 16\nbytes = 512\n\
         [message]\nbytes = 8192\n[workload]\nkind = \"ping_pong\"\niterations = 3\n[traffic]\nactive_servers = 20",
        "warmup = 0\ncycles = 2000000",
    );
    assert!(r.metrics.workload_complete);
    assert_eq!(r.metrics.samples, 30);
}

#[test]
fn the_aries_adaptive_routing_is_the_same_on_1_2_and_3_threads() {
    // Saturated global links: the adaptive choice reads the queues of its own switch.
    let r = same_on_1_2_3_threads(
        "[topology]\nkind = \"aries\"\ngroups = 3\nchassis = 2\nblades = 4\ncolumn_links = 3\nglobal_links_per_switch = 2\nservers_per_switch = 2\n\
         [router]\nvcs = 8\n[routing]\nalgorithm = \"aries\"\n[traffic]\npattern = \"uniform\"\nload = 0.7",
        "warmup = 500\ncycles = 2000\nseed = 4",
    );
    assert!(r.metrics.packets_delivered > 1000);
}

#[test]
fn bandwidth_windows_under_a_get_protocol_are_the_same_on_1_2_and_3_threads() {
    // Requests answered by the NICs, responses completing messages, acknowledgements opening
    // the next window: packets are made and freed while the switches step.
    let r = same_on_1_2_3_threads(
        "[topology]\nkind = \"torus\"\ndims = [4, 4]\nservers_per_switch = 2\n[packet]\nphits = 5\n[nic]\nprotocol = \"get\"\n\
         [message]\nbytes = 1000\n[workload]\nkind = \"bandwidth\"\niterations = 3\nwindow = 4\nack_bytes = 100\n\
         [traffic]\nactive_servers = 12",
        "warmup = 0\ncycles = 1000000",
    );
    assert!(r.metrics.workload_complete && r.metrics.responses_received > 0);
}

#[test]
fn an_allreduce_job_beside_background_traffic_is_the_same_on_1_2_and_3_threads() {
    let r = same_on_1_2_3_threads(
        "[topology]\nkind = \"torus\"\ndims = [4, 4]\nservers_per_switch = 2\n[packet]\nphits = 4\nbytes = 64\n\
         [traffic]\n\
         [[jobs]]\nname = \"app\"\nranks = 8\nworkload = { motif = \"allreduce\", iterations = 3, bytes = 256 }\n\
         [[jobs]]\nname = \"noise\"\nranks = 16\nworkload = { motif = \"bernoulli\", load = 0.3, bytes = 64 }\n\
         background = true\nallocation = { policy = \"linear\", offset = 16 }",
        "warmup = 0\ncycles = 1000000",
    );
    assert!(r.jobs[0].complete && r.jobs[1].messages > 0);
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
