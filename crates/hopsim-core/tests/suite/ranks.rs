//! One run partitioned over ranks (engine/ranks) gives bit-identical results to one
//! process: here the ranks are threads exchanging through channels what MPI ranks exchange
//! through their communicator (the Python tests run the same on a real MPI).
use crate::common::{self, fingerprint, nets};
use hopsim_core::engine::ranks::{local, RankError};

fn spec(toml: &str) -> hopsim_core::spec::Validated {
    hopsim_core::spec::from_toml_str(toml).unwrap_or_else(|e| panic!("bad spec: {e}\n{toml}"))
}

fn on_ranks(toml: &str, ranks: usize) -> hopsim_core::RunResult {
    let r = local::run(&spec(toml), ranks).unwrap_or_else(|e| panic!("{e:?} on {ranks} ranks\n{toml}"));
    assert!(r.metrics.phits_conserved && r.metrics.credits_conserved, "not conserved on {ranks} ranks: {}", r.metrics.deadlock_where);
    r
}

/// `body` with `run` lines on one process and on 2 and 3 ranks, each rank also delivering
/// and stepping block by block of 4 switches as far larger networks do, and on 2 threads
/// that split every cycle: the same results.
fn same_on_1_2_3_ranks(body: &str, run: &str) -> hopsim_core::RunResult {
    let toml = format!("{body}\n[run]\n{run}\n");
    let one = common::run(&toml);
    let print = fingerprint(&one);
    let threaded = format!("{toml}threads = 2\n");
    for ranks in [2, 3] {
        assert_eq!(fingerprint(&on_ranks(&toml, ranks)), print, "{ranks} ranks differ from one process on\n{toml}");
        let blocks = local::run_in_blocks(&spec(&toml), ranks, 2).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(fingerprint(&blocks), print, "{ranks} ranks in blocks differ from one process on\n{toml}");
        let split = local::run_split(&spec(&threaded), ranks).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(fingerprint(&split), print, "{ranks} ranks of 2 threads differ from one process on\n{threaded}");
    }
    one
}

#[test]
fn a_torus_is_the_same_on_1_2_and_3_ranks() {
    let r = same_on_1_2_3_ranks("[topology]\nkind = \"torus\"\ndims = [6, 6, 6]\n[traffic]\npattern = \"uniform\"\nload = 0.5", "warmup = 500\ncycles = 2000\nseed = 5");
    assert!(r.metrics.packets_delivered > 1000);
}

#[test]
fn a_rank_sends_only_to_the_ranks_it_has_something_for() {
    // An 8x8x4 torus over 4 ranks: each rank holds one z-plane (switches are numbered x
    // first). With DOR, traffic shifted along x stays in each rank's plane; shifted along
    // z it goes to the next plane's rank, whose credits come back: two neighbours. Under
    // uniform traffic, to the neighbours but for the rare cycle a rank sends the sources'
    // NICs the deliveries it has kept for them (once they are more than its 64 servers):
    // a message of several packets travels with its packets, through the ranks
    // between, where Valiant's detours also take it.
    let body = |algorithm: &str, pattern: &str| format!("[topology]\nkind = \"torus\"\ndims = [8, 8, 4]\n[router]\nvcs = 4\n[routing]\nalgorithm = \"{algorithm}\"\n[traffic]\nload = 0.3\n{pattern}\n[run]\nwarmup = 200\ncycles = 800\nseed = 4\n");
    let counted_on = |algorithm: &str, pattern: &str| {
        let toml = body(algorithm, pattern);
        let (result, sent) = local::run_counting(&spec(&toml), 4).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(fingerprint(&result), fingerprint(&common::run(&toml)), "4 ranks differ from one process on\n{toml}");
        sent
    };
    let counted = |pattern: &str| counted_on("dor", pattern);
    for s in counted("pattern = \"shift\"\nshift = [1, 0, 0]") {
        assert!(s.exchanges >= 1000, "{s:?}");
        assert_eq!(s.messages, 0, "nothing leaves a rank's plane: {s:?}");
    }
    for (r, s) in counted("pattern = \"shift\"\nshift = [0, 0, 1]").iter().enumerate() {
        let (next, previous, across) = ((r + 1) % 4, (r + 3) % 4, (r + 2) % 4);
        assert!(s.messages_to[next] > s.exchanges / 2 && s.messages_to[previous] > s.exchanges / 2, "rank {r}: {s:?}");
        assert_eq!(s.messages_to[across], 0, "rank {r} has nothing for the rank across: {s:?}");
        assert!(s.messages_to.iter().all(|&n| n <= s.exchanges), "one message a cycle at most: {s:?}");
    }
    let deliveries_only = |what: &str, sent: &[local::Sent]| {
        for (r, s) in sent.iter().enumerate() {
            assert!(s.messages_to[(r + 2) % 4] <= s.exchanges / 20, "{what}, rank {r}: only deliveries for the rank across: {s:?}");
        }
    };
    let sent = counted("pattern = \"uniform\"");
    deliveries_only("one-packet messages", &sent);
    assert!(sent.iter().enumerate().any(|(r, s)| s.messages_to[(r + 2) % 4] > 0), "deliveries sent before the end: {sent:?}");
    for algorithm in ["dor", "valiant"] {
        deliveries_only(algorithm, &counted_on(algorithm, "pattern = \"uniform\"\n[message]\npackets = 4"));
    }
}

#[test]
fn ranks_exchange_once_a_window_of_the_shortest_link_between_them() {
    // The 8x8x4 torus over 4 ranks, one z-plane each, with links of 4 cycles: the ranks
    // exchange once every 4 cycles (the drain after the measured window goes a cycle at a
    // time), each at most one message to each neighbour, and give one process's results.
    let toml = "[topology]\nkind = \"torus\"\ndims = [8, 8, 4]\n[link]\nlatency = 4\n[router]\nvcs = 4\n[traffic]\nload = 0.3\npattern = \"uniform\"\n[run]\nwarmup = 200\ncycles = 800\nseed = 4\n";
    let (result, sent) = local::run_counting(&spec(toml), 4).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(fingerprint(&result), fingerprint(&common::run(toml)), "4 ranks differ from one process");
    let drain = result.metrics.cycles - 1000;
    for (r, s) in sent.iter().enumerate() {
        assert!(s.exchanges <= 1000 / 4 + drain + 2, "rank {r}: {} exchanges in {} cycles: {s:?}", s.exchanges, result.metrics.cycles);
        assert!(s.exchanges >= 1000 / 4, "rank {r}: {s:?}");
        assert!(s.messages_to.iter().all(|&n| n <= s.exchanges), "one message a window at most: {s:?}");
    }
    // The Aries network's classes of links, over 2 ranks of 12 switches: the cut falls
    // between the two chassis of the middle group, so column links (20 cycles) cross between
    // the ranks, and global links (100), but no row links (10).
    let aries = format!("{}\n[link]\nlatency = 10\n[link.column]\nlatency = 20\n[link.global]\nlatency = 100\n[run]\nwarmup = 300\ncycles = 1500\nseed = 4\n", nets::ARIES_ADAPTIVE);
    let (result, sent) = local::run_counting(&spec(&aries), 2).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(fingerprint(&result), fingerprint(&common::run(&aries)), "2 ranks differ from one process on the Aries network");
    let drain = result.metrics.cycles - 1800;
    assert!(sent.iter().all(|s| s.exchanges >= 1800 / 20 && s.exchanges <= 1800 / 20 + drain + 4), "a window of 20 cycles: {sent:?}");
    // Cut between groups (4 groups over 2 ranks), only global links cross.
    let groups = aries.replace("groups = 3", "groups = 4");
    let (result, sent) = local::run_counting(&spec(&groups), 2).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(fingerprint(&result), fingerprint(&common::run(&groups)), "2 ranks differ from one process on 4 groups");
    let drain = result.metrics.cycles - 1800;
    assert!(sent.iter().all(|s| s.exchanges >= 1800 / 100 && s.exchanges <= 1800 / 100 + drain + 4), "a window of 100 cycles: {sent:?}");
}

#[test]
fn windows_of_several_cycles_are_the_same_on_1_2_and_3_ranks() {
    // Links longer than a cycle: each rank runs a window of cycles alone and puts the
    // other ranks' events into its calendar at the window's end, among its own held back
    // (`ranks::window`). Packets spanning ranks, Valiant's detours, the drain and idle
    // stretches, PUT and GET, a deadlock: the results of one process.
    let latency = |n: u32| format!("\n[link]\nlatency = {n}\n");
    let wormhole = format!("[topology]\nkind = \"torus\"\ndims = [8, 8]\n[router]\nflow_control = \"wormhole\"\ninput_buffer_phits = 4\n[traffic]\npattern = \"uniform\"\nload = 0.4{}", latency(3));
    same_on_1_2_3_ranks(&wormhole, "warmup = 300\ncycles = 1500\nseed = 3");
    let valiant = format!(
        "[topology]\nkind = \"hyperx\"\ndims = [4, 4]\nservers_per_switch = 2\n[router]\nvcs = 4\n[routing]\nalgorithm = \"valiant\"\nvc_policy = \"ladder\"\n\
         [message]\npackets = 5\nin_order = true\n[traffic]\npattern = \"uniform\"\nload = 0.4{}",
        latency(2)
    );
    let r = same_on_1_2_3_ranks(&valiant, "warmup = 500\ncycles = 2500\nseed = 6");
    assert!(r.metrics.packets_out_of_order > 0);
    let idle = format!("[topology]\nkind = \"torus\"\ndims = [5, 5]\n[traffic]\npattern = \"uniform\"\nload = 0.01{}", latency(5));
    same_on_1_2_3_ranks(&idle, "warmup = 200\ncycles = 3000\ndrain = 100000\nseed = 8");
    for protocol in ["put", "get"] {
        let body = format!(
            "[topology]\nkind = \"torus\"\ndims = [4, 4]\nservers_per_switch = 2\n[packet]\nphits = 5\n[nic]\nprotocol = \"{protocol}\"\nmax_outstanding = 4\n\
             [message]\nbytes = 2000\n[traffic]\npattern = \"uniform\"\nload = 0.6{}",
            latency(3)
        );
        same_on_1_2_3_ranks(&body, "warmup = 300\ncycles = 1500\nseed = 5");
    }
    // Found by the periodic detector; and by the watchdog, which the windows must not run
    // past, on a ring of 8 where everything stops.
    let r = same_on_1_2_3_ranks(&format!("{}{}", nets::DEADLOCKING_RING, latency(3)), "warmup = 100\ncycles = 200000");
    assert!(r.metrics.deadlock && r.metrics.deadlock_where.contains("wait-for cycle"), "{}", r.metrics.deadlock_where);
    let ring = format!("{}{}", nets::DEADLOCKING_RING.replace("dims = [8, 8]", "dims = [8]"), latency(3));
    let r = same_on_1_2_3_ranks(&ring, "warmup = 100\ncycles = 200000\nwatchdog = 150");
    assert!(r.metrics.deadlock && r.metrics.deadlock_cycle.is_some_and(|c| c < 1024), "the watchdog's, before the detector's first check: {}", r.metrics.deadlock_where);
    // Checkpoints fall inside what would be a window: the window ends there.
    let wormhole_messages = format!("{wormhole}\n[message]\npackets = 3\n");
    same_after_resuming_on_ranks("windows", &wormhole_messages, "warmup = 300\ncycles = 1501\nseed = 3", 3);
}

#[test]
fn open_loop_workloads_draw_only_from_their_ranks_streams() {
    // Bernoulli and periodic sources over ranks: each rank holds its own servers' random
    // streams only (`random::Streams`) and gives one process's draws, under a pattern that
    // draws destinations (uniform) and a burst of another.
    for workload in ["bernoulli", "periodic"] {
        same_on_1_2_3_ranks(
            &format!("[topology]\nkind = \"torus\"\ndims = [6, 6]\nservers_per_switch = 2\n[workload]\nkind = \"{workload}\"\n[traffic]\npattern = \"uniform\"\nload = 0.3"),
            "warmup = 300\ncycles = 1200\nseed = 11",
        );
    }
}

#[test]
fn a_hyperx_with_valiant_is_the_same_on_1_2_and_3_ranks() {
    let r = same_on_1_2_3_ranks(nets::HYPERX_VALIANT_SATURATED, "warmup = 500\ncycles = 2000\nseed = 2");
    assert!(r.metrics.accepted_load < r.metrics.offered_load, "saturated");
}

#[test]
fn a_dragonfly_with_ugal_l_is_the_same_on_1_2_and_3_ranks() {
    let r = same_on_1_2_3_ranks(&nets::dragonfly_ugal("ugal_l"), "warmup = 500\ncycles = 2000\nseed = 9");
    assert!(r.metrics.packets_delivered > 1000);
}

#[test]
fn a_dragonfly_with_ugal_g_is_the_same_on_1_2_and_3_ranks() {
    // Its global view reads other ranks' switches: their backlogs of the last cycle's end
    // come with the exchange.
    let r = same_on_1_2_3_ranks(&nets::dragonfly_ugal("ugal_g"), "warmup = 500\ncycles = 2000\nseed = 9");
    assert!(r.metrics.packets_delivered > 1000);
    assert!(r.metrics.accepted_load < r.metrics.offered_load, "saturated: the queues it reads are long");
}

#[test]
fn aries_adaptive_routing_is_the_same_on_1_2_and_3_ranks() {
    same_on_1_2_3_ranks(nets::ARIES_ADAPTIVE, "warmup = 300\ncycles = 1500\nseed = 4");
}

#[test]
fn wormhole_flow_control_is_the_same_on_1_2_and_3_ranks() {
    // A packet spans several switches, owned by different ranks: its body flits follow its
    // head's copy on the next rank.
    same_on_1_2_3_ranks(
        "[topology]\nkind = \"torus\"\ndims = [8, 8]\n[router]\nflow_control = \"wormhole\"\ninput_buffer_phits = 4\n\
         [traffic]\npattern = \"uniform\"\nload = 0.4",
        "warmup = 300\ncycles = 1500\nseed = 3",
    );
}

#[test]
fn messages_of_several_packets_are_the_same_on_ranks() {
    // A message's record goes from its source's rank to its destination's; its packets take
    // different paths (Valiant) and are put back in order there.
    let r = same_on_1_2_3_ranks(
        "[topology]\nkind = \"hyperx\"\ndims = [4, 4]\nservers_per_switch = 2\n[router]\nvcs = 4\n\
         [routing]\nalgorithm = \"valiant\"\nvc_policy = \"ladder\"\n[message]\npackets = 5\nin_order = true\n\
         [traffic]\npattern = \"uniform\"\nload = 0.4",
        "warmup = 500\ncycles = 2500\nseed = 6",
    );
    assert!(r.metrics.packets_out_of_order > 0, "packets overtake each other, so reassembly is exercised");
}

#[test]
fn a_ping_pong_workload_is_the_same_on_1_2_and_3_ranks() {
    // Closed loop: each rank runs its own senders' and receivers' parts.
    let r = same_on_1_2_3_ranks(&nets::ping_pong("[5, 5, 5]", 20), "warmup = 0\ncycles = 2000000");
    assert!(!r.samples.src.is_empty());
}

#[test]
fn closed_loops_under_put_run_windows_of_the_links_between_ranks() {
    // Ping-pong and bandwidth windows with links of 8 cycles: a message completes at its
    // receiver's rank, its acknowledgement at its sender's, which records the sample, so
    // the ranks exchange once every 8 cycles and still give one process's samples.
    for (kind, extra) in [("ping_pong", ""), ("bandwidth", "window = 4\n")] {
        let body = format!(
            "[topology]\nkind = \"torus\"\ndims = [4, 4]\nservers_per_switch = 2\n[link]\nlatency = 8\n[packet]\nphits = 5\n\
             [nic]\nprotocol = \"put\"\n[message]\nbytes = 2000\n[workload]\nkind = \"{kind}\"\niterations = 5\n{extra}[traffic]\nactive_servers = 24"
        );
        let run = "warmup = 0\ncycles = 1000000\nseed = 2";
        let r = same_on_1_2_3_ranks(&body, run);
        assert!(r.metrics.workload_complete && r.samples.src.len() == 12 * 5, "{kind}: {} samples", r.samples.src.len());
        let (counted, sent) = local::run_counting(&spec(&format!("{body}\n[run]\n{run}\n")), 2).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(fingerprint(&counted), fingerprint(&r));
        for s in &sent {
            assert!(s.exchanges * 6 <= r.metrics.cycles, "{kind}: {} exchanges in {} cycles", s.exchanges, r.metrics.cycles);
        }
    }
}

#[test]
fn an_allreduce_job_beside_background_traffic_is_the_same_on_1_2_and_3_ranks() {
    let r = same_on_1_2_3_ranks(nets::ALLREDUCE_BESIDE_BACKGROUND, "warmup = 0\ncycles = 1000000");
    assert!(r.jobs[0].complete && r.jobs[1].messages > 0);
}

#[test]
fn aries_jobs_beside_background_traffic_are_the_same_on_1_2_and_3_ranks() {
    // Adaptive routing, an alltoall under Cray MPI's default modes and a halo exchange,
    // beside open-loop background traffic drawing its destinations from the servers'
    // streams, which the NICs and routing draw from too.
    let r = same_on_1_2_3_ranks(
        "[topology]\nkind = \"aries\"\ngroups = 3\nchassis = 2\nblades = 4\ncolumn_links = 3\nglobal_links_per_switch = 2\nservers_per_switch = 2\n\
         [router]\nvcs = 8\n[packet]\nphits = 4\nbytes = 64\n[routing]\nalgorithm = \"aries\"\nmode = \"adaptive\"\n[traffic]\n\
         [[jobs]]\nname = \"a2a\"\nranks = 16\nrouting_mode = \"default\"\nworkload = { motif = \"alltoall\", iterations = 2, bytes = 512 }\n\
         [[jobs]]\nname = \"halo\"\nranks = 8\nworkload = { motif = \"halo3d\", iterations = 2, domain = [8, 8, 8] }\nallocation = { policy = \"linear\", offset = 16 }\n\
         [[jobs]]\nname = \"noise\"\nranks = 24\nworkload = { motif = \"bernoulli\", load = 0.2, bytes = 64 }\n\
         background = true\nallocation = { policy = \"linear\", offset = 24 }",
        "warmup = 0\ncycles = 1000000\nseed = 12",
    );
    assert!(r.jobs[0].complete && r.jobs[1].complete && r.jobs[2].messages > 0);
}

#[test]
fn bandwidth_windows_under_a_get_protocol_are_the_same_on_1_2_and_3_ranks() {
    // Requests answered at the target's rank, responses completing each message back at the
    // requester's, acknowledgements opening the next window.
    let r = same_on_1_2_3_ranks(nets::GET_BANDWIDTH_WINDOWS, "warmup = 0\ncycles = 1000000");
    assert!(r.metrics.workload_complete && r.metrics.responses_received > 0);
}

#[test]
fn open_loop_traffic_under_put_and_get_is_the_same_on_1_2_and_3_ranks() {
    // Messages of several requests between ranks, and past saturation, where requesters
    // wait for responses (`nic.max_outstanding`).
    for protocol in ["put", "get"] {
        let body = format!(
            "[topology]\nkind = \"torus\"\ndims = [4, 4]\nservers_per_switch = 2\n[packet]\nphits = 5\n[nic]\nprotocol = \"{protocol}\"\nmax_outstanding = 4\n\
             [message]\nbytes = 2000\n[traffic]\npattern = \"uniform\"\nload = 0.6"
        );
        let r = same_on_1_2_3_ranks(&body, "warmup = 300\ncycles = 1500\nseed = 5");
        assert!(r.metrics.responses_received > 100, "{protocol}");
    }
}

/// An alltoall of `ranks` ranks spread over the groups of a small Aries network under GET,
/// `routing_mode` with its `extra` keys, beside 16 ranks of background traffic at `load`.
fn aries_alltoall_under_get(ranks: u32, bytes: u32, iterations: u32, routing_mode: &str, extra: &str, load: f64) -> String {
    format!(
        "[topology]\nkind = \"aries\"\ngroups = 3\nchassis = 2\nblades = 2\n[routing]\nalgorithm = \"aries\"\n\
         [router]\nvcs = 8\n[packet]\nphits = 5\n[nic]\nprotocol = \"get\"\n[traffic]\n\
         [[jobs]]\nname = \"app\"\nranks = {ranks}\nworkload = {{ motif = \"alltoall\", iterations = {iterations}, bytes = {bytes} }}\n\
         routing_mode = \"{routing_mode}\"\nallocation = {{ policy = \"spread\" }}\n{extra}\n\
         [[jobs]]\nname = \"noise\"\nranks = 16\nworkload = {{ motif = \"bernoulli\", load = {load}, bytes = 256 }}\nbackground = true\n\
         allocation = {{ policy = \"linear\", offset = 24 }}"
    )
}

#[test]
fn aries_jobs_under_a_get_protocol_are_the_same_on_1_2_and_3_ranks() {
    // The network-noise study's setting: Cray MPI's default modes, GET, background traffic.
    let r = same_on_1_2_3_ranks(&aries_alltoall_under_get(8, 4096, 2, "default", "", 0.3), "warmup = 0\ncycles = 2000000\nseed = 7");
    assert!(r.jobs[0].complete && r.jobs[1].messages > 0);
}

#[test]
fn application_aware_jobs_are_the_same_on_1_2_and_3_ranks() {
    // Each message's mode is chosen from its NIC's counters at the NIC's rank, in the order
    // one process reads them (responses and deliveries counted in the calls' order); the
    // bytes per mode are added up on rank 0.
    let aware = aries_alltoall_under_get(16, 1024, 4, "app_aware", "app_aware = { threshold_bytes = 64 }", 0.2);
    let r = same_on_1_2_3_ranks(&aware, "warmup = 0\ncycles = 2000000\nseed = 3");
    let app = &r.jobs[0];
    assert!(app.complete);
    assert_eq!(app.mode_bytes.values().sum::<u64>(), app.bytes, "every byte counted once: {:?}", app.mode_bytes);
    assert!(app.mode_bytes.len() == 2, "both modes chosen: {:?}", app.mode_bytes);
}

/// The network-noise study's setting at a small size: Aries links of 10 (row), 20 (column)
/// and 100 (global) cycles, PUT requests, an alltoall under App-Aware (its timeline kept)
/// beside background traffic.
fn aries_alltoall_under_put() -> String {
    "[topology]\nkind = \"aries\"\ngroups = 3\nchassis = 2\nblades = 2\n[routing]\nalgorithm = \"aries\"\n\
     [link]\nlatency = 10\n[link.column]\nlatency = 20\n[link.global]\nlatency = 100\n\
     [router]\nvcs = 8\n[packet]\nphits = 5\n[nic]\nprotocol = \"put\"\n[traffic]\n\
     [[jobs]]\nname = \"app\"\nranks = 16\nworkload = { motif = \"alltoall\", iterations = 3, bytes = 1024 }\n\
     routing_mode = \"app_aware\"\napp_aware = { threshold_bytes = 64 }\ntimeline = true\nallocation = { policy = \"spread\" }\n\
     [[jobs]]\nname = \"noise\"\nranks = 16\nworkload = { motif = \"bernoulli\", load = 0.3, bytes = 256 }\nbackground = true\n\
     allocation = { policy = \"linear\", offset = 24 }"
        .to_string()
}

#[test]
fn jobs_under_put_run_windows_of_the_shortest_link_on_ranks() {
    // Each rank runs only its own servers' programs; the ranks share the run's end alone,
    // so they exchange once a window, as for open-loop traffic: here 10 cycles, the
    // network's shortest link, however long the links between the ranks (the background
    // sends that long after the job's end, so that every rank has heard of the end first).
    let body = aries_alltoall_under_put();
    let run = "warmup = 0\ncycles = 2000000\nseed = 3";
    let r = same_on_1_2_3_ranks(&body, run);
    let app = &r.jobs[0];
    assert!(app.complete && r.jobs[1].messages > 0);
    assert_eq!(app.mode_bytes.values().sum::<u64>(), app.bytes, "every byte counted once: {:?}", app.mode_bytes);
    assert_eq!(app.timeline.len(), 16, "every rank's timeline, gathered on rank 0");
    let end = app.iteration_start[0] + app.iteration_cycles.iter().sum::<u64>();
    assert!(r.metrics.cycles >= end + 10, "the run ends no sooner than the background's stop: job end {end}, run {}", r.metrics.cycles);
    let toml = format!("{body}\n[run]\n{run}\n");
    for ranks in [2, 3] {
        let (counted, sent) = local::run_counting(&spec(&toml), ranks).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(fingerprint(&counted), fingerprint(&r));
        for s in &sent {
            assert!(s.exchanges * 9 <= r.metrics.cycles && s.exchanges * 11 >= r.metrics.cycles, "{ranks} ranks: {} exchanges in {} cycles", s.exchanges, r.metrics.cycles);
        }
    }
    same_after_resuming_on_ranks("put-jobs", &body, run, 2);
}

#[test]
fn a_drain_and_idle_stretches_are_the_same_on_ranks() {
    // At a low load most cycles are skipped, which every rank must agree on; the drain ends
    // when the last measured packet arrives, wherever it does.
    same_on_1_2_3_ranks(
        "[topology]\nkind = \"torus\"\ndims = [5, 5]\n[traffic]\npattern = \"uniform\"\nload = 0.01",
        "warmup = 200\ncycles = 3000\ndrain = 100000\nseed = 8",
    );
}

#[test]
fn more_ranks_than_switches_are_refused_naming_ranks() {
    match local::run(&spec("[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\nload = 0.1\n"), 17) {
        Err(RankError::Spec(e)) => assert_eq!(e.key, "ranks", "{e}"),
        other => panic!("17 ranks on 16 switches: {:?}", other.map(|r| r.metrics.packets_delivered)),
    }
}

#[test]
fn a_deadlock_is_found_at_the_same_cycle_on_1_2_and_3_ranks() {
    // The wait-for cycle crosses ranks: every rank sends its part of the graph to all.
    let r = same_on_1_2_3_ranks(nets::DEADLOCKING_RING, "warmup = 100\ncycles = 200000");
    assert!(r.metrics.deadlock, "this ring must deadlock");
    assert!(r.metrics.deadlock_where.contains("wait-for cycle"), "{}", r.metrics.deadlock_where);
}

/// `body` with `run` lines over `ranks` ranks, each writing its checkpoint half-way, then
/// resumed from those checkpoints: the results of one process never stopped.
fn same_after_resuming_on_ranks(name: &str, body: &str, run: &str, ranks: usize) {
    let whole = common::run(&format!("{body}\n[run]\n{run}\n"));
    let every = (whole.metrics.cycles / 2).max(1);
    let toml = format!("{body}\n[run]\n{run}\ncheckpoint_every = {every}\n");
    let dir = std::env::temp_dir().join(format!("hopsim-ranks-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.checkpoint");
    let ck = |resume| hopsim_core::Checkpointing { path: path.clone(), resume };
    let written = local::run_checkpointed(&spec(&toml), ranks, Some(&ck(false))).unwrap();
    assert_eq!(fingerprint(&written), fingerprint(&whole), "writing checkpoints changed the results of {name}");
    let files: Vec<_> = (0..ranks).map(|r| hopsim_core::engine::ranks::rank_checkpoint(&path, r, ranks)).collect();
    assert!(files.iter().all(|f| f.exists()), "every rank writes its own checkpoint");
    let resumed = local::run_checkpointed(&spec(&toml), ranks, Some(&ck(true))).unwrap();
    assert_eq!(fingerprint(&resumed), fingerprint(&whole), "{name} resumed on {ranks} ranks differs from one process");
    // One rank without its checkpoint: all start over, with the same results.
    std::fs::remove_file(&files[ranks - 1]).unwrap();
    let over = local::run_checkpointed(&spec(&toml), ranks, Some(&ck(true))).unwrap();
    assert_eq!(fingerprint(&over), fingerprint(&whole), "{name} started over on {ranks} ranks");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ranks_resumed_from_their_checkpoints_give_the_results_of_a_run_never_stopped() {
    // Packets whose heads crossed and tails have not, messages between ranks, a shared
    // workload's ejections in flight: all in the checkpoints.
    let wormhole = "[topology]\nkind = \"torus\"\ndims = [8, 8]\n[router]\nflow_control = \"wormhole\"\ninput_buffer_phits = 4\n\
         [message]\npackets = 3\n[traffic]\npattern = \"uniform\"\nload = 0.4";
    same_after_resuming_on_ranks("wormhole", wormhole, "warmup = 300\ncycles = 1500\nseed = 3", 3);
    same_after_resuming_on_ranks("jobs", nets::ALLREDUCE_BESIDE_BACKGROUND, "warmup = 0\ncycles = 1000000", 2);
    // GET messages whose responses are still coming back to their requesters' records.
    same_after_resuming_on_ranks("get", nets::GET_BANDWIDTH_WINDOWS, "warmup = 0\ncycles = 1000000", 3);
    // UGAL-G's backlogs of other switches are read again from the restored ones.
    same_after_resuming_on_ranks("ugal_g", &nets::dragonfly_ugal("ugal_g"), "warmup = 300\ncycles = 1200\nseed = 6", 3);
}

/// A folder of its own under the system's temporary folder, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("hopsim-rows-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The cells of a CSV file: its header, then its rows.
fn cells(path: &std::path::Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>());
    (lines.next().unwrap(), lines.collect())
}

/// A float's bits, every NaN alike (a file has one way to write NaN: nothing).
fn bits(x: f64) -> u64 {
    if x.is_nan() { f64::NAN.to_bits() } else { x.to_bits() }
}

/// A float cell as written (`csv_text`): empty for NaN.
fn float_cell(cell: &str) -> u64 {
    if cell.is_empty() { f64::NAN.to_bits() } else { bits(cell.parse::<f64>().unwrap()) }
}

/// On 2 and 3 ranks, rank 0 writing the rows to files as the ranks' ends come: the files
/// hold one process's tables, row for row and bit for bit, and the rest of the result is
/// one process's.
fn rows_written_on_ranks_are_one_process_s(name: &str, toml: &str) {
    let one = common::run(toml);
    for ranks in [2, 3] {
        let dir = Scratch::new(&format!("{name}-{ranks}"));
        let r = local::run_writing_rows(&spec(toml), ranks, &dir.0).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(r.written.keys().collect::<Vec<_>>(), ["counters.csv", "links.csv", "topology.json"]);
        assert!(r.links.switch.is_empty() && r.counters.server.is_empty() && r.switch_coords.is_empty(), "the rows are in the files, not the result");
        let mut rest = r.clone();
        (rest.links, rest.counters, rest.switch_coords, rest.written) = (one.links.clone(), one.counters.clone(), one.switch_coords.clone(), Default::default());
        assert_eq!(fingerprint(&rest), fingerprint(&one), "{ranks} ranks writing rows differ from one process on\n{toml}");

        let (header, rows) = cells(&dir.0.join("links.csv"));
        assert_eq!(header, hopsim_core::engine::rows::LINK_COLUMNS);
        let t = &one.links;
        assert_eq!(rows.len(), t.switch.len());
        for (i, row) in rows.iter().enumerate() {
            let want = [t.switch[i].to_string(), t.port[i].to_string(), t.to_switch[i].to_string(), t.to_port[i].to_string(), t.dim[i].to_string(), t.class[i].to_string(), t.direction[i].to_string(), t.phits[i].to_string()];
            assert_eq!(row[..8], want, "links.csv row {i}");
            assert_eq!(float_cell(&row[8]), bits(t.load[i]), "links.csv row {i}");
        }
        let (header, rows) = cells(&dir.0.join("counters.csv"));
        assert_eq!(header, hopsim_core::engine::rows::COUNTER_COLUMNS);
        let c = &one.counters;
        assert_eq!(rows.len(), c.server.len());
        for (i, row) in rows.iter().enumerate() {
            let ints = [c.server[i] as u64, c.request_flits[i], c.stalled_cycles[i], c.request_packets[i], c.responses_received[i], c.cumulative_request_latency[i], c.responses_sent[i], c.packets[i], c.cumulative_packet_latency[i]];
            assert_eq!(row[..9], ints.map(|v| v.to_string()), "counters.csv row {i}");
            assert_eq!((float_cell(&row[9]), float_cell(&row[10])), (bits(c.stalls_per_flit[i]), bits(c.request_latency_mean[i])), "counters.csv row {i}");
            assert_eq!(row[11], c.outstanding_max[i].to_string(), "counters.csv row {i}");
        }
        let topology: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.0.join("topology.json")).unwrap()).unwrap();
        assert_eq!(topology["dims"], serde_json::json!(one.dims));
        assert_eq!(topology["switch_coords"], serde_json::json!(one.switch_coords));
    }
}

#[test]
fn rank_0_writes_the_rows_of_a_torus_as_one_process_holds_them() {
    rows_written_on_ranks_are_one_process_s("torus", "[topology]\nkind = \"torus\"\ndims = [6, 5]\nservers_per_switch = 2\n[traffic]\npattern = \"uniform\"\nload = 0.4\n[run]\nwarmup = 300\ncycles = 1200\nseed = 2\n");
}

#[test]
fn rank_0_writes_the_rows_of_aries_jobs_under_get_as_one_process_holds_them() {
    // Link classes without dimensions, and NIC counters of requests and responses (s, L;
    // NaN where a server sent none).
    let toml = format!("{}\n[run]\nwarmup = 0\ncycles = 2000000\nseed = 7\n", aries_alltoall_under_get(8, 4096, 2, "default", "", 0.3));
    rows_written_on_ranks_are_one_process_s("aries", &toml);
}
