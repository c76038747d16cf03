//! `run.drain`: the run goes on past the measured window until every packet generated in it
//! is delivered. Without it a packet still in flight when the window closes is left out of
//! the latencies, and under a standing queue (SST Merlin's adversarial Dragonfly translation,
//! docs/validation/sst.md) those are the slowest. The measured differences are in
//! docs/validation/booksim2.md and docs/validation/sst.md.

use crate::common::run;

/// docs/validation/sst.md's `sst-dragonfly-72-ugal-adv` at offered 0.3, a shorter window.
fn merlin_adversarial(drain: u64, threads: usize) -> String {
    format!(
        "[topology]\nkind = \"dragonfly\"\nswitches_per_group = 4\nglobal_links_per_switch = 2\nservers_per_switch = 2\n\
         global_arrangement = \"consecutive\"\n\
         [link]\nlatency = 10\n[link.injection]\nlatency = 10\n\
         [router]\nvcs = 3\ninput_buffer_phits = 512\noutput_buffer_phits = 512\nflow_control = \"vct\"\npipeline_delay = 19\n\
         next_head_routing = \"at_front\"\nvc_allocator = \"none\"\nswitch_allocator = \"lru\"\n\
         [packet]\nphits = 8\n\
         [routing]\nalgorithm = \"ugal_l\"\nvc_policy = \"global_hops\"\nugal_queue = \"vc\"\nqueue_reach = \"own_output\"\nugal_weights = \"one_to_two\"\n\
         ugal_threshold = 50\nugal_intermediate = \"group\"\ninjection_vcs = \"policy\"\n\
         [traffic]\npattern = \"adv\"\nadv_offset = 1\nload = 0.3\n[workload]\nkind = \"periodic\"\n\
         [run]\nwarmup = 5000\ncycles = 10000\nseed = 1\ndrain = {drain}\nthreads = {threads}\n"
    )
}

#[test]
fn drain_counts_every_packet_generated_in_the_window_and_the_window_alone_leaves_the_slowest_out() {
    let (cut, drained) = (run(&merlin_adversarial(0, 1)).metrics, run(&merlin_adversarial(100_000, 1)).metrics);
    // Packets generated in the window: the generated load over the window's server-cycles.
    let generated = (drained.generated_load * drained.active_servers as f64 * 10_000.0 / 8.0).round() as u64;
    assert_eq!(drained.packets_measured_delivered, generated, "drained: every packet of the window delivered");
    assert!(cut.packets_measured_delivered < generated * 97 / 100, "the window alone: {} of {generated}", cut.packets_measured_delivered);
    // What the window measures besides latency does not change.
    assert_eq!(cut.accepted_load, drained.accepted_load);
    assert_eq!(cut.generated_load, drained.generated_load);
    assert!(
        drained.packet_latency_mean > 1.08 * cut.packet_latency_mean,
        "latency {} drained against {} cut",
        drained.packet_latency_mean,
        cut.packet_latency_mean
    );
}

/// The drained run is the same on two threads as on one.
#[test]
fn a_drained_run_does_not_depend_on_the_threads() {
    let (one, two) = (run(&merlin_adversarial(100_000, 1)), run(&merlin_adversarial(100_000, 2)));
    assert_eq!(crate::common::fingerprint(&one), crate::common::fingerprint(&two));
}

/// The cross-check's `mesh-8x8-2vc-1flit-transpose` (BookSim2's `iq` router translated) at
/// offered 0.15, under its saturation of 0.17 as a whole but over it at the sources beside
/// the diagonal, whose queues grow through the window.
fn transpose(run_extra: &str) -> String {
    format!(
        "[topology]\nkind = \"mesh\"\ndims = [8, 8]\nservers_per_switch = 1\n\
         [link]\nlatency = 2\n[link.injection]\nlatency = 2\n\
         [router]\nvcs = 2\ninput_buffer_phits = 8\noutput_buffer_phits = 2\nflow_control = \"wormhole\"\npipeline_delay = 1\n\
         vc_allocation = \"before_switch\"\nnext_head_routing = \"after_tail\"\nvc_allocator = \"islip\"\nswitch_allocator = \"islip\"\n\
         [packet]\nphits = 1\n\
         [routing]\nalgorithm = \"dor\"\nvc_policy = \"none\"\ninjection_vcs = \"any_round_robin\"\n\
         [traffic]\npattern = \"transpose\"\nload = 0.15\n\
         [run]\nwarmup = 3000\ncycles = 3000\nseed = 1\n{run_extra}\n"
    )
}

/// `run.measure = "injected"` measures the packets sent in the window, as BookSim2's
/// `sim_type = throughput` records them (made, and recorded, when the source queue's packet
/// before is out): a drain then waits for those alone, and an over-saturated source adds the
/// waits of its packets sent in the window, not of its whole queue grown through it.
#[test]
fn measured_at_injection_a_drain_waits_for_the_packets_sent_in_the_window_not_the_source_queues() {
    let by_generation = run(&transpose("drain = 30000")).metrics;
    let by_injection = run(&transpose("drain = 30000\nmeasure = \"injected\"")).metrics;
    let quiet = run(&transpose("drain = 30000\nmeasure = \"injected\"\ndrain_quiet = true")).metrics;
    let cut = run(&transpose("measure = \"injected\"")).metrics;
    let generated = (by_generation.generated_load * by_generation.active_servers as f64 * 3000.0).round() as u64;
    assert_eq!(by_generation.packets_measured_delivered, generated);
    // The queues' packets still waiting at the window's end are not measured.
    assert!(by_injection.packets_measured_delivered < generated * 95 / 100, "{} of {generated}", by_injection.packets_measured_delivered);
    assert_eq!(by_injection.packets_measured_delivered, quiet.packets_measured_delivered);
    assert!(by_injection.packets_measured_delivered > cut.packets_measured_delivered);
    assert!(
        by_generation.packet_latency_mean > 2.0 * by_injection.packet_latency_mean,
        "drained, by generation {} against by injection {}",
        by_generation.packet_latency_mean,
        by_injection.packet_latency_mean
    );
    // Quiet sources: the measured packets still in flight drain faster.
    assert!(quiet.packet_latency_mean <= by_injection.packet_latency_mean);
    assert!(by_injection.packet_latency_mean > cut.packet_latency_mean);
    assert_eq!(by_injection.accepted_load, by_generation.accepted_load);
}

/// A quiet drain stops the sources: measured by generation, the packets still queued at the
/// window's end would never be sent, so it is refused; as is a drain past 2^31 cycles.
#[test]
fn a_quiet_drain_by_generation_and_a_drain_past_the_cycle_limit_are_refused() {
    for (extra, key) in [("drain = 30000\ndrain_quiet = true", "run.drain_quiet"), ("measure = \"injected\"\ndrain_quiet = true", "run.drain_quiet"), ("drain = 2147480000", "run.drain")] {
        let e = hopsim_core::spec::from_toml_str(&transpose(extra)).and_then(|s| hopsim_core::simulate(&s).map(|_| ())).err().unwrap_or_else(|| panic!("{extra}: accepted"));
        assert!(e.to_string().contains(key), "{extra}: {e}");
    }
}

/// `run.measure = "received"` counts what is delivered in the window, whenever created (SST
/// Merlin's endpoints): about the accepted load's packets, and under the standing queue of
/// the adversarial Dragonfly a higher mean than the packets created in the window that made
/// it out by its end. A drain has nothing to wait for then, and is refused.
#[test]
fn measured_by_receipt_the_latencies_count_what_the_window_delivers() {
    let received = run(&format!("{}measure = \"received\"\n", merlin_adversarial(0, 1))).metrics;
    let generated = run(&merlin_adversarial(0, 1)).metrics;
    let accepted_packets = received.accepted_load * received.active_servers as f64 * 10_000.0 / 8.0;
    assert!((received.packets_measured_delivered as f64 / accepted_packets - 1.0).abs() < 0.01, "{} against {accepted_packets}", received.packets_measured_delivered);
    assert_eq!(received.accepted_load, generated.accepted_load);
    assert!(received.packet_latency_mean > 1.05 * generated.packet_latency_mean, "{} against {}", received.packet_latency_mean, generated.packet_latency_mean);
    let e = hopsim_core::spec::from_toml_str(&format!("{}measure = \"received\"\n", merlin_adversarial(1000, 1))).and_then(|s| hopsim_core::simulate(&s).map(|_| ())).err().expect("refused");
    assert!(e.to_string().contains("run.drain"), "{e}");
}
