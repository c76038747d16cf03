//! Accepted load follows offered load below saturation, stays under the channel-load bound
//! above it, and channel loads add up to what the servers accepted.
use crate::common;

fn uniform(dims: &str, servers: usize, load: f64, extra: &str) -> hopsim_core::RunResult {
    common::run(&format!(
        "[topology]\nkind = \"torus\"\ndims = {dims}\nservers_per_switch = {servers}\n{extra}\n[traffic]\nload = {load}\n[run]\nwarmup = 3000\ncycles = 15000\n"
    ))
}

#[test]
fn accepted_equals_offered_below_saturation() {
    for (dims, servers, load) in [("[8, 8]", 1, 0.1), ("[8, 8]", 1, 0.3), ("[8, 8]", 1, 0.45), ("[4, 4, 4]", 2, 0.2), ("[6, 6]", 1, 0.3)] {
        let m = uniform(dims, servers, load, "").metrics;
        // The network delivers what the servers generated (2%), and the Bernoulli process
        // generates the offered load (within its sampling noise over ~20,000 packets).
        assert!(((m.accepted_load - m.generated_load) / m.generated_load).abs() < 0.02, "{dims}: accepted {} for generated {}", m.accepted_load, m.generated_load);
        assert!(((m.generated_load - load) / load).abs() < 0.04, "{dims}: generated {} for offered {load}", m.generated_load);
        assert!(((m.accepted_load - load) / load).abs() < 0.05, "{dims}: accepted {} for offered {load}", m.accepted_load);
        assert!(!m.deadlock);
    }
    let mesh = common::run("[topology]\nkind = \"mesh\"\ndims = [6, 6]\n[traffic]\nload = 0.2\n[run]\nwarmup = 3000\ncycles = 15000\n");
    let mm = &mesh.metrics;
    assert!(((mm.accepted_load - mm.generated_load) / mm.generated_load).abs() < 0.02, "mesh accepted {}", mm.accepted_load);
}

#[test]
fn saturation_is_below_the_channel_load_bound() {
    // Uniform traffic on a k-ary torus loads each channel with k/8 phits per cycle per unit of
    // injection per server, so no server can get more than 8/k (divided by servers per switch).
    let m = uniform("[8, 8]", 2, 1.0, "").metrics;
    assert!(m.accepted_load < 8.0 / 8.0 / 2.0, "8x8x2: {}", m.accepted_load);
    assert!(m.accepted_load > 0.2, "8x8x2 collapsed: {}", m.accepted_load);
    assert!(!m.deadlock);
    let m = common::run("[topology]\nkind = \"torus\"\ndims = [10, 10, 10]\n[traffic]\nload = 1.0\n[run]\nwarmup = 1500\ncycles = 4000\n").metrics;
    assert!(m.accepted_load < 8.0 / 10.0, "10^3: {}", m.accepted_load);
    assert!(m.accepted_load > 0.3, "10^3 collapsed: {}", m.accepted_load);
}

#[test]
fn channel_loads_add_up_to_accepted_load_times_hops() {
    let r = uniform("[8, 8]", 1, 0.3, "");
    let m = &r.metrics;
    let channels = r.links.load.len() as f64;
    let expected = m.accepted_load * m.hops_mean * m.servers as f64 / channels;
    assert!(((m.link_load_mean - expected) / expected).abs() < 0.02, "mean link load {} vs {expected}", m.link_load_mean);
}

#[test]
fn more_vcs_and_buffers_never_hurt_saturation_much() {
    let two = uniform("[8, 8]", 1, 1.0, "").metrics.accepted_load;
    let eight = uniform("[8, 8]", 1, 1.0, "[router]\nvcs = 8\n").metrics.accepted_load;
    assert!(eight > two, "8 VCs {eight} vs 2 VCs {two}");
}
