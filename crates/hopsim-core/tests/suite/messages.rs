//! Messages are cut into packets and reassembled completely; DOR keeps them in order, RDR
//! does not; in-order delivery holds early packets back; ping-pong and bandwidth tests
//! produce one sample per round trip or window.
use crate::common;

fn messages(algorithm: &str, vcs: usize, in_order: bool, dims: &str) -> hopsim_core::RunResult {
    common::run(&format!(
        "[topology]\nkind = \"torus\"\ndims = {dims}\n[router]\nvcs = {vcs}\n[routing]\nalgorithm = \"{algorithm}\"\n\
         [packet]\nphits = 8\nbytes = 512\n[message]\nbytes = 8192\nin_order = {in_order}\n\
         [traffic]\nload = 0.3\n[run]\nwarmup = 2000\ncycles = 12000\n"
    ))
}

#[test]
fn messages_are_reassembled_and_dor_keeps_them_in_order() {
    let m = messages("dor", 2, false, "[6, 6]").metrics;
    assert_eq!(m.packets_out_of_order, 0, "DOR has one path per pair");
    assert!(m.messages_measured_delivered > 100);
    // Every delivered message accounts for its 16 packets.
    assert!(m.packets_delivered >= 16 * m.messages_measured_delivered);
    assert!(m.message_latency_mean > m.packet_latency_mean);
}

#[test]
fn rdr_reorders_and_in_order_delivery_pays_for_it() {
    let free = messages("rdr", 3, false, "[6, 6, 6]").metrics;
    assert!(free.packets_out_of_order > 0, "RDR spreads a message over several paths");
    assert!(free.reorder_delay_mean > 0.0);
    let ordered = messages("rdr", 3, true, "[6, 6, 6]").metrics;
    assert_eq!(ordered.packets_out_of_order, free.packets_out_of_order, "same seed, same arrivals");
    // Held packets reach the application later, so packet latency grows; messages do not.
    assert!(ordered.packet_latency_mean > free.packet_latency_mean);
    assert_eq!(ordered.message_latency_mean, free.message_latency_mean);
    assert!(ordered.reorder_buffer_max >= 1);
}

fn closed_loop(kind: &str, pairs: usize, iterations: u32) -> hopsim_core::RunResult {
    let window = if kind == "bandwidth" { "window = 4\n" } else { "" };
    common::run(&format!(
        "[topology]\nkind = \"torus\"\ndims = [5, 5, 5]\n[link]\ngbytes_per_s = 2.0\n[packet]\nphits = 16\nbytes = 512\n\
         [message]\nbytes = 8192\n[workload]\nkind = \"{kind}\"\niterations = {iterations}\n{window}\
         [traffic]\nactive_servers = {}\n[run]\nwarmup = 0\ncycles = 2000000\n",
        2 * pairs
    ))
}

#[test]
fn ping_pong_gives_one_sample_per_round_trip() {
    let r = closed_loop("ping_pong", 20, 3);
    let m = &r.metrics;
    assert!(m.workload_complete, "all iterations done before run.cycles");
    assert_eq!(m.samples, 60);
    assert_eq!(r.samples.cycles.len(), 60);
    // A round trip is at least two zero-load message latencies: 16 packets of 16 phits out,
    // one packet back, one hop at least each way.
    let min_rt = (16 * 16 - 1 + 16 - 1 + 2 * (3 + 2)) as u64;
    assert!(r.samples.cycles.iter().all(|&c| c >= min_rt), "{:?}", r.samples.cycles.iter().min());
    assert!(r.samples.us.iter().all(|&us| us > 0.0));
    // The run ends when the last round trip does.
    assert!(m.cycles < 2_000_000);
}

#[test]
fn bandwidth_test_measures_per_pair_bandwidth() {
    let r = closed_loop("bandwidth", 10, 2);
    assert_eq!(r.metrics.samples, 20);
    for (&gbs, &ppc) in r.samples.gbytes_per_s.iter().zip(&r.samples.phits_per_cycle) {
        // A pair cannot beat its injection link: 1 phit per cycle = 2 GB/s here.
        assert!(ppc <= 1.0 && ppc > 0.2, "{ppc}");
        assert!((gbs - 2.0 * ppc).abs() < 1e-9);
    }
}

#[test]
fn acknowledgements_are_counted_apart_from_data_messages() {
    let r = closed_loop("ping_pong", 20, 3);
    let m = &r.metrics;
    // One data message and one acknowledgement per round trip.
    assert_eq!(m.messages_measured_delivered, 60);
    assert_eq!(m.acks_measured_delivered, 60);
    // A data message is 16 packets of 16 phits, an acknowledgement one packet: the data
    // message takes at least its 256 phits; an acknowledgement far less.
    assert!(m.message_latency_p50 >= 256.0, "{}", m.message_latency_p50);
    assert!(m.ack_latency_mean < m.message_latency_mean / 4.0, "{} vs {}", m.ack_latency_mean, m.message_latency_mean);
    assert!(m.ack_latency_mean_us.unwrap() > 0.0);
    // Open-loop traffic has no acknowledgements.
    let open = messages("dor", 2, false, "[4, 4]").metrics;
    assert_eq!(open.acks_measured_delivered, 0);
}
