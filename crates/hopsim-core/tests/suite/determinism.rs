//! Same spec and seed: bit-identical results; another seed: different ones.
use crate::common::{self, fingerprint};

fn spec(seed: u64, pattern: &str) -> String {
    format!("[topology]\nkind = \"torus\"\ndims = [6, 6]\n[traffic]\npattern = \"{pattern}\"\nload = 0.5\n[run]\nwarmup = 1000\ncycles = 5000\nseed = {seed}\n")
}

#[test]
fn same_seed_same_bits_other_seed_other_bits() {
    for pattern in ["uniform", "random_pairs", "hotspot"] {
        let a = common::run(&spec(7, pattern));
        let b = common::run(&spec(7, pattern));
        assert_eq!(fingerprint(&a), fingerprint(&b), "{pattern}");
        let c = common::run(&spec(8, pattern));
        assert_ne!(fingerprint(&a), fingerprint(&c), "{pattern}");
    }
}

#[test]
fn runs_in_parallel_threads_match_a_single_thread() {
    let alone = fingerprint(&common::run(&spec(3, "uniform")));
    let handles: Vec<_> = (0..4).map(|_| std::thread::spawn(|| fingerprint(&common::run(&spec(3, "uniform"))))).collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), alone);
    }
}

/// Random join-the-shortest-queue tie breaks draw from the switch's own generator: the same
/// seed repeats them, and they do change which VCs packets take.
#[test]
fn random_jsq_ties_repeat_per_seed() {
    let hx = |ties: &str| {
        format!("[topology]\nkind = \"hyperx\"\ndims = [4, 4]\nservers_per_switch = 4\n[router]\nvcs = 4\njsq_tie_break = \"{ties}\"\n[routing]\nalgorithm = \"valiant\"\nvc_policy = \"ladder_reuse\"\n[traffic]\npattern = \"shift\"\nshift = [1, 1]\nload = 0.6\n[run]\nwarmup = 1000\ncycles = 5000\nseed = 4\n")
    };
    let a = fingerprint(&common::run(&hx("random")));
    assert_eq!(a, fingerprint(&common::run(&hx("random"))));
    assert_ne!(a, fingerprint(&common::run(&hx("lowest"))));
}

/// A run that publishes its progress counts every cycle up to its end, and following it
/// changes nothing in what it computes.
#[test]
fn progress_reaches_the_last_cycle_and_changes_nothing() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let text = spec(5, "uniform").replace("cycles = 5000", "cycles = 20000");
    let s = hopsim_core::spec::from_toml_str(&text).unwrap();
    let cycles = Arc::new(AtomicU64::new(0));
    let followed = hopsim_core::simulate_with_progress(&s, Some(cycles.clone())).unwrap();
    assert_eq!(cycles.load(Ordering::Relaxed), 1000 + 20000);
    assert_eq!(fingerprint(&followed), fingerprint(&common::run(&text)));
}

/// A run whose cancel flag is set stops at once and returns nothing; a flag that stays
/// clear changes nothing in what the run computes.
#[test]
fn a_cancelled_run_returns_nothing_and_a_clear_flag_changes_nothing() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let text = spec(5, "uniform");
    let s = hopsim_core::spec::from_toml_str(&text).unwrap();
    let json = serde_json::to_string(&s).unwrap();
    let cycles = Arc::new(AtomicU64::new(0));
    let stopped = hopsim_core::simulate_json_cancellable(&json, Some(cycles.clone()), Arc::new(AtomicBool::new(true)), None, false, None, None, None);
    assert_eq!(stopped.unwrap(), None);
    assert_eq!(cycles.load(Ordering::Relaxed), 0);

    let mut sim = hopsim_core::engine::Simulation::new(&s).unwrap();
    sim.cancel_on(Arc::new(AtomicBool::new(false)));
    assert_eq!(fingerprint(&sim.run()), fingerprint(&common::run(&text)));
}
