//! The allocation-stage options (docs/model.md, "Allocation stages"): how many cycles a
//! packet holds its input VC, and what a switch adds at zero load.
use crate::common;

/// Two servers on a 4-switch mesh send 1-flit packets to each other as fast as they can,
/// through one VC: each flow's rate is one packet per the cycles a packet holds its input VC.
fn stream(vc_allocation: &str, next_head: &str, pipeline_delay: u32) -> f64 {
    common::run(&format!(
        r#"[topology]
kind = "mesh"
dims = [4]
[link]
latency = 2
[router]
vcs = 1
pipeline_delay = {pipeline_delay}
vc_allocation = "{vc_allocation}"
next_head_routing = "{next_head}"
output_buffer_phits = 2
input_buffer_phits = 16
flow_control = "wormhole"
[packet]
phits = 1
[routing]
vc_policy = "none"
[traffic]
pattern = "random_pairs"
active_servers = 2
load = 1.0
[run]
warmup = 2000
cycles = 12000
"#
    ))
    .metrics
    .accepted_load
}

#[test]
fn an_input_vc_moves_a_packet_every_cycle_without_stages() {
    let r = stream("with_switch", "on_arrival", 1);
    assert!(r > 0.99, "accepted {r}");
}

#[test]
fn a_separate_vc_allocation_stage_costs_the_next_packet_one_cycle() {
    // The next head reaches the front when the tail ahead has crossed, wins its VC in the
    // next cycle and the crossbar in the one after: a packet every two cycles.
    let r = stream("before_switch", "on_arrival", 1);
    assert!((r - 0.5).abs() < 0.01, "accepted {r}");
}

#[test]
fn routing_after_the_tail_costs_the_route_computation() {
    // Route computation (pipeline_delay) starts the cycle after the tail ahead crossed:
    // a packet every 1 + pipeline_delay cycles.
    for (d, want) in [(1, 0.5), (2, 1.0 / 3.0)] {
        let r = stream("with_switch", "after_tail", d);
        assert!((r - want).abs() < 0.01, "pipeline_delay {d}: accepted {r}, want {want}");
    }
}

#[test]
fn booksim2_staging_moves_a_packet_every_three_cycles() {
    // BookSim2's iq router: routing, VC allocation and switch allocation, one cycle each,
    // for every packet of an input VC.
    let r = stream("before_switch", "after_tail", 1);
    assert!((r - 1.0 / 3.0).abs() < 0.01, "accepted {r}");
}

#[test]
fn a_vc_allocation_stage_adds_a_cycle_per_switch_at_zero_load() {
    let run = |va: &str| {
        common::run(&format!(
            r#"[topology]
kind = "torus"
dims = [8, 8]
[link]
latency = 3
[router]
pipeline_delay = 1
vc_allocation = "{va}"
next_head_routing = "after_tail"
[traffic]
pattern = "shift"
shift = [3, 2]
load = 0.01
active_servers = 1
[run]
warmup = 1000
cycles = 20000
"#
        ))
        .metrics
    };
    let (a, b) = (run("with_switch"), run("before_switch"));
    // 5 hops, 6 switches: one cycle more in each.
    assert!((b.packet_latency_mean - a.packet_latency_mean - 6.0).abs() < 1e-9, "{} vs {}", b.packet_latency_mean, a.packet_latency_mean);
    assert!((b.zero_load_latency - b.packet_latency_mean).abs() < 1e-9, "formula {} vs measured {}", b.zero_load_latency, b.packet_latency_mean);
}

#[test]
fn defaults_are_the_single_stage_timing() {
    let s = hopsim_core::spec::from_toml_str("[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\nload = 0.1\n").unwrap();
    assert_eq!(s.router.vc_allocation, "with_switch");
    assert_eq!(s.router.next_head_routing, "on_arrival");
}

/// On each switch of a 2-switch mesh of 3 servers a switch, servers 0 and 1 send 1-flit
/// packets as fast as they can to server 2 through its one ejection VC, and server 2 to
/// server 0; VC allocation a stage of its own. Accepted load per server.
fn shared_ejection_vc(vc_allocator: &str) -> f64 {
    let dir = std::env::temp_dir().join(format!("hopsim-unowned-{}-{vc_allocator}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let matrix = dir.join("m.csv");
    let rows = ["0,0,1,0,0,0", "0,0,1,0,0,0", "1,0,0,0,0,0", "0,0,0,0,0,1", "0,0,0,0,0,1", "0,0,0,1,0,0"];
    std::fs::write(&matrix, rows.join("\n")).unwrap();
    let accepted = common::run(&format!(
        r#"[topology]
kind = "mesh"
dims = [2]
servers_per_switch = 3
[link]
latency = 2
[router]
vcs = 1
vc_allocator = "{vc_allocator}"
vc_allocation = "before_switch"
output_buffer_phits = 2
input_buffer_phits = 16
flow_control = "vct"
[packet]
phits = 1
[routing]
vc_policy = "none"
[traffic]
pattern = "matrix"
matrix = "{}"
load = 1.0
[run]
warmup = 2000
cycles = 12000
"#,
        matrix.display()
    ))
    .metrics
    .accepted_load;
    std::fs::remove_dir_all(&dir).ok();
    accepted
}

#[test]
fn without_vc_allocation_every_head_bound_for_an_output_vc_may_cross() {
    // Each input VC moves a packet every two cycles (its VC stage, then the crossbar), so
    // the two streams into server 2 could fill its link. Owned, the ejection VC goes to the
    // other input's head only once the last packet has crossed: that head wins it in the
    // next cycle and crosses in the one after, a packet every two cycles, and servers 0
    // and 2 receive half a phit a cycle each, server 1 none: 1/3 per server. Unowned (SST
    // Merlin's router), both heads hold the VC at once and the crossbar alone takes turns
    // between them: server 2 receives a phit every cycle, 1/2 per server.
    let owned = shared_ejection_vc("input_first");
    assert!((owned - 1.0 / 3.0).abs() < 0.01, "owned: accepted {owned}");
    let unowned = shared_ejection_vc("none");
    assert!((unowned - 0.5).abs() < 0.01, "unowned: accepted {unowned}");
}

/// Server 0 of a 3-switch HyperX sends two 1-flit messages back to back to its partner,
/// which answers with one acknowledgement, under UGAL-L reading its own output buffers with
/// no threshold (minimal while the direct queue is at most twice the Valiant one). The
/// fraction of the three packets routed around.
fn second_packet_routed(next_head: &str) -> f64 {
    common::run(&format!(
        r#"[topology]
kind = "hyperx"
dims = [3]
[link]
latency = 2
[router]
vcs = 2
output_buffer_phits = 4
input_buffer_phits = 16
next_head_routing = "{next_head}"
[packet]
phits = 1
[routing]
algorithm = "ugal_l"
vc_policy = "ladder"
ugal_weights = "one_to_two"
ugal_threshold = 0
queue_reach = "own_output"
[traffic]
pattern = "random_pairs"
active_servers = 2
[workload]
kind = "bandwidth"
window = 2
iterations = 1
[run]
warmup = 0
cycles = 1000
"#
    ))
    .metrics
    .nonminimal_fraction
}

#[test]
fn at_the_front_a_head_is_routed_by_the_queues_it_finds_there() {
    // The second message lands while the first still waits out its pipeline delay: routed
    // as it lands, it finds the direct queue empty and goes the minimal way. Routed at the
    // front, once the first has crossed, it finds that one in the direct output buffer (1
    // against twice 0) and goes around: one packet of the three.
    let on_arrival = second_packet_routed("on_arrival");
    assert_eq!(on_arrival, 0.0, "on arrival");
    let at_front = second_packet_routed("at_front");
    assert!((at_front - 1.0 / 3.0).abs() < 1e-9, "at the front: {at_front}");
}
