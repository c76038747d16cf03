//! A run resumed from a checkpoint (`run.checkpoint_every`, engine/checkpoint.rs) gives the
//! results of the run that was never stopped, bit for bit, on every part of the engine the
//! thread tests reach (a torus, a HyperX with Valiant, a Dragonfly with UGAL-L and UGAL-G,
//! the Aries network, a deadlocking ring, closed-loop workloads, a GET protocol, jobs with
//! application-aware routing and timelines beside background traffic), and whatever the
//! threads before and after; writing checkpoints changes nothing either. A checkpoint of
//! another spec or another hopsim, or no checkpoint at all, is refused.
use crate::common::{fingerprint, nets};
use hopsim_core::engine::checkpoint::CheckpointError;
use hopsim_core::engine::{Built, Simulation};
use hopsim_core::RunResult;
use std::path::{Path, PathBuf};

fn spec(toml: &str) -> hopsim_core::spec::Validated {
    hopsim_core::spec::from_toml_str(toml).unwrap_or_else(|e| panic!("bad spec: {e}\n{toml}"))
}

fn checked(r: RunResult) -> RunResult {
    assert!(r.metrics.phits_conserved, "phits not conserved: {}", r.metrics.deadlock_where);
    assert!(r.metrics.credits_conserved, "credits not conserved: {}", r.metrics.deadlock_where);
    r
}

/// A run of `toml`, every phase split among its threads when it has several.
fn run_with(sim: Simulation, threads: usize) -> RunResult {
    let mut sim = sim;
    if threads > 1 {
        sim.split_every_phase();
    }
    checked(sim.run())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hopsim-checkpoint-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("run.checkpoint")
}

/// `body` with `run` lines on `threads` threads, writing checkpoints to `path` every `every`
/// cycles.
fn toml(body: &str, run: &str, threads: usize, every: u64) -> String {
    format!("{body}\n[run]\n{run}\nthreads = {threads}\ncheckpoint_every = {every}\n")
}

/// The run of `body` never stopped, against: the same writing one checkpoint about half-way
/// (on 1 and 2 threads), and runs resumed from that checkpoint on 1, 2 and 3 threads.
fn same_after_resuming(name: &str, body: &str, run: &str) -> RunResult {
    same_after_resuming_every(name, body, run, None)
}

/// `same_after_resuming` with checkpoints every `every` cycles (the last one written is
/// resumed from), or one half-way through the measured cycles (closed loops end early).
fn same_after_resuming_every(name: &str, body: &str, run: &str, every: Option<u64>) -> RunResult {
    let whole = run_with(Simulation::new(&spec(&toml(body, run, 1, 0))).unwrap(), 1);
    let print = fingerprint(&whole);
    let every = every.unwrap_or((whole.metrics.cycles / 2).max(1));
    for (writer, readers) in [(1, [1, 2, 3]), (2, [1, 3, 2])] {
        let path = scratch(&format!("{name}-{writer}"));
        let _ = std::fs::remove_file(&path);
        let mut sim = Simulation::new(&spec(&toml(body, run, writer, every))).unwrap();
        sim.checkpoint_to(&path);
        assert_eq!(fingerprint(&run_with(sim, writer)), print, "{name}: writing checkpoints changed the results on {writer} thread(s)");
        assert!(path.exists(), "{name}: no checkpoint written at cycle {every} of {}", whole.metrics.cycles);
        for reader in readers {
            let built = Built::new(&spec(&toml(body, run, reader, every))).unwrap();
            let resumed = Simulation::resume_from(built, &path).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(fingerprint(&run_with(resumed, reader)), print, "{name}: written on {writer} thread(s), resumed on {reader}");
        }
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
    whole
}

#[test]
fn a_torus_resumes_as_if_never_stopped() {
    let r = same_after_resuming("torus", "[topology]\nkind = \"torus\"\ndims = [6, 6, 6]\n[traffic]\npattern = \"uniform\"\nload = 0.5", "warmup = 500\ncycles = 2000\nseed = 5");
    assert!(r.metrics.packets_delivered > 1000);
}

#[test]
fn a_hyperx_with_valiant_resumes_as_if_never_stopped() {
    same_after_resuming("hyperx", nets::HYPERX_VALIANT_SATURATED, "warmup = 500\ncycles = 2000\nseed = 2");
}

#[test]
fn a_dragonfly_with_ugal_resumes_as_if_never_stopped() {
    for algorithm in ["ugal_l", "ugal_g"] {
        same_after_resuming(algorithm, &nets::dragonfly_ugal(algorithm), "warmup = 500\ncycles = 2000\nseed = 9");
    }
}

#[test]
fn the_aries_network_resumes_as_if_never_stopped() {
    same_after_resuming("aries", nets::ARIES_ADAPTIVE, "warmup = 500\ncycles = 2000\nseed = 4");
}

#[test]
fn a_deadlock_is_found_at_the_same_cycle_after_resuming() {
    let r = same_after_resuming("deadlock", nets::DEADLOCKING_RING, "warmup = 100\ncycles = 200000");
    assert!(r.metrics.deadlock, "this ring must deadlock");
}

#[test]
fn closed_loop_workloads_resume_as_if_never_stopped() {
    let r = same_after_resuming("ping-pong", &nets::ping_pong("[5, 5, 5]", 20), "warmup = 0\ncycles = 2000000");
    assert!(r.metrics.workload_complete && r.metrics.samples == 30);
    let r = same_after_resuming("get", nets::GET_BANDWIDTH_WINDOWS, "warmup = 0\ncycles = 1000000");
    assert!(r.metrics.workload_complete && r.metrics.responses_received > 0);
}

#[test]
fn jobs_resume_as_if_never_stopped() {
    let r = same_after_resuming(
        "jobs",
        "[topology]\nkind = \"aries\"\ngroups = 3\nchassis = 2\nblades = 2\n[routing]\nalgorithm = \"aries\"\n\
         [router]\nvcs = 8\n[packet]\nphits = 5\n[nic]\nprotocol = \"put\"\n[traffic]\n\
         [[jobs]]\nname = \"app\"\nranks = 8\nworkload = { motif = \"alltoall\", iterations = 3, bytes = 4096 }\nrouting_mode = \"app_aware\"\ntimeline = true\n\
         [[jobs]]\nname = \"halo\"\nranks = 8\nworkload = { motif = \"halo3d\", iterations = 2, domain = [8, 8, 8] }\nrouting_mode = \"default\"\n\
         [[jobs]]\nname = \"noise\"\nranks = 8\nworkload = { motif = \"bernoulli\", load = 0.3, bytes = 256 }\nbackground = true",
        "warmup = 0\ncycles = 2000000",
    );
    assert!(r.jobs[0].complete && r.jobs[1].complete && r.jobs[2].messages > 0);
}

#[test]
fn a_run_resumed_in_its_drain_drains_as_if_never_stopped() {
    // Checkpointed past its window, while it waits for the packets the window measured: the
    // cycle it stops at has moved to the drain's end.
    let (body, run) = ("[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\npattern = \"uniform\"\nload = 0.9", "warmup = 100\ncycles = 400\ndrain = 20000");
    same_after_resuming_every("drain", body, run, Some(520));
    let path = scratch("drain-cycle");
    let mut sim = Simulation::new(&spec(&toml(body, run, 1, 520))).unwrap();
    sim.checkpoint_to(&path);
    sim.run();
    let resumed = Simulation::resume_from(Built::new(&spec(&toml(body, run, 1, 520))).unwrap(), &path).unwrap();
    assert!(resumed.cycle() >= 520, "the checkpoint resumed is past the window's end (500): cycle {}", resumed.cycle());
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn a_periodic_workload_resumes_as_if_never_stopped() {
    same_after_resuming("periodic", "[topology]\nkind = \"torus\"\ndims = [4, 4]\n[workload]\nkind = \"periodic\"\n[traffic]\nload = 0.4", "warmup = 300\ncycles = 1500");
}

fn written(name: &str, body: &str) -> PathBuf {
    let path = scratch(name);
    let mut sim = Simulation::new(&spec(&toml(body, "warmup = 100\ncycles = 400", 1, 200))).unwrap();
    sim.checkpoint_to(&path);
    sim.run();
    path
}

fn refused(body: &str, path: &Path) -> CheckpointError {
    let built = Built::new(&spec(&toml(body, "warmup = 100\ncycles = 400", 1, 200))).unwrap();
    match Simulation::resume_from(built, path) {
        Ok(_) => panic!("resumed from {}", path.display()),
        Err(e) => e,
    }
}

#[test]
fn a_checkpoint_of_another_spec_version_or_nothing_is_refused() {
    let body = "[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\nload = 0.3";
    let path = written("refused", body);
    let other = refused("[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\nload = 0.4", &path);
    assert!(matches!(other, CheckpointError::OtherSpec), "{other}");

    // The version is the header's first string: another one is named in the refusal.
    let original = std::fs::read(&path).unwrap();
    let mut bytes = original.clone();
    let version = env!("CARGO_PKG_VERSION").as_bytes();
    let at = bytes.windows(version.len()).position(|w| w == version).expect("version in the header");
    bytes[at] = if bytes[at] == b'9' { b'8' } else { b'9' };
    let patched = path.with_extension("other-version");
    std::fs::write(&patched, &bytes).unwrap();
    let e = refused(body, &patched);
    assert!(matches!(e, CheckpointError::OtherVersion(_)) && e.to_string().contains("written by hopsim"), "{e}");

    std::fs::write(&patched, &original[..original.len() / 2]).unwrap();
    let e = refused(body, &patched);
    assert!(matches!(e, CheckpointError::Damaged(_)), "a truncated checkpoint: {e}");
    std::fs::write(&patched, b"[topology]\n").unwrap();
    assert!(matches!(refused(body, &patched), CheckpointError::NotACheckpoint));
    assert!(matches!(refused(body, &path.with_extension("missing")), CheckpointError::Unreadable(_)));
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
