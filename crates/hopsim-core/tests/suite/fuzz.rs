//! Experiment specs drawn from the schema, with numbers at the edges of every integer width,
//! NaN and infinities: each ends in a result or a one-line error naming a key, never a
//! panic, in bounded time and memory. Runs that pass validation are shortened and capped in
//! memory through the engine's own estimate before they are simulated.
//!
//! `HOPSIM_FUZZ_CASES=5000 cargo test --release -p hopsim-core --test suite fuzz` fuzzes longer.
use hopsim_core::engine::memory;
use hopsim_core::spec::from_json_str;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Numbers as JSON tokens (bare NaN and Infinity, as Python writes them): the edges of 8,
/// 16, 32 and 64 bits, negatives, non-finite and ordinary values.
const EDGES: &[&str] = &[
    "0", "1", "2", "3", "4", "7", "8", "16", "255", "256", "65535", "65536", "65537", "2147483647", "2147483648", "4294967295",
    "4294967296", "4294967297", "9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
    "1e300", "-1", "-2147483649", "-9223372036854775808", "NaN", "Infinity", "-Infinity", "0.5", "0.25", "1.0", "1e-300", "-0.5",
    "\"4\"", "true", "[]", "null",
];

/// An ordinary value for a key, so that most drawn specs get past validation and run.
fn small() -> impl Strategy<Value = String> {
    prop_oneof![(1u32..6).prop_map(|v| v.to_string()), Just("2".to_string())]
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![4 => small(), 1 => prop::sample::select(EDGES).prop_map(str::to_string)]
}

fn load() -> impl Strategy<Value = String> {
    prop_oneof![8 => (1u32..=10).prop_map(|v| format!("{}", v as f64 / 10.0)), 1 => number()]
}

/// A buffer in phits: room for a packet or two of the default 16 phits, or an edge.
fn phits() -> impl Strategy<Value = String> {
    prop_oneof![4 => (16u32..80).prop_map(|v| v.to_string()), 1 => number()]
}

fn word(choices: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::sample::select(choices).prop_map(|w| format!("{w:?}"))
}

/// A key and its value, or nothing (the default).
fn maybe(key: &'static str, value: impl Strategy<Value = String>) -> impl Strategy<Value = Option<(&'static str, String)>> {
    prop::option::weighted(0.15, value.prop_map(move |v| (key, v)))
}

fn table(name: &'static str, fields: Vec<Option<(&'static str, String)>>) -> String {
    let body: Vec<String> = fields.into_iter().flatten().map(|(k, v)| format!("\"{k}\": {v}")).collect();
    format!("\"{name}\": {{{}}}", body.join(", "))
}

fn dims() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(2u32..6, 1..=3).prop_map(|d| format!("{d:?}")),
        1 => prop::collection::vec(number(), 0..=3).prop_map(|d| format!("[{}]", d.join(", "))),
    ]
}

fn topology() -> impl Strategy<Value = String> {
    let kind = word(&["torus", "torus", "mesh", "hyperx", "dragonfly", "dragonfly_plus", "fat_tree"]);
    (
        kind,
        dims(),
        maybe("servers_per_switch", number()),
        maybe("groups", number()),
        maybe("switches_per_group", number()),
        maybe("global_links_per_switch", number()),
        (maybe("leaves_per_group", number()), maybe("spines_per_group", number()), maybe("k", number()), maybe("levels", number())),
    )
        .prop_map(|(kind, dims, sps, g, a, h, (l, s, k, n))| {
            let or = |v: Option<(&'static str, String)>, key: &'static str, d: &str| Some(v.unwrap_or((key, d.to_string())));
            let mut fields = vec![Some(("kind", kind.clone())), sps];
            match kind.as_str() {
                "\"torus\"" | "\"mesh\"" | "\"hyperx\"" | "\"ring\"" => fields.push(Some(("dims", dims))),
                "\"dragonfly\"" => fields.extend([g, or(a, "switches_per_group", "4"), or(h, "global_links_per_switch", "2")]),
                "\"dragonfly_plus\"" => fields.extend([g, or(l, "leaves_per_group", "2"), or(s, "spines_per_group", "2"), h]),
                _ => fields.extend([or(k, "k", "2"), or(n, "levels", "2")]),
            }
            table("topology", fields)
        })
}

fn spec() -> impl Strategy<Value = String> {
    let router = (
        maybe("vcs", number()),
        maybe("input_buffer", number()),
        maybe("output_buffer", number()),
        maybe("input_buffer_phits", phits()),
        maybe("output_buffer_phits", phits()),
        maybe("speedup", number()),
        maybe("pipeline_delay", number()),
        maybe("flow_control", word(&["vct", "wormhole"])),
    )
        .prop_map(|(a, b, c, d, e, f, g, h)| table("router", vec![a, b, c, d, e, f, g, h]));
    let link = (maybe("latency", number()), maybe("gbytes_per_s", number())).prop_map(|(a, b)| table("link", vec![a, b]));
    let packet = (maybe("phits", number()), maybe("bytes", number())).prop_map(|(a, b)| table("packet", vec![a, b]));
    let routing = (
        maybe("algorithm", word(&["dor", "rdr", "valiant", "romm", "min_adaptive", "minimal"])),
        maybe("vc_policy", word(&["auto", "dateline", "escape", "phase_dateline", "none", "ladder", "ladder_reuse", "min_first"])),
        maybe("ladder_vcs_per_step", number()),
        maybe("injection_vcs", word(&["policy", "any", "any_first", "any_round_robin", "any_random"])),
        maybe("ejection_vcs", word(&["any", "policy"])),
    )
        .prop_map(|(a, b, c, d, e)| table("routing", vec![a, b, c, d, e]));
    let traffic = (
        maybe("pattern", word(&["uniform", "random_pairs", "random_permutation", "shift", "transpose", "bit_complement", "tornado", "hotspot", "adv", "adv_random"])),
        prop::option::weighted(0.9, load().prop_map(|v| ("load", v))),
        maybe("shift", prop::collection::vec(number(), 0..3).prop_map(|v| format!("[{}]", v.join(", ")))),
        maybe("adv_offset", number()),
        maybe("active_servers", number()),
        maybe("active_fraction", load()),
        maybe("hotspots", prop::collection::vec(number(), 0..3).prop_map(|v| format!("[{}]", v.join(", ")))),
        maybe("hotspot_fraction", load()),
    )
        .prop_map(|(a, b, c, d, e, f, g, h)| table("traffic", vec![a, b, c, d, e, f, g, h]));
    let message = (maybe("packets", number()), maybe("bytes", number()), maybe("in_order", word(&["x"]).prop_map(|_| "true".to_string())))
        .prop_map(|(a, b, c)| table("message", vec![a, b, c]));
    let workload = (maybe("kind", word(&["bernoulli", "ping_pong", "bandwidth"])), maybe("iterations", number()), maybe("window", number()), maybe("ack_bytes", number()))
        .prop_map(|(a, b, c, d)| table("workload", vec![a, b, c, d]));
    let run = (maybe("warmup", number()), maybe("cycles", number()), maybe("seed", number()), maybe("watchdog", number()), maybe("temporal_bin", number()))
        .prop_map(|(a, b, c, d, e)| table("run", vec![a, b, c, d, e]));
    let nic = maybe("source_queue_limit", number()).prop_map(|a| table("nic", vec![a]));
    // Half the draws are one run of a sweep over the choices, whose tables may hold the keys
    // of the other components (left to them); in the others such a key is refused.
    let choices = ["routing.vc_policy", "traffic.pattern", "workload.kind"].map(|k| format!("\"{k}\": []")).join(", ");
    let sweep = prop::bool::ANY.prop_map(move |swept| if swept { format!("\"sweep\": {{{choices}}}") } else { "\"sweep\": {}".to_string() });
    (topology(), router, link, packet, routing, traffic, (message, workload, run, nic, sweep))
        .prop_map(|(t, r, l, p, ro, tr, (m, w, ru, n, s))| format!("{{{}}}", [t, r, l, p, ro, tr, m, w, ru, n, s].join(", ")))
}

/// What a drawn spec must come to: a one-line error naming a key, or (shortened and within
/// the memory cap) a run whose invariants hold.
fn outcome(json: &str) -> Result<bool, TestCaseError> {
    let spec = match from_json_str(json).and_then(|s| hopsim_core::engine::Simulation::check(&s).map(|_| s)) {
        Ok(s) => s,
        Err(e) => {
            if std::env::var("HOPSIM_FUZZ_SHOW").is_ok() {
                eprintln!("{e}");
            }
            prop_assert!(!e.key.is_empty(), "error without a key: {e}");
            prop_assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
            return Ok(false);
        }
    };
    let mut short = spec.clone().into_spec();
    short.run.warmup = spec.run.warmup.min(200);
    short.run.cycles = spec.run.cycles.min(400);
    short.run.temporal_bin = spec.run.temporal_bin.max(10);
    let topo = hopsim_core::topology::build(&short).expect("checked");
    if let Err(e) = memory::check_fits(&short, topo.as_ref(), Some(64 << 20)) {
        prop_assert!(!e.key.is_empty());
        return Ok(false);
    }
    match hopsim_core::spec::Validated::new(short).and_then(|s| hopsim_core::simulate(&s)) {
        Ok(r) => {
            prop_assert!(r.metrics.phits_conserved, "phits not conserved: {json}");
            prop_assert!(r.metrics.credits_conserved, "credits not conserved: {json}");
        }
        Err(e) => prop_assert!(!e.key.is_empty(), "error without a key: {e}"),
    }
    Ok(true)
}

#[test]
fn drawn_specs_end_in_a_result_or_a_clear_error() {
    let cases = std::env::var("HOPSIM_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let started = std::time::Instant::now();
    let ran = std::cell::Cell::new(0u32);
    runner
        .run(&spec(), |json| {
            ran.set(ran.get() + outcome(&json)? as u32);
            Ok(())
        })
        .unwrap();
    eprintln!("{cases} drawn specs, {} ran, in {:.1} s", ran.get(), started.elapsed().as_secs_f64());
    // Most draws hit an edge somewhere, but enough must get through to exercise the runs.
    assert!(ran.get() * 20 >= cases, "only {} of {cases} drawn specs ran", ran.get());
}

#[test]
fn every_edge_value_in_every_numeric_key_is_a_result_or_a_clear_error() {
    // Each numeric key alone, at every edge, in an otherwise ordinary spec.
    let keys = [
        ("topology", "servers_per_switch"),
        ("router", "vcs"),
        ("router", "input_buffer"),
        ("router", "output_buffer"),
        ("router", "input_buffer_phits"),
        ("router", "output_buffer_phits"),
        ("router", "speedup"),
        ("router", "pipeline_delay"),
        ("link", "latency"),
        ("link", "gbytes_per_s"),
        ("packet", "phits"),
        ("packet", "bytes"),
        ("routing", "ladder_vcs_per_step"),
        ("traffic", "load"),
        ("traffic", "active_servers"),
        ("traffic", "active_fraction"),
        ("traffic", "hotspot_fraction"),
        ("message", "packets"),
        ("message", "bytes"),
        ("workload", "iterations"),
        ("workload", "window"),
        ("run", "warmup"),
        ("run", "cycles"),
        ("run", "seed"),
        ("run", "watchdog"),
        ("run", "temporal_bin"),
        ("nic", "source_queue_limit"),
    ];
    for (table, key) in keys {
        for value in EDGES {
            let json = if table == "topology" {
                format!(r#"{{"topology": {{"kind": "torus", "dims": [4, 4], "{key}": {value}}}, "traffic": {{"load": 0.2}}}}"#)
            } else if table == "traffic" {
                format!(r#"{{"topology": {{"kind": "torus", "dims": [4, 4]}}, "traffic": {{"pattern": "uniform", "load": 0.2, "{key}": {value}}}}}"#)
            } else {
                format!(r#"{{"topology": {{"kind": "torus", "dims": [4, 4]}}, "traffic": {{"load": 0.2}}, "{table}": {{"{key}": {value}}}}}"#)
            };
            let json = json.replace(r#""load": 0.2, "load""#, r#""load""#);
            if let Err(e) = outcome(&json).map(|_| ()) {
                panic!("{table}.{key} = {value}: {e}");
            }
            // An error must name this key (or the one it conflicts with).
            if let Err(e) = from_json_str(&json).and_then(|s| hopsim_core::engine::Simulation::check(&s)) {
                assert!(e.key.starts_with(table) || e.key.starts_with("router") || e.key.starts_with("run") || e.key.starts_with("topology"), "{table}.{key} = {value}: {e}");
            }
        }
    }
}

/// Each motif with the keys it reads, for the drawn jobs: the products of these keys are
/// message sizes (a face of `domain` x `element_bytes`, a vector of `elements` x
/// `element_bytes`), which must be refused where they overflow, never wrap.
const MOTIF_KEYS: &[(&str, &[&str])] = &[
    ("ping_pong", &["bytes"]),
    ("allreduce", &["bytes", "elements", "element_bytes"]),
    ("alltoall", &["bytes"]),
    ("barrier", &["bytes"]),
    ("bcast", &["bytes", "root"]),
    ("halo3d", &["domain", "element_bytes"]),
    ("sweep3d", &["domain", "element_bytes", "block"]),
    ("halo", &["dims", "domain", "element_bytes", "ghost"]),
    ("cg", &["domain", "element_bytes", "dot_products"]),
    ("fft3d", &["points", "element_bytes"]),
    ("graph500", &["scale", "edge_factor", "levels"]),
    ("md", &["domain", "ghost", "atom_bytes", "border_bytes", "thermo_values", "rebuild_every", "thermo_every"]),
    ("bernoulli", &["load", "bytes"]),
];

/// A value for a motif key: a list of 2 or 3 numbers for `domain`, else a number.
fn motif_value(key: &'static str) -> BoxedStrategy<String> {
    if key == "domain" {
        prop::collection::vec(number(), 2..=3).prop_map(|d| format!("[{}]", d.join(", "))).boxed()
    } else if key == "load" {
        load().boxed()
    } else {
        number().boxed()
    }
}

/// One job on a small torus with 64-byte packets (or a NIC protocol), its motif's keys
/// drawn at the edges, with the keys every motif reads and the source queue's limit.
fn jobs_spec() -> impl Strategy<Value = String> {
    let motif = prop::sample::select(MOTIF_KEYS);
    motif
        .prop_flat_map(|(name, keys)| {
            let own: Vec<_> = keys.iter().map(|&k| prop::option::weighted(0.6, motif_value(k).prop_map(move |v| (k, v)))).collect();
            (
                Just(name),
                own,
                (maybe("iterations", number()), maybe("compute", number()), maybe("start", number()), prop::sample::select(&[2u32, 4, 8, 16][..])),
                (maybe("source_queue_limit", number()), maybe("bytes", number()), prop::bool::weighted(0.2)),
            )
        })
        .prop_map(|(name, own, (iterations, compute, start, ranks), (limit, packet_bytes, put))| {
            let mut workload = vec![format!("\"motif\": \"{name}\"")];
            workload.extend(own.into_iter().flatten().chain(iterations).chain(compute).map(|(k, v)| format!("\"{k}\": {v}")));
            let start = start.map(|(k, v)| format!(", \"{k}\": {v}")).unwrap_or_default();
            let nic = [limit.map(|(k, v)| format!("\"{k}\": {v}")), put.then(|| "\"protocol\": \"put\"".to_string())];
            let nic: Vec<String> = nic.into_iter().flatten().collect();
            let packet = if put { "\"phits\": 8".to_string() } else { format!("\"phits\": 8, \"bytes\": {}", packet_bytes.map_or("64".to_string(), |(_, v)| v)) };
            format!(
                r#"{{"topology": {{"kind": "torus", "dims": [4, 4]}}, "packet": {{{packet}}}, "nic": {{{}}}, "run": {{"warmup": 0, "cycles": 400}}, "jobs": [{{"name": "a", "ranks": {ranks}{start}, "workload": {{{}}}}}]}}"#,
                nic.join(", "),
                workload.join(", ")
            )
        })
}

/// An error's value as a user would write it: no Rust `Some(..)`, no number in hundreds of
/// digits.
fn shown_plainly(e: &hopsim_core::SpecError) -> bool {
    let digits = e.value.chars().fold((0, 0), |(run, most), c| if c.is_ascii_digit() { (run + 1, most.max(run + 1)) } else { (0, most) }).1;
    !e.to_string().contains("Some(") && digits <= 40
}

#[test]
fn drawn_jobs_and_products_of_motif_keys_end_in_a_result_or_a_clear_error() {
    let cases = std::env::var("HOPSIM_FUZZ_CASES").ok().and_then(|v| v.parse::<u32>().ok()).map_or(300, |c| c / 4);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&jobs_spec(), |json| {
            if let Err(e) = from_json_str(&json).and_then(|s| hopsim_core::engine::Simulation::check(&s)) {
                prop_assert!(shown_plainly(&e), "{e}");
                prop_assert!(e.key.starts_with("jobs[0]") || e.key.starts_with("nic.") || e.key.starts_with("packet.") || e.key == "message.bytes", "{e}\n{json}");
            }
            outcome(&json)?;
            Ok(())
        })
        .unwrap();
}

#[test]
fn every_edge_value_in_every_motif_key_is_a_result_or_a_clear_error() {
    for &(motif, keys) in MOTIF_KEYS {
        for &key in keys.iter().chain(&["iterations", "compute"]) {
            for value in EDGES {
                let value = if key == "domain" { format!("[{value}, {value}, 2]") } else { value.to_string() };
                let json = format!(
                    r#"{{"topology": {{"kind": "torus", "dims": [4, 4]}}, "packet": {{"phits": 8, "bytes": 64}}, "run": {{"warmup": 0, "cycles": 300}}, "jobs": [{{"name": "a", "ranks": 8, "workload": {{"motif": "{motif}", "{key}": {value}{}}}}}]}}"#,
                    if motif == "bernoulli" && key != "load" { ", \"load\": 0.1" } else { "" }
                );
                if std::env::var("HOPSIM_FUZZ_SHOW").is_ok() {
                    eprintln!("{motif}.{key} = {value}");
                }
                if let Err(e) = outcome(&json).map(|_| ()) {
                    panic!("{motif}.{key} = {value}: {e}");
                }
                if let Err(e) = from_json_str(&json).and_then(|s| hopsim_core::engine::Simulation::check(&s)) {
                    assert!(e.key.starts_with("jobs[0]"), "{motif}.{key} = {value}: {e}");
                    assert!(shown_plainly(&e), "{motif}.{key} = {value}: {e}");
                }
            }
        }
    }
}

#[test]
fn physical_unit_keys_at_every_edge_are_a_result_or_a_clear_error() {
    let cases: &[(&str, &str)] = &[
        ("link", "gbytes_per_s"),
        ("packet", "bytes"),
        ("message", "bytes"),
        ("nic", "flit_bytes"),
        ("nic", "payload_bytes"),
        ("nic", "header_flits"),
        ("nic", "max_outstanding"),
    ];
    for &(table, key) in cases {
        for value in EDGES {
            for protocol in ["none", "put"] {
                let mut nic = format!("\"protocol\": \"{protocol}\"");
                let mut packet = "\"phits\": 8, \"bytes\": 64".to_string();
                let mut message = String::new();
                let mut link = "\"gbytes_per_s\": 10".to_string();
                match table {
                    "link" => link = format!("\"{key}\": {value}"),
                    "packet" => packet = format!("\"phits\": 8, \"{key}\": {value}"),
                    "message" => message = format!("\"{key}\": {value}"),
                    _ => nic += &format!(", \"{key}\": {value}"),
                }
                let json = format!(
                    r#"{{"topology": {{"kind": "torus", "dims": [4, 4]}}, "link": {{{link}}}, "packet": {{{packet}}}, "message": {{{message}}}, "nic": {{{nic}}}, "traffic": {{"load": 0.1}}, "run": {{"warmup": 0, "cycles": 300}}}}"#
                );
                if let Err(e) = outcome(&json).map(|_| ()) {
                    panic!("{table}.{key} = {value} ({protocol}): {e}");
                }
                if let Err(e) = from_json_str(&json).and_then(|s| hopsim_core::engine::Simulation::check(&s)) {
                    assert!(shown_plainly(&e), "{table}.{key} = {value}: {e}");
                }
            }
        }
    }
}

#[test]
fn deep_nesting_is_a_clear_error_naming_a_key() {
    for depth in [10usize, 127, 128, 129, 600, 5000] {
        for (open, close) in [("[", "]"), ("{\"a\": ", "}")] {
            let value = format!("{}1{}", open.repeat(depth), close.repeat(depth));
            let json = format!(r#"{{"topology": {{"kind": "torus", "dims": [4, 4]}}, "traffic": {{"load": 0.1, "deep": {value}}}}}"#);
            match from_json_str(&json).and_then(|s| hopsim_core::engine::Simulation::check(&s)) {
                Ok(_) => panic!("nested {depth} deep was accepted"),
                Err(e) => {
                    assert!(!e.key.is_empty() && !e.to_string().contains('\n'), "{e}");
                    assert!(e.to_string().len() < 1000, "{e}");
                }
            }
        }
    }
}
