//! Values that used to give a wrong result with no error: products of keys that wrapped,
//! messages longer than the source queue that were always dropped, a watchdog shorter than
//! a link that reported a deadlock, cycles beyond what a run can hold. Each is refused up
//! front naming its key, or now runs right.
use crate::common;
use hopsim_core::spec;

/// A 4x4 torus with 64-byte packets of 8 phits, short runs.
const NET: &str = "[topology]\nkind = \"torus\"\ndims = [4, 4]\n[packet]\nphits = 8\nbytes = 64\n[run]\nwarmup = 0\ncycles = 200000\n";

fn job(workload: &str) -> String {
    format!("{NET}[[jobs]]\nname = \"a\"\nranks = 8\nworkload = {{ {workload} }}\n")
}


fn refused(toml: &str, key: &str, says: &[&str]) {
    let e = common::refused(toml);
    assert_eq!(e.key, key, "{e}");
    for s in says {
        assert!(e.to_string().contains(s), "{e} does not say {s:?}");
    }
}

#[test]
fn products_of_keys_that_reach_2_to_the_64_are_refused_not_wrapped() {
    let two_32 = 1u64 << 32;
    refused(&job(&format!("motif = \"allreduce\", elements = {two_32}, element_bytes = {two_32}")), "jobs[0].workload.elements", &["2^36"]);
    refused(&job(&format!("motif = \"halo3d\", grid = [2, 2, 2], domain = [{two_32}, {two_32}, 1], element_bytes = 1")), "jobs[0].workload.domain", &["face"]);
    refused(&job(&format!("motif = \"halo3d\", grid = [2, 2, 2], domain = [2, 2, 2], element_bytes = {}", i64::MAX)), "jobs[0].workload.domain", &["face"]);
    refused(&job(&format!("motif = \"sweep3d\", grid = [4, 2], domain = [{two_32}, 2, 2], block = {two_32}")), "jobs[0].workload.domain", &["face"]);
    refused(&job("motif = \"sweep3d\", grid = [4, 2], domain = [2, 2, 2], element_bytes = 0"), "jobs[0].workload.domain", &["between 1 and 2^36"]);
    refused(&job(&format!("motif = \"halo\", dims = 2, grid = [4, 2], domain = [{}, {}], element_bytes = 16", 1u64 << 40, 1u64 << 40)), "jobs[0].workload.domain", &["2^36"]);
    refused(&job(&format!("motif = \"fft3d\", grid = [4, 2], points = {two_32}")), "jobs[0].workload.points", &[]);
    // Not a product, but as sure to exhaust memory: an iteration's operations are made at once.
    refused(&job(&format!("motif = \"sweep3d\", grid = [4, 2], domain = [2, 2, {}]", 1u64 << 20)), "jobs[0].workload.domain", &["wavefront steps"]);
    // A load whose gaps between messages cannot be drawn (they wrapped to the same cycle).
    refused(&job("motif = \"bernoulli\", load = 1e-300"), "jobs[0].workload.load", &["too small"]);
}

#[test]
fn cycles_beyond_a_run_are_refused() {
    refused(&job(&format!("motif = \"barrier\", compute = {}", i64::MAX)), "jobs[0].workload.compute", &["2147483647"]);
    refused(&(job("motif = \"barrier\"") + &format!("start = {}\n", i64::MAX)), "jobs[0].start", &["2147483647"]);
    // Beyond TOML's 64-bit integers, through JSON (the Python API's way in).
    let json = format!(r#"{{"topology": {{"kind": "torus", "dims": [4, 4]}}, "packet": {{"bytes": 64}}, "jobs": [{{"name": "a", "ranks": 4, "workload": {{"motif": "barrier", "compute": {}}}}}]}}"#, u64::MAX);
    assert_eq!(spec::from_json_str(&json).unwrap_err().key, "jobs[0].workload.compute");
    let open = "[traffic]\nload = 0.1\n";
    refused(&format!("{NET}{open}").replace("cycles = 200000", &format!("cycles = 1000\ntemporal_bin = {}", i64::MAX)), "run.temporal_bin", &["2147483647"]);
}

#[test]
fn a_message_longer_than_the_source_queue_is_refused_up_front() {
    let limit = "[nic]\nsource_queue_limit = 10\n";
    refused(&format!("{NET}{limit}[message]\npackets = 20\n[traffic]\nload = 0.1\n"), "message.packets", &["nic.source_queue_limit = 10", "20 packets"]);
    refused(&format!("{NET}{limit}[message]\nbytes = 2000\n[traffic]\nload = 0.1\n"), "message.bytes", &["nic.source_queue_limit = 10", "32 packets"]);
    refused(&(job("motif = \"bernoulli\", load = 0.1, bytes = 4096") + limit), "jobs[0].workload.bytes", &["nic.source_queue_limit = 10", "64 packets"]);
    // Exactly the queue fits.
    let r = common::run(&(job("motif = \"bernoulli\", load = 0.1, bytes = 640") + limit).replace("cycles = 200000", "cycles = 2000"));
    assert!(r.metrics.packets_delivered > 0);
    // A program's messages are never dropped, so the queue's limit does not bound them.
    let r = common::run(&(job("motif = \"ping_pong\", bytes = 4096, iterations = 2") + limit));
    assert!(r.jobs[0].complete);
    assert_eq!(r.metrics.packets_dropped_at_source, 0);
    // But a message of more packets than a message counts is refused.
    refused(&(job("motif = \"ping_pong\", bytes = 68719476736") + "").replace("bytes = 64", "bytes = 0.001"), "jobs[0].workload.bytes", &["4294967295"]);
}

#[test]
fn a_programs_messages_are_never_dropped_at_a_full_source_queue() {
    // Each rank posts 7 messages of 8 packets at once: 56 packets, over a queue of 10.
    let r = common::run(&(job("motif = \"alltoall\", bytes = 512, iterations = 3") + "[nic]\nsource_queue_limit = 10\n"));
    assert_eq!(r.metrics.packets_dropped_at_source, 0);
    assert!(r.jobs[0].complete, "the alltoall did not finish");
    assert!(!r.metrics.deadlock, "{}", r.metrics.deadlock_where);
}

#[test]
fn a_watchdog_shorter_than_a_link_or_pipeline_is_not_a_deadlock() {
    let slow = |extra: &str| {
        format!(
            "[topology]\nkind = \"torus\"\ndims = [4, 4]\n{extra}\n[routing]\nalgorithm = \"dor\"\n[traffic]\nload = 0.05\n[run]\nwarmup = 0\ncycles = 6000\nwatchdog = 100\n"
        )
    };
    for extra in [
        "[link]\nlatency = 500",
        "[router]\npipeline_delay = 400",
        "[router]\nflow_control = \"wormhole\"\ninput_buffer_phits = 8\n[packet]\nphits = 512",
        "[link]\nlatency = 300\n[router]\npipeline_delay = 300\nflow_control = \"wormhole\"\ninput_buffer_phits = 64\n[packet]\nphits = 64",
    ] {
        let r = common::run(&slow(extra));
        assert!(!r.metrics.deadlock, "{extra}: {}", r.metrics.deadlock_where);
        assert!(r.metrics.packets_delivered > 0, "{extra}: nothing delivered");
    }
}

#[test]
fn the_watchdog_still_stops_a_real_deadlock_and_names_its_switches() {
    // One VC and no dateline on a ring at saturation: every buffer waits for the next.
    let r = common::run(
        "[topology]\nkind = \"torus\"\ndims = [8]\n[router]\nvcs = 1\n[routing]\nalgorithm = \"dor\"\nvc_policy = \"none\"\n\
         [traffic]\npattern = \"uniform\"\nload = 1.0\n[run]\nwarmup = 0\ncycles = 100000\nwatchdog = 100\n",
    );
    assert!(r.metrics.deadlock);
    assert!(!r.metrics.deadlock_where.starts_with("0 switch"), "{}", r.metrics.deadlock_where);
}

#[test]
fn jobs_and_closed_loop_workloads_need_no_traffic_table() {
    let r = common::run(&job("motif = \"barrier\", iterations = 2"));
    assert!(r.jobs[0].complete);
    let ping = "[topology]\nkind = \"torus\"\ndims = [4, 4]\n[packet]\nphits = 8\nbytes = 64\n[message]\nbytes = 512\n[workload]\nkind = \"ping_pong\"\niterations = 2\n[run]\nwarmup = 0\ncycles = 100000\n";
    let r = common::run(ping);
    assert!(r.metrics.workload_complete);
    // The open-loop workload still needs its load, and says so.
    refused("[topology]\nkind = \"torus\"\ndims = [4, 4]\n", "traffic.load", &["missing"]);
}

#[test]
fn a_workload_table_beside_jobs_is_refused_not_ignored() {
    refused(&(job("motif = \"barrier\"") + "[workload]\nkind = \"ping_pong\"\n"), "workload.kind", &["[[jobs]] replace [workload]"]);
    refused(&(job("motif = \"barrier\"") + "[workload]\niterations = 3\n"), "workload.iterations", &["[[jobs]] replace [workload]"]);
}

#[test]
fn an_integer_toml_cannot_hold_is_named_under_its_array_of_tables() {
    let e = common::refused(&format!("{NET}[[jobs]]\nname = \"a\"\nranks = 4\nstart = {}\n[jobs.workload]\nmotif = \"barrier\"\n", u64::MAX));
    assert_eq!(e.key, "jobs[0].start", "{e}");
    let e = common::refused(&format!("{NET}[[jobs]]\nname = \"a\"\nranks = 4\nworkload = {{ motif = \"barrier\" }}\n[[jobs]]\nname = \"b\"\nranks = 4\nstart = {}\n", u64::MAX));
    assert_eq!(e.key, "jobs[1].start", "{e}");
    let e = common::refused(&format!("{NET}[[jobs]]\nname = \"a\"\nranks = 4\n[jobs.workload]\nmotif = \"barrier\"\ncompute = {}\n", u64::MAX));
    assert_eq!(e.key, "jobs[0].workload.compute", "{e}");
}

#[test]
fn errors_show_values_as_written() {
    let e = common::refused(&format!("{NET}[traffic]\nload = 5e-324\n"));
    assert_eq!(e.value, "5e-324", "{e}");
    assert!(e.to_string().len() < 200, "{e}");
    let e = common::refused(&job("motif = \"bernoulli\", load = 0.0"));
    assert!(!e.to_string().contains("Some("), "{e}");
    let e = common::refused(&job("motif = \"bernoulli\""));
    assert!(!e.to_string().contains("None"), "{e}");
}

#[test]
fn auto_says_it_chose_the_vc_policy_that_needs_more_vcs() {
    let e = common::refused("[topology]\nkind = \"aries\"\ngroups = 2\nchassis = 2\nblades = 2\n[routing]\nalgorithm = \"aries\"\n[traffic]\nload = 0.1\n");
    assert_eq!(e.key, "router.vcs");
    assert!(e.to_string().contains("\"auto\" chose it"), "{e}");
    assert!(e.to_string().contains("set router.vcs"), "{e}");
}

#[test]
fn describing_a_topology_does_not_check_routing() {
    let text = r#"{"topology": {"kind": "torus", "dims": [4, 4]}, "routing": {"algorithm": "no_such"}}"#;
    let t: serde_json::Value = serde_json::from_str(&hopsim_core::topology_json(text, None).unwrap()).unwrap();
    assert_eq!(t["switches"], 16);
    // Its own keys still are.
    let bad = r#"{"topology": {"kind": "torus", "dims": [4, 4]}, "link": {"latency": 0}}"#;
    assert_eq!(hopsim_core::topology_json(bad, None).unwrap_err().key, "link.latency");
}

#[test]
fn list_names_the_job_routing_modes_and_allocation_policies() {
    let c: serde_json::Value = serde_json::from_str(&hopsim_core::components_json()).unwrap();
    let names = |family: &str| c[family].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let modes = names("routing_modes");
    assert!(modes.contains(&"app_aware".to_string()) && modes.contains(&"adaptive_high_bias".to_string()), "{modes:?}");
    let default = c["routing_modes"].as_array().unwrap().iter().find(|m| m["name"] == "default").expect("the default mode is listed");
    assert!(default["about"].as_str().unwrap().contains("Cray MPI's default"), "{default}");
    assert_eq!(names("allocation_policies"), ["linear", "random", "spread", "per_group", "routers", "explicit"]);
}

#[test]
fn a_background_rank_that_never_waits_does_not_loop_within_a_cycle() {
    // A bcast's root sends and never receives: as background it used to repeat its
    // iteration without end in one cycle, until memory ran out.
    let text = format!(
        "{NET}[[jobs]]\nname = \"app\"\nranks = 4\nworkload = {{ motif = \"barrier\", iterations = 5 }}\n\
         [[jobs]]\nname = \"noise\"\nranks = 4\nbackground = true\nworkload = {{ motif = \"bcast\", iterations = 1, bytes = 64 }}\n"
    );
    let r = common::run(&text);
    assert!(r.jobs[0].complete);
    assert!(r.jobs[1].messages > 0);
    refused(&job(&format!("motif = \"bcast\", iterations = {}", (1u32 << 20) + 1)), "jobs[0].workload.iterations", &["1048576"]);
}
