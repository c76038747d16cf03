//! hopsim configured like the BookSim2 reference run (BookSim2 commit 28f43299 on an 8x8
//! torus); docs/validation/booksim2.md gives its numbers and explains the comparison.
use crate::common;

fn booksim_like(vcs: usize, load: f64) -> hopsim_core::RunResult {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/booksim2-torus-8x8.toml")).unwrap();
    let text = text.replace("vcs = 2", &format!("vcs = {vcs}")).replace("load = 0.05", &format!("load = {load}"));
    let text = text.replace("warmup = 10000", "warmup = 4000").replace("cycles = 30000", "cycles = 12000");
    common::run(&text)
}

#[test]
fn zero_load_latency_within_ten_percent_of_booksim() {
    let m = booksim_like(2, 0.05).metrics;
    assert!((m.packet_latency_mean - 31.5).abs() / 31.5 < 0.10, "latency {}", m.packet_latency_mean);
}

#[test]
fn eight_vc_saturation_within_ten_percent_of_booksim() {
    // BookSim2: about 0.65 accepted at 0.65 offered (latency 52.5), 0.64 at 0.70.
    let at_065 = booksim_like(8, 0.65).metrics;
    assert!((at_065.accepted_load - 0.65).abs() / 0.65 < 0.10, "accepted {}", at_065.accepted_load);
    assert!((at_065.packet_latency_mean - 52.5).abs() / 52.5 < 0.25, "latency {}", at_065.packet_latency_mean);
    let at_075 = booksim_like(8, 0.75).metrics;
    assert!((at_075.accepted_load - 0.65).abs() / 0.65 < 0.10, "saturated at {}", at_075.accepted_load);
}
