//! `[[jobs]]`: allocation policies place ranks where they say, the background job is never
//! the application, bad jobs are refused with the key at fault, and a file without jobs runs
//! as before.
use crate::common;
use hopsim_core::spec;

/// A 2-switch torus of 16 servers per switch, 4-phit packets of 64 bytes.
pub const ONE_SWITCH: &str = "[topology]\nkind = \"torus\"\ndims = [2]\nservers_per_switch = 16\n[packet]\nphits = 4\nbytes = 64\n[traffic]\n[run]\nwarmup = 0\ncycles = 1000000\n";

/// A small Aries network: 3 groups of 2 chassis x 2 blades, 4 servers per router (48 servers).
pub const ARIES: &str = "[topology]\nkind = \"aries\"\ngroups = 3\nchassis = 2\nblades = 2\n[routing]\nalgorithm = \"aries\"\n\
    [router]\nvcs = 8\n[packet]\nphits = 5\n[nic]\nprotocol = \"put\"\n[traffic]\n[run]\nwarmup = 0\ncycles = 2000000\n";

pub fn job(name: &str, ranks: usize, workload: &str, extra: &str) -> String {
    format!("[[jobs]]\nname = \"{name}\"\nranks = {ranks}\nworkload = {{ {workload} }}\n{extra}\n")
}


fn servers_of(net: &str, jobs: &str) -> Vec<Vec<u32>> {
    let r = common::run(&format!("{net}{jobs}"));
    r.jobs.iter().map(|j| j.servers.clone()).collect()
}

#[test]
fn allocation_policies_place_ranks_where_they_say() {
    let bar = "motif = \"barrier\", iterations = 1";
    // linear from an offset, skipping what an earlier job holds.
    let s = servers_of(ONE_SWITCH, &(job("a", 4, bar, "allocation = { policy = \"linear\", offset = 2 }") + &job("b", 3, bar, "allocation = { policy = \"linear\", offset = 4 }")));
    assert_eq!(s, vec![vec![2, 3, 4, 5], vec![6, 7, 8]]);
    // explicit.
    let s = servers_of(ONE_SWITCH, &job("a", 3, bar, "allocation = { policy = \"explicit\", servers = [30, 1, 17] }"));
    assert_eq!(s, vec![vec![30, 1, 17]]);
    // random: distinct servers, not the linear ones, the same for the same seed.
    let s = servers_of(ONE_SWITCH, &job("a", 8, bar, "allocation = { policy = \"random\" }"));
    let mut sorted = s[0].clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 8);
    assert_ne!(s[0], (0..8).collect::<Vec<_>>());
    assert_eq!(s, servers_of(ONE_SWITCH, &job("a", 8, bar, "allocation = { policy = \"random\" }")));
    // Aries: 16 servers per group. spread deals ranks round-robin over groups.
    let r = common::run(&format!("{ARIES}{}", job("a", 6, bar, "allocation = { policy = \"spread\", offset = 1, groups = 2 }")));
    assert_eq!(r.jobs[0].groups, vec![1, 2, 1, 2, 1, 2]);
    assert_eq!(r.jobs[0].servers, vec![16, 32, 17, 33, 18, 34]);
    // per_group fills whole groups, one after the other.
    let r = common::run(&format!("{ARIES}{}", job("a", 20, bar, "allocation = { policy = \"per_group\", offset = 1 }")));
    assert_eq!(r.jobs[0].servers, (16..36).collect::<Vec<u32>>());
    assert_eq!(r.jobs[0].groups.iter().filter(|&&g| g == 1).count(), 16);
}

#[test]
fn the_background_job_is_never_the_application() {
    let app = job("app", 4, "motif = \"allreduce\", iterations = 3, bytes = 64", "");
    let bg = job("noise", 8, "motif = \"bernoulli\", load = 0.3, bytes = 64", "background = true\nallocation = { policy = \"linear\", offset = 16 }");
    let r = common::run(&format!("{ONE_SWITCH}{app}{bg}"));
    let (a, b) = (&r.jobs[0], &r.jobs[1]);
    assert!(a.complete && !a.background);
    assert!(b.background && !b.complete);
    assert_eq!(a.iteration_cycles.len(), 3);
    // The application's messages only: 3 iterations x 4 ranks x 2(4 - 1) steps.
    assert_eq!(a.message_latency.len(), 72);
    assert!(b.message_latency.is_empty(), "background messages counted as the application's");
    assert!(b.messages > 0, "the background sent nothing");
    // The run ends when the application is done, and the background's traffic drains.
    assert!(r.metrics.workload_complete || r.metrics.packets_in_flight_end == 0);
    // A background motif repeats until the application is done.
    let bg = job("noise", 8, "motif = \"alltoall\", iterations = 1, bytes = 64", "background = true\nallocation = { policy = \"linear\", offset = 16 }");
    let app = job("app", 2, "motif = \"ping_pong\", iterations = 200, bytes = 64", "");
    let r = common::run(&format!("{ONE_SWITCH}{app}{bg}"));
    assert!(r.jobs[1].iteration_cycles.len() > 1, "the background ran its motif once only");
}

/// A production machine's other jobs: several backgrounds, each repeating its own motif
/// until the application is done, none counted as the application.
#[test]
fn several_background_jobs_each_repeat_their_motif_until_the_application_is_done() {
    let app = job("app", 2, "motif = \"ping_pong\", iterations = 100, bytes = 64", "");
    let halo = job("halo", 8, "motif = \"halo3d\", iterations = 1, domain = [2, 2, 2]", "background = true\nallocation = { policy = \"linear\", offset = 16 }");
    let a2a = job("a2a", 4, "motif = \"alltoall\", iterations = 1, bytes = 64", "background = true");
    let r = common::run(&format!("{ONE_SWITCH}{app}{halo}{a2a}"));
    assert!(r.jobs[0].complete && !r.jobs[0].background);
    assert_eq!(r.jobs[0].message_latency.len(), 200);
    for bg in &r.jobs[1..] {
        assert!(bg.background && !bg.complete, "{}", bg.motif);
        assert!(bg.iteration_cycles.len() > 1, "{} ran its motif once only", bg.motif);
        assert!(bg.message_latency.is_empty(), "{}'s messages counted as the application's", bg.motif);
    }
}

#[test]
fn a_file_without_jobs_runs_as_before() {
    let toml = "[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\nload = 0.3\n[run]\nwarmup = 200\ncycles = 2000\n";
    let r = common::run(toml);
    assert!(r.jobs.is_empty());
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("\"jobs\""), "a run without jobs gained a jobs table");
}

#[test]
fn bad_jobs_are_refused_with_their_key() {
    let bar = "motif = \"barrier\"";
    let cases: Vec<(String, &str)> = vec![
        (format!("{ONE_SWITCH}{}", job("a", 40, bar, "")), "jobs[0].ranks"),
        (format!("{ONE_SWITCH}{}", job("a", 4, bar, "allocation = { policy = \"linear\", offset = 30 }")), "jobs[0].allocation.policy"),
        (format!("{ONE_SWITCH}{}{}", job("a", 20, bar, ""), job("b", 20, bar, "")), "jobs[1].allocation.policy"),
        (format!("{ONE_SWITCH}{}", job("a", 2, bar, "allocation = { policy = \"explicit\", servers = [3, 3] }")), "jobs[0].allocation.policy"),
        (format!("{ONE_SWITCH}{}", job("a", 8, "motif = \"halo3d\", grid = [2, 2, 3]", "")), "jobs[0].workload.grid"),
        (format!("{ONE_SWITCH}{}", job("a", 8, "motif = \"sweep3d\", grid = [3, 3]", "")), "jobs[0].workload.grid"),
        (format!("{ONE_SWITCH}{}", job("a", 8, "motif = \"gather\"", "")), "jobs[0].workload.motif"),
        (format!("{ARIES}{}", job("a", 8, bar, "routing_mode = \"fastest\"")), "jobs[0].routing_mode"),
        (format!("{ONE_SWITCH}{}", job("a", 8, bar, "routing_mode = \"adaptive\"")), "jobs[0].routing_mode"),
        (format!("{ONE_SWITCH}{}", job("a", 3, "motif = \"ping_pong\"", "")), "jobs[0].ranks"),
        (format!("{ONE_SWITCH}{}", job("a", 4, "motif = \"allreduce\", algorithm = \"tree\"", "")), "jobs[0].workload.algorithm"),
        (format!("{ONE_SWITCH}{}", job("a", 4, bar, "allocation = { policy = \"best\" }")), "jobs[0].allocation.policy"),
        (format!("{ONE_SWITCH}{}", job("a", 4, bar, "background = true")), "jobs[].background"),
        (format!("{ONE_SWITCH}{}", job("a", 4, "motif = \"bernoulli\"", "")), "jobs[0].workload.load"),
        (format!("{ONE_SWITCH}{}", job("a", 4, "motif = \"allreduce\", bytes = 64, elements = 8", "")), "jobs[0].workload.elements"),
        (format!("{ONE_SWITCH}{}", job("a", 4, "motif = \"bcast\", bytes = 0", "")), "jobs[0].workload.bytes"),
        (format!("{ONE_SWITCH}{}", job("a", 4, "motif = \"bcast\", root = 4", "")), "jobs[0].workload.root"),
        (format!("{ONE_SWITCH}{}", job("a", 4, "motif = \"sweep3d\", block = 0", "")), "jobs[0].workload.block"),
        (format!("{ONE_SWITCH}{}", job("a", 8, "motif = \"halo3d\", domain = [4, 4]", "")), "jobs[0].workload.domain"),
        (format!("{ONE_SWITCH}{}", job("a", 8, "motif = \"halo3d\", domain = \"big\"", "")), "jobs[0].workload.domain"),
        (format!("{ONE_SWITCH}{}", job("a", 8, "motif = \"barrier\", byte = 64", "")), "jobs[0].workload.byte"),
        (ONE_SWITCH.replace("bytes = 64\n", "") + &job("a", 4, "motif = \"alltoall\", bytes = 64", ""), "jobs[0].workload.bytes"),
    ];
    for (toml, key) in cases {
        let e = common::refused(&toml);
        assert_eq!(e.key, key, "{e}\n{toml}");
    }
}

#[test]
fn each_motif_reads_its_own_keys_and_refuses_the_others_unless_the_motif_is_swept() {
    // A key no motif reads is refused naming the chosen motif's keys, the family's first.
    let e = common::refused(&format!("{ONE_SWITCH}{}", job("a", 4, "motif = \"bcast\", roots = 1", "")));
    assert_eq!((e.key.as_str(), e.value.as_str()), ("jobs[0].workload.roots", "1"));
    assert!(e.allowed.contains("jobs[0].workload.motif = \"bcast\"") && e.allowed.ends_with("allowed keys: motif, iterations, compute, barrier, bytes, root"), "{e}");
    // Another motif's key is refused as well...
    let ping_pong = format!("{ONE_SWITCH}{}", job("a", 4, "motif = \"ping_pong\", iterations = 2, root = 99, block = 0", ""));
    let e = common::refused(&ping_pong);
    assert_eq!(e.to_string(), "jobs[0].workload.block = 0: unknown key for jobs[0].workload.motif = \"ping_pong\"; allowed keys: motif, iterations, compute, barrier, bytes");
    // ...unless the experiment sweeps the motif: then it is left to the motif that reads it
    // (one table serves the sweep), even when it would be out of range there: bcast's root
    // 99 in a ping-pong of 4 ranks.
    let r = common::run(&format!("{ping_pong}[sweep]\n\"jobs.0.workload.motif\" = [\"ping_pong\", \"bcast\", \"sweep3d\"]\n"));
    assert!(r.jobs[0].complete);
    // A wrong type is named with the motif's key.
    let e = common::refused(&format!("{ONE_SWITCH}{}", job("a", 4, "motif = \"bcast\", root = \"first\"", "")));
    assert_eq!(e.key, "jobs[0].workload.root", "{e}");
}

#[test]
fn the_normalised_spec_lists_the_motif_keys_its_motif_reads_and_the_others_null() {
    // What a run folder's spec.json keeps (compared on --resume): every motif's keys for every
    // job, those of its own motif as the motif's type reads them (defaults filled in, a load
    // of 1 the float 1.0), the others null, so that the normalised spec is valid input again.
    let toml = format!("{ONE_SWITCH}{}{}", job("a", 4, "motif = \"ping_pong\", bytes = 64", ""), job("b", 8, "motif = \"bernoulli\", load = 1", "background = true"));
    let spec = spec::from_toml_str(&toml).unwrap();
    let text = hopsim_core::validate_json(&serde_json::to_string(&spec).unwrap()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let got: Vec<_> = v["jobs"].as_array().unwrap().iter().map(|j| j["workload"].clone()).collect();
    let common = serde_json::json!({"iterations": 10, "compute": 0, "barrier": false});
    for (w, motif, own) in [(&got[0], "ping_pong", serde_json::json!({"bytes": 64})), (&got[1], "bernoulli", serde_json::json!({"load": 1.0}))] {
        assert_eq!(w["motif"], motif);
        for (k, value) in common.as_object().unwrap().iter().chain(own.as_object().unwrap()) {
            assert_eq!(&w[k], value, "{motif}: {k}");
        }
        let nulls: Vec<_> = w.as_object().unwrap().iter().filter(|(_, v)| v.is_null()).map(|(k, _)| k.as_str()).collect();
        for key in ["element_bytes", "block", "root", "domain"] {
            assert!(nulls.contains(&key), "{motif}: {key} not null in {w}");
        }
        assert_eq!(w.as_object().unwrap().len(), 4 + own.as_object().unwrap().len() + nulls.len(), "{w}");
    }
    assert_eq!(got[1]["load"].to_string(), "1.0");
    // Valid input again, and normalised to itself.
    assert_eq!(hopsim_core::validate_json(&text).unwrap(), text);
}

#[test]
fn each_job_sends_with_its_routing_mode() {
    let a2a = "motif = \"alltoall\", iterations = 2, bytes = 256";
    let jobs = job("a", 8, a2a, "routing_mode = \"nmin_hash\"\nallocation = { policy = \"spread\" }")
        + &job("b", 8, a2a, "routing_mode = \"min_hash\"\nallocation = { policy = \"spread\" }");
    let r = common::run(&format!("{ARIES}{jobs}"));
    let m = &r.metrics.per_mode;
    // Every packet of each job, and every response (which goes by its request's mode).
    let packets: u64 = r.jobs.iter().map(|j| j.packets).sum();
    assert_eq!(m["packets_nmin_hash"] + m["packets_min_hash"], packets as f64);
    assert_eq!(m["nonminimal_fraction_min_hash"], 0.0);
    // Spread over 3 groups, 3 + 3 + 2 of the ranks share a router (servers 0-2, 16-18,
    // 32-33), so 14 of the 56 pairs have no detour; the others all go non-minimally.
    assert_eq!(m["nonminimal_fraction_nmin_hash"], 0.75, "{m:?}");
    assert_eq!(r.jobs[0].mode_bytes.keys().collect::<Vec<_>>(), vec!["nmin_hash"]);
    assert_eq!(r.jobs[0].mode_bytes["nmin_hash"], r.jobs[0].bytes);
    // Application-aware: messages below the threshold go with high bias; large ones are
    // decided from the counters, with adaptive's stand-in increasingly minimal for alltoall.
    let small = common::run(&format!("{ARIES}{}", job("a", 8, "motif = \"allreduce\", iterations = 4, bytes = 256", "routing_mode = \"app_aware\"")));
    assert_eq!(small.jobs[0].mode_bytes.keys().collect::<Vec<_>>(), vec!["adaptive_high_bias"]);
    let large = common::run(&format!("{ARIES}{}", job("a", 8, "motif = \"alltoall\", iterations = 4, bytes = 8192", "routing_mode = \"app_aware\"")));
    let modes: Vec<_> = large.jobs[0].mode_bytes.keys().cloned().collect();
    assert!(modes.iter().all(|m| m == "adaptive_high_bias" || m == "increasingly_minimal"), "{modes:?}");
    assert_eq!(large.jobs[0].mode_bytes.values().sum::<u64>(), large.jobs[0].bytes);
}

#[test]
fn routers_places_the_job_on_its_routers_in_blocks_and_leaves_the_rest_to_the_background() {
    // ARIES: 3 groups of 4 routers of 4 servers. 10 ranks on 5 routers over groups 1-2: 3
    // routers in group 1, 2 in group 2, 2 ranks each, consecutive ranks on one router.
    let bar = "motif = \"barrier\", iterations = 1";
    let jobs = job("app", 10, bar, "allocation = { policy = \"routers\", routers = 5, groups = 2, offset = 1 }")
        + &job("noise", 38, "motif = \"bernoulli\", load = 0.1, bytes = 64", "background = true");
    let r = common::run(&format!("{ARIES}{jobs}"));
    assert_eq!(r.jobs[0].servers, vec![16, 17, 20, 21, 24, 25, 32, 33, 36, 37]);
    assert_eq!(r.jobs[0].groups, vec![1, 1, 1, 1, 1, 1, 2, 2, 2, 2]);
    // The background took every other server, the free ones of the job's routers too.
    let mut all: Vec<u32> = r.jobs.iter().flat_map(|j| j.servers.iter().copied()).collect();
    all.sort();
    assert_eq!(all, (0..48).collect::<Vec<u32>>());
    assert!(r.jobs[1].servers.contains(&18) && r.jobs[1].servers.contains(&0));
}

#[test]
fn routers_refuses_keys_that_cannot_work_naming_them() {
    let bar = "motif = \"barrier\"";
    let alloc = |keys: &str| format!("allocation = {{ policy = \"routers\"{keys} }}");
    let cases = [
        (8, alloc(""), "jobs[0].allocation.routers"),
        (8, alloc(", routers = 0"), "jobs[0].allocation.routers"),
        (8, alloc(", routers = 9"), "jobs[0].allocation.routers"),
        (8, alloc(", routers = 2, groups = 3"), "jobs[0].allocation.routers"),
        (20, alloc(", routers = 4"), "jobs[0].allocation.routers"),
        (8, alloc(", routers = 4, groups = 4"), "jobs[0].allocation.groups"),
        (8, alloc(", routers = 4, offset = 3"), "jobs[0].allocation.offset"),
        (8, "allocation = { policy = \"spread\", routers = 4 }".to_string(), "jobs[0].allocation.routers"),
    ];
    for (ranks, allocation, key) in cases {
        let toml = format!("{ARIES}{}", job("a", ranks, bar, &allocation));
        let e = common::refused(&toml);
        assert_eq!(e.key, key, "{e}\n{allocation}");
    }
    let e = common::refused(&format!("{ARIES}{}", job("a", 8, bar, &alloc(", routers = 9"))));
    assert!(e.to_string().contains('9') && e.to_string().contains("2 to 8 routers"), "{e}");
}

#[test]
fn the_default_mode_is_cray_mpis_per_operation() {
    let run = |motif: &str, ranks: usize| common::run(&format!("{ARIES}{}", job("a", ranks, motif, "routing_mode = \"default\"\nallocation = { policy = \"spread\" }")));
    let modes = |r: &hopsim_core::RunResult| r.jobs[0].mode_bytes.keys().cloned().collect::<Vec<_>>();
    // alltoall: every message increasingly minimal.
    let r = run("motif = \"alltoall\", iterations = 2, bytes = 256", 8);
    assert_eq!(modes(&r), vec!["increasingly_minimal"]);
    assert_eq!(r.jobs[0].routing_mode, "default");
    // halo3d and allreduce: adaptive.
    assert_eq!(modes(&run("motif = \"halo3d\", iterations = 2, domain = [4, 4, 4]", 8)), vec!["adaptive"]);
    assert_eq!(modes(&run("motif = \"allreduce\", iterations = 2, bytes = 256", 8)), vec!["adaptive"]);
    // fft3d's transposes are alltoalls among rows and columns.
    assert_eq!(modes(&run("motif = \"fft3d\", iterations = 1, points = 8", 8)), vec!["increasingly_minimal"]);
    // graph500 mixes operations: its alltoallv per level goes increasingly minimal, the
    // allreduce that ends the search adaptive.
    let r = run("motif = \"graph500\", iterations = 1, scale = 8, levels = 2", 8);
    assert_eq!(modes(&r), vec!["adaptive", "increasingly_minimal"]);
    assert_eq!(r.jobs[0].mode_bytes.values().sum::<u64>(), r.jobs[0].bytes);
    // The modes travel with the packets: the same counts in the run's per-mode metrics.
    let m = &r.metrics.per_mode;
    assert!(m["packets_adaptive"] > 0.0 && m["packets_increasingly_minimal"] > 0.0, "{m:?}");
    // A job that names no mode takes the run's routing.mode and is reported under its name.
    let r = common::run(&format!("{ARIES}{}", job("a", 8, "motif = \"alltoall\", iterations = 1, bytes = 64", "")));
    assert_eq!(r.jobs[0].routing_mode, "adaptive");
    assert_eq!(r.jobs[0].mode_bytes.keys().collect::<Vec<_>>(), vec!["adaptive"]);
}
