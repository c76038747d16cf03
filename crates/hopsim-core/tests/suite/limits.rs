//! Issue 30's cases: numbers beyond the width they are stored in, NaN and infinity, runs
//! that cannot fit in memory and source queues above saturation each give one clear error
//! naming the key, or a right result; never a silent wrong one or an abort.
use crate::common;
use hopsim_core::engine::memory;
use hopsim_core::spec::{from_json_str, from_toml_str};

const TORUS: &str = "[topology]\nkind = \"torus\"\ndims = [4, 4]\n";

/// The one-line error of a spec (parsing, validation and building), which must name `key`.
fn error_of(spec: Result<hopsim_core::spec::Validated, hopsim_core::SpecError>) -> hopsim_core::SpecError {
    match spec.and_then(|s| hopsim_core::engine::Simulation::check(&s).map(|_| s)) {
        Ok(s) => panic!("accepted: {s:?}"),
        Err(e) => {
            assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
            e
        }
    }
}

fn toml_error(body: &str) -> hopsim_core::SpecError {
    error_of(from_toml_str(&format!("{TORUS}{body}")))
}

fn json_error(json: &str) -> hopsim_core::SpecError {
    error_of(from_json_str(json))
}

#[test]
fn buffers_beyond_their_16_bit_positions_are_refused_not_wrapped() {
    // 2^28 packets of 16 phits is 2^32 phits: it used to wrap to 0 and deliver nothing. A VC
    // counts its phits in 16 bits: 4096 packets of 16 phits are one phit too many.
    for (body, key) in [
        ("[router]\ninput_buffer = 268435456\n[traffic]\nload = 0.3", "router.input_buffer"),
        ("[router]\ninput_buffer = 268435457\n[traffic]\nload = 0.3", "router.input_buffer"),
        ("[router]\ninput_buffer = 4096\n[traffic]\nload = 0.3", "router.input_buffer"),
        ("[router]\noutput_buffer = 65536\n[traffic]\nload = 0.3", "router.output_buffer"),
        ("[router]\ninput_buffer_phits = 65536\n[traffic]\nload = 0.3", "router.input_buffer_phits"),
        ("[router]\ninput_buffer_phits = 1048576\n[traffic]\nload = 0.3", "router.input_buffer_phits"),
        ("[router]\nflow_control = \"wormhole\"\ninput_buffer = 4096\n[traffic]\nload = 0.3", "router.input_buffer"),
        ("[router]\nflow_control = \"wormhole\"\noutput_buffer_phits = 65536\n[traffic]\nload = 0.3", "router.output_buffer_phits"),
    ] {
        let e = toml_error(body);
        assert_eq!(e.key, key, "{body}: {e}");
        assert!(e.allowed.contains("65535") || e.allowed.contains("4095 packets"), "{e}");
    }
    // The largest allowed buffer, 65,520 phits a VC, is accepted and runs.
    let m = common::run(&format!("{TORUS}[router]\ninput_buffer = 4095\n[traffic]\nload = 0.3\n[run]\nwarmup = 0\ncycles = 2000\n")).metrics;
    assert!(m.accepted_load > 0.25, "{}", m.accepted_load);
}

#[test]
fn warmup_and_cycles_cannot_overflow() {
    // Through JSON (the Python API) u64::MAX + 10 used to wrap to 9 and give zero metrics.
    let spec = |warmup: &str, cycles: &str| format!(r#"{{"topology": {{"kind": "torus", "dims": [4, 4]}}, "traffic": {{"load": 0.3}}, "run": {{"warmup": {warmup}, "cycles": {cycles}}}}}"#);
    assert_eq!(json_error(&spec("18446744073709551615", "10")).key, "run.warmup");
    assert_eq!(json_error(&spec("10", "18446744073709551615")).key, "run.cycles");
    assert_eq!(json_error(&spec("2147483648", "1")).key, "run.warmup");
    assert_eq!(json_error(&spec("2147483647", "1")).key, "run.cycles");
    assert_eq!(json_error(&spec("1000000000", "1147483648")).key, "run.cycles");
    assert_eq!(json_error(&spec("-1", "10")).key, "run.warmup");
    assert_eq!(json_error(&spec("10", "18446744073709551616")).key, "run.cycles");
    let e = toml_error("[traffic]\nload = 0.3\n[run]\nwarmup = 9223372036854775808");
    assert_eq!(e.key, "run.warmup", "{e}");
    // A huge watchdog means "never": it must not wrap the cycle skipping.
    let m = common::run(&format!("{TORUS}[traffic]\nload = 0.05\n[run]\nwarmup = 0\ncycles = 5000\nwatchdog = 9223372036854775807\n")).metrics;
    assert!(m.accepted_load > 0.04 && m.cycles == 5000, "{m:?}");
}

#[test]
fn nan_and_infinity_name_their_key() {
    let floats = ["traffic.load", "traffic.active_fraction", "traffic.hotspot_fraction", "packet.bytes", "link.gbytes_per_s", "message.bytes"];
    for key in floats {
        let (table, field) = key.split_once('.').unwrap();
        for (toml_value, json_value) in [("nan", "NaN"), ("inf", "Infinity"), ("-inf", "-Infinity")] {
            let load = if key == "traffic.load" { "" } else { "load = 0.3\n" };
            let toml = if table == "traffic" { format!("[traffic]\n{load}{field} = {toml_value}") } else { format!("[traffic]\nload = 0.3\n[{table}]\n{field} = {toml_value}") };
            let e = toml_error(&toml);
            assert_eq!(e.key, key, "TOML {toml}: {e}");
            assert!(e.allowed.contains("finite"), "{e}");
            let json = format!(r#"{{"topology": {{"kind": "torus", "dims": [4, 4]}}, "traffic": {{"load": 0.3}}, "{table}": {{"{field}": {json_value}}}}}"#);
            let json = if table == "traffic" { format!(r#"{{"topology": {{"kind": "torus", "dims": [4, 4]}}, "traffic": {{"{field}": {json_value}, "pattern": "uniform"}}}}"#) } else { json };
            let e = json_error(&json);
            assert_eq!(e.key, key, "JSON {json}: {e}");
        }
    }
    // A string that merely says NaN is a wrong type, not a non-finite number.
    let e = json_error(r#"{"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"load": "NaN"}}"#);
    assert_eq!(e.key, "traffic.load");
    assert!(e.allowed.contains("wrong type"), "{e}");
}

#[test]
fn too_many_servers_per_switch_names_that_key() {
    for (dims, sps) in [("[4, 4]", "60001"), ("[16384, 16384]", "2"), ("[4, 4]", "18446744073709551615")] {
        let e = error_of(from_toml_str(&format!("[topology]\nkind = \"torus\"\ndims = {dims}\nservers_per_switch = {sps}\n[traffic]\nload = 0.1\n")));
        assert_eq!(e.key, "topology.servers_per_switch", "{e}");
    }
    // Round-robin pointers over a switch's input VCs and hop counts are 16-bit.
    let e = error_of(from_toml_str("[topology]\nkind = \"torus\"\ndims = [2, 2]\nservers_per_switch = 3000\n[router]\nvcs = 32\n[traffic]\nload = 0.1\n"));
    assert_eq!(e.key, "topology.servers_per_switch", "{e}");
    let e = error_of(from_toml_str("[topology]\nkind = \"torus\"\ndims = [65536]\n[traffic]\nload = 0.1\n"));
    assert_eq!(e.key, "topology.dims", "{e}");
    let e = error_of(from_toml_str("[topology]\nkind = \"hyperx\"\ndims = [65536, 65536, 65536, 65536, 65536, 65536, 65536, 65536, 65536]\n[traffic]\nload = 0.1\n"));
    assert_eq!(e.key, "topology.dims", "{e}");
}

#[test]
fn other_numbers_keep_their_meaning() {
    // Offsets and hot servers beyond 32 bits used to be truncated silently.
    let e = toml_error("[traffic]\nload = 0.1\npattern = \"hotspot\"\nhotspots = [4294967296]");
    assert_eq!(e.key, "traffic.hotspots", "{e}");
    let far = common::run(&format!("{TORUS}[traffic]\nload = 0.1\npattern = \"shift\"\nshift = [9223372036854775807, 1]\n[run]\nwarmup = 0\ncycles = 3000\n"));
    // i64::MAX = 3 (mod 4): the same as a shift of 3.
    let near = common::run(&format!("{TORUS}[traffic]\nload = 0.1\npattern = \"shift\"\nshift = [3, 1]\n[run]\nwarmup = 0\ncycles = 3000\n"));
    assert_eq!(far.metrics.hops_mean, near.metrics.hops_mean);
    assert_eq!(far.metrics.packets_delivered, near.metrics.packets_delivered);
    // A load so small that the gaps between messages cannot be drawn (it hung the run).
    let e = toml_error("[traffic]\nload = 1e-300");
    assert_eq!(e.key, "traffic.load", "{e}");
    let e = toml_error("[traffic]\nload = 0.1\n[message]\nbytes = 1e300\n[packet]\nbytes = 1e-300");
    assert_eq!(e.key, "message.bytes", "{e}");
}

#[test]
fn runs_that_cannot_fit_in_memory_are_refused_with_their_largest_part() {
    let refused = |toml: &str, limit: u64| {
        let spec = from_toml_str(toml).unwrap();
        let topo = hopsim_core::topology::build(&spec).unwrap();
        memory::check_fits(&spec, topo.as_ref(), Some(limit)).expect_err("should not fit")
    };
    let e = refused("[topology]\nkind = \"torus\"\ndims = [2048, 2048]\n[traffic]\nload = 1.0\n", 16 << 30);
    assert!(e.allowed.contains("4194304 switches") || e.allowed.contains("source queues"), "{e}");
    let e = refused("[topology]\nkind = \"torus\"\ndims = [8, 8]\nservers_per_switch = 50000\n[traffic]\nload = 0.1\n", 16 << 30);
    assert_eq!(e.key, "topology.servers_per_switch", "{e}");
    let e = refused("[topology]\nkind = \"torus\"\ndims = [8, 8]\n[traffic]\nload = 0.1\n[run]\ntemporal_bin = 1\ncycles = 2000000000\n", 16 << 30);
    assert_eq!(e.key, "run.temporal_bin", "{e}");
    assert!(e.allowed.contains("GiB") && e.allowed.contains("load-over-time bins"), "{e}");
    let e = refused("[topology]\nkind = \"torus\"\ndims = [32, 32]\n[router]\ninput_buffer = 4000\n[traffic]\nload = 0.1\n", 1 << 30);
    assert_eq!(e.key, "router.input_buffer", "{e}");
    // What a small run adds stays in the range the docs give (the total also holds what
    // this test process holds already, which depends on the other tests).
    let small = from_toml_str("[topology]\nkind = \"torus\"\ndims = [8, 8]\n[traffic]\nload = 0.5\n").unwrap();
    let topo = hopsim_core::topology::build(&small).unwrap();
    let est = memory::estimate(&small, topo.as_ref()).run();
    assert!(est > 1 << 20 && est < 64 << 20, "{est}");
    assert!(memory::check_fits(&small, topo.as_ref(), Some(1 << 30)).is_ok());
    assert_eq!(memory::parse_size("512MiB"), Some(512 << 20));
    assert_eq!(memory::parse_size("2g"), Some(2_000_000_000));
    assert_eq!(memory::parse_size("12345"), Some(12345));
    assert_eq!(memory::parse_size("lots"), None);
}

/// The port records are the array every arrival and step reads: allocated at their final
/// size, not grown by doubling, they take no more than they hold, and on a large network
/// the kernel can back all of them with huge pages (docs/benchmark-log.md). Both a network of
/// equal switches and one whose spines have no servers are counted up front.
#[test]
fn port_records_are_allocated_at_their_final_size() {
    for toml in [
        "[topology]\nkind = \"torus\"\ndims = [10, 10, 10]\n[traffic]\nload = 0.1\n",
        "[topology]\nkind = \"dragonfly_plus\"\nleaves_per_group = 2\nspines_per_group = 2\nservers_per_switch = 2\n[routing]\nalgorithm = \"minimal\"\n[traffic]\nload = 0.1\n",
    ] {
        let sim = hopsim_core::engine::Simulation::new(&from_toml_str(toml).unwrap()).unwrap();
        let ports = &sim.routers().ports;
        assert_eq!(ports.capacity(), ports.len(), "{toml}");
    }
}

#[test]
fn source_queues_are_capped_and_what_they_refuse_is_counted() {
    let run = |limit: &str| {
        common::run(&format!("[topology]\nkind = \"torus\"\ndims = [8, 8]\n[traffic]\nload = 1.0\n{limit}[run]\nwarmup = 1000\ncycles = 20000\n")).metrics
    };
    let capped = run("[nic]\nsource_queue_limit = 100\n");
    assert!(capped.packets_dropped_at_source > 10_000, "{}", capped.packets_dropped_at_source);
    // Every server's queue stays within the cap (the queued packets are counted per server).
    assert!(capped.packets_queued_end <= 64 * 100, "{}", capped.packets_queued_end);
    // Below the cap nothing changes: the default is far above what this run queues.
    let free = run("");
    assert_eq!(free.packets_dropped_at_source, 0);
    assert!(free.packets_queued_end > 64 * 100);
    // The network sees the same saturated injection either way.
    assert!((capped.accepted_load - free.accepted_load).abs() < 0.05, "{} vs {}", capped.accepted_load, free.accepted_load);
    let e = toml_error("[traffic]\nload = 0.3\n[nic]\nsource_queue_limit = 0");
    assert_eq!(e.key, "nic.source_queue_limit");
    let e = error_of(from_toml_str(&format!("{TORUS}[workload]\nkind = \"bandwidth\"\nwindow = 4000000000\n[traffic]\npattern = \"uniform\"\n")));
    assert_eq!(e.key, "workload.window", "{e}");
}
