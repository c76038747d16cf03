//! A switch or NIC is stepped only in the cycles a wake-up asks for (docs/model.md, "A flit
//! that starts at its grant"): every change that may let something move must wake what it
//! concerns. Stepping every switch and every NIC in every cycle instead must give the same
//! results bit for bit; a missing wake-up would show as a packet that moves later (or never)
//! than when all are stepped.
use crate::common::{fingerprint, nets};
use hopsim_core::engine::Simulation;

fn run(toml: &str, every_cycle: bool, threads: Option<usize>) -> hopsim_core::RunResult {
    let spec = hopsim_core::spec::from_toml_str(toml).unwrap_or_else(|e| panic!("bad spec: {e}\n{toml}"));
    let mut sim = Simulation::new(&spec).unwrap_or_else(|e| panic!("bad spec: {e}"));
    if every_cycle {
        sim.step_everything();
    }
    if threads.is_some() {
        // The small networks here would otherwise keep every phase on one thread.
        sim.split_every_phase();
    }
    let r = sim.run();
    assert!(r.metrics.phits_conserved && r.metrics.credits_conserved, "not conserved: {}", r.metrics.deadlock_where);
    r
}

/// `body` with `[run]` lines `run_keys`: the same results whether only the switches and NICs
/// woken are stepped or all of them every cycle (on one thread, and on `threads` if given).
fn same_stepping_everything(body: &str, run_keys: &str, threads: Option<usize>) -> hopsim_core::RunResult {
    let toml = |t: usize| format!("{body}\n[run]\n{run_keys}\nthreads = {t}\n");
    let woken = run(&toml(1), false, None);
    let print = fingerprint(&woken);
    assert_eq!(fingerprint(&run(&toml(1), true, None)), print, "stepping everything changed the results of\n{body}");
    if let Some(t) = threads {
        assert_eq!(fingerprint(&run(&toml(t), true, Some(t))), print, "stepping everything on {t} threads changed the results of\n{body}");
    }
    woken
}

#[test]
fn a_torus_under_dor_and_virtual_cut_through() {
    let r = same_stepping_everything(
        "[topology]\nkind = \"torus\"\ndims = [8, 8]\n[router]\nvcs = 2\ninput_buffer = 4\noutput_buffer = 2\n\
         [packet]\nphits = 16\n[traffic]\npattern = \"uniform\"\nload = 0.45",
        "warmup = 300\ncycles = 3000\nseed = 2",
        Some(2),
    );
    assert!(r.metrics.packets_delivered > 1000);
}

#[test]
fn a_torus_under_wormhole_near_saturation() {
    // Packets span several switches and wait for single phits of space.
    let r = same_stepping_everything(
        "[topology]\nkind = \"torus\"\ndims = [6, 6]\n[router]\nflow_control = \"wormhole\"\ninput_buffer_phits = 4\n\
         [traffic]\npattern = \"uniform\"\nload = 0.6",
        "warmup = 300\ncycles = 2000\nseed = 3",
        None,
    );
    assert!(r.metrics.accepted_load < r.metrics.offered_load, "saturated");
}

#[test]
fn adaptive_routing_with_escape_vcs() {
    // VC allocation compares the space of the candidate VCs (join the shortest queue), which
    // counts a flit that has left before its space is given back; heads fall back on the
    // escape VCs when the adaptive ones fill.
    let r = same_stepping_everything(
        "[topology]\nkind = \"torus\"\ndims = [6, 6]\n[router]\nvcs = 3\ninput_buffer = 2\noutput_buffer = 1\n\
         [packet]\nphits = 8\n[routing]\nalgorithm = \"min_adaptive\"\nvc_policy = \"escape\"\n\
         [traffic]\npattern = \"uniform\"\nload = 0.8",
        "warmup = 300\ncycles = 2000\nseed = 3",
        Some(2),
    );
    assert!(r.metrics.packets_delivered > 1000);
}

#[test]
fn a_saturated_hyperx_under_valiant() {
    // Heads lose their output VC to others and wait for it.
    let r = same_stepping_everything(nets::HYPERX_VALIANT_SATURATED, "warmup = 300\ncycles = 1500\nseed = 2", None);
    assert!(r.metrics.accepted_load < r.metrics.offered_load, "saturated");
}

#[test]
fn a_dragonfly_under_ugal_with_random_ties() {
    for algorithm in ["ugal_l", "ugal_g"] {
        let r = same_stepping_everything(&nets::dragonfly_ugal(algorithm), "warmup = 300\ncycles = 1500\nseed = 9", None);
        assert!(r.metrics.packets_delivered > 1000, "{algorithm}");
    }
}

#[test]
fn a_dragonfly_under_sst_merlins_rules() {
    // Heads routed at the front of their VC by their switch's step, no VC allocation, LRU
    // switch allocation, adversarial traffic that keeps queues standing.
    let body = "[topology]\nkind = \"dragonfly\"\nswitches_per_group = 4\nglobal_links_per_switch = 2\nservers_per_switch = 2\n\
                global_arrangement = \"consecutive\"\n[router]\nvcs = 3\nnext_head_routing = \"at_front\"\nvc_allocator = \"none\"\n\
                switch_allocator = \"lru\"\n[packet]\nphits = 4\n[routing]\nalgorithm = \"ugal_l\"\nvc_policy = \"global_hops\"\n\
                ugal_queue = \"vc\"\nqueue_reach = \"own_output\"\nugal_weights = \"one_to_two\"\n\
                [traffic]\npattern = \"adv\"\nadv_offset = 1\nload = 0.3";
    let r = same_stepping_everything(body, "warmup = 300\ncycles = 1500\nseed = 5", Some(2));
    assert!(r.metrics.packets_delivered > 1000);
}

#[test]
fn the_aries_network_with_slow_and_long_links() {
    // Link classes slower than a phit a cycle: a flit's tail lands cycles after its head.
    let body = format!("{}\n[link]\nlatency = 10\ngbytes_per_s = 5.25\n[link.global]\nlatency = 100\ngbytes_per_s = 4.7", nets::ARIES_ADAPTIVE);
    let r = same_stepping_everything(&body, "warmup = 300\ncycles = 1500\nseed = 4", None);
    assert!(r.metrics.packets_delivered > 500);
}

#[test]
fn separate_allocation_stages_and_a_faster_crossbar() {
    for (stages, speedup) in [("vc_allocation = \"before_switch\"\nnext_head_routing = \"after_tail\"\npipeline_delay = 2", 1), ("", 2)] {
        let r = same_stepping_everything(
            &format!(
                "[topology]\nkind = \"mesh\"\ndims = [4, 4]\nservers_per_switch = 2\n[router]\nvcs = 2\nspeedup = {speedup}\n{stages}\n\
                 [packet]\nphits = 4\n[routing]\nvc_policy = \"none\"\n[traffic]\npattern = \"uniform\"\nload = 0.5"
            ),
            "warmup = 300\ncycles = 1500\nseed = 6",
            None,
        );
        assert!(r.metrics.packets_delivered > 500, "{stages} speedup {speedup}");
    }
}

#[test]
fn nics_answering_requests_under_a_get_protocol() {
    // Requests answered by the NICs, responses back, at most 3 outstanding: NICs wait for
    // responses, credits and their channel.
    let body = nets::GET_BANDWIDTH_WINDOWS.replace("protocol = \"get\"", "protocol = \"get\"\nmax_outstanding = 3");
    let r = same_stepping_everything(&body, "warmup = 0\ncycles = 1000000", Some(2));
    assert!(r.metrics.workload_complete && r.metrics.responses_received > 0);
}

#[test]
fn a_ping_pong_workload() {
    let r = same_stepping_everything(&nets::ping_pong("[4, 4, 4]", 10), "warmup = 0\ncycles = 2000000", None);
    assert!(r.metrics.workload_complete);
}

#[test]
fn a_deadlock_is_found_at_the_same_cycle() {
    let r = same_stepping_everything(nets::DEADLOCKING_RING, "warmup = 100\ncycles = 200000", None);
    assert!(r.metrics.deadlock, "this ring must deadlock");
}
