//! Every wrong input gives one line naming the key, the value and what is allowed.
use hopsim_core::spec::from_toml_str;

fn err(toml: &str) -> String {
    let full = if toml.contains("[traffic]") { toml.to_string() } else { format!("{toml}\n[traffic]\nload = 0.3\n") };
    match from_toml_str(&full).and_then(|s| hopsim_core::engine::Simulation::check(&s).map(|_| s)) {
        Ok(_) => panic!("accepted: {full}"),
        Err(e) => {
            let line = e.to_string();
            assert!(!line.contains('\n'), "multi-line error: {line}");
            line
        }
    }
}

const TORUS: &str = "[topology]\nkind = \"torus\"\ndims = [4, 4]\n";

#[test]
fn each_mistake_names_its_key() {
    let cases = [
        (format!("{TORUS}[router]\nvcz = 2"), "router.vcz"),
        (format!("{TORUS}[traffic]\nload = \"high\""), "traffic.load"),
        (format!("{TORUS}[traffic]\nload = 0"), "traffic.load = 0"),
        (format!("{TORUS}[traffic]\nload = 1.5"), "traffic.load = 1.5"),
        ("[topology]\nkind = \"torus\"\ndims = [4, 0]".to_string(), "topology.dims"),
        ("[topology]\nkind = \"torus\"\ndims = []".to_string(), "topology.dims"),
        (format!("{TORUS}[router]\ninput_buffer = 0"), "router.input_buffer = 0"),
        (format!("{TORUS}[router]\ninput_buffer_phits = 8\n[packet]\nphits = 16"), "router.input_buffer_phits = 8"),
        ("[topology]\nkind = \"tours\"\ndims = [4]".to_string(), "topology.kind = \"tours\""),
        (format!("{TORUS}[routing]\nalgorithm = \"magic\""), "routing.algorithm = \"magic\""),
        (format!("{TORUS}[routing]\nvc_policy = \"ladder9\""), "routing.vc_policy"),
        (format!("{TORUS}[traffic]\npattern = \"everyone\"\nload = 0.1"), "traffic.pattern = \"everyone\""),
        (format!("{TORUS}[router]\nvcs = 1"), "router.vcs = 1"),
        (format!("{TORUS}[traffic]\npattern = \"shift\"\nload = 0.1"), "traffic.shift"),
        (format!("{TORUS}[traffic]\npattern = \"shift\"\nshift = [1]\nload = 0.1"), "traffic.shift"),
        (format!("{TORUS}[traffic]\npattern = \"random_pairs\"\nactive_servers = 3\nload = 0.1"), "traffic.active_servers = 3"),
        (format!("{TORUS}[router]\nflow_control = \"store\""), "router.flow_control"),
        (format!("{TORUS}[router]\njsq_tie_break = \"last\""), "router.jsq_tie_break = \"last\""),
        (format!("{TORUS}[router]\nvc_allocation = \"speculative\""), "router.vc_allocation = \"speculative\""),
        (format!("{TORUS}[router]\nnext_head_routing = \"early\""), "router.next_head_routing = \"early\""),
        (format!("{TORUS}[router]\nswitch_allocator = \"islip2\""), "router.switch_allocator = \"islip2\""),
        (format!("{TORUS}[router]\nvc_allocator = \"wavefront\""), "router.vc_allocator = \"wavefront\""),
        (format!("{TORUS}[router]\nvc_allocator = \"none\"\nflow_control = \"wormhole\""), "router.vc_allocator = \"none\": \"none\" needs router.flow_control = \"vct\""),
        (format!("{TORUS}[router]\nswitch_allocator = \"islip\"\nislip_iterations = 0"), "router.islip_iterations = 0"),
        (format!("{TORUS}[router]\nislip_iterations = 2"), "router.islip_iterations = 2: only iSLIP iterates"),
        (
            "[topology]\nkind = \"dragonfly\"\nswitches_per_group = 4\nglobal_links_per_switch = 2\nservers_per_switch = 2\n[router]\nvcs = 4\n\
             [routing]\nalgorithm = \"ugal_l\"\nugal_intermediate = \"differing_dims\"".to_string(),
            "routing.ugal_intermediate = \"differing_dims\": needs a HyperX",
        ),
        (format!("{TORUS}[routing]\ninjection_vcs = \"all\""), "routing.injection_vcs = \"all\""),
        (format!("{TORUS}[link]\nlatency = 0"), "link.latency = 0"),
        ("[topology]\ndims = [4]".to_string(), "topology.kind"),
        (TORUS.to_string() + "[traffic]\npattern = \"uniform\"", "traffic.load"),
        ("[topology\nkind = 1".to_string(), "malformed TOML"),
        (format!("{TORUS}[routing]\nugal_thresold = 3"), "routing.ugal_thresold = 3: unknown key for routing.algorithm = \"dor\"; allowed keys: algorithm"),
        (format!("{TORUS}[routing]\nalgorithm = \"valiant\"\nvaliant_redraw = 1"), "routing.valiant_redraw = 1"),
        (format!("{TORUS}[workload]\nkind = \"bandwidth\"\nwndow = 3"), "workload.wndow = 3: unknown key for workload.kind = \"bandwidth\"; allowed keys: kind, iterations, window, ack_bytes"),
        (format!("{TORUS}[workload]\nkind = \"bandwidth\"\nwindow = -1"), "workload.window = -1"),
        (format!("{TORUS}[traffic]\nload = 0.1\npattern = \"hotspot\"\nhotspot_fraction = 2.0"), "traffic.hotspot_fraction = 2"),
        (format!("{TORUS}[traffic]\nload = 0.1\nshfit = [1, 0]"), "traffic.shfit = [1, 0]: unknown key for traffic.pattern = \"uniform\""),
    ];
    for (toml, key) in cases {
        let line = err(&toml);
        assert!(line.contains(key), "expected {key:?} in {line:?}");
    }
}

#[test]
fn good_specs_pass_and_fill_defaults() {
    let s = from_toml_str(&format!("{TORUS}[traffic]\nload = 0.3\n")).unwrap();
    assert_eq!(s.router.vcs, 2);
    assert_eq!(s.router.input_buffer, 4);
    assert_eq!(s.router.output_buffer, 2);
    assert_eq!(s.packet.phits, 16);
    assert_eq!(s.run.temporal_bin, 1000);
}

#[test]
fn link_class_tables_are_checked() {
    let err = |links: &str, topo: &str| {
        let text = format!("[topology]\n{topo}\n[link]\n{links}\n[traffic]\nload = 0.1\n");
        hopsim_core::spec::from_toml_str(&text).and_then(|s| hopsim_core::simulate(&s).map(|_| ())).err().map(|e| e.to_string()).unwrap_or_default()
    };
    let torus = "kind = \"torus\"\ndims = [4, 4]";
    let e = err("[link.rows]\nlatency = 3", torus);
    assert!(e.contains("link.rows") && e.contains("row, column") && e.contains("dim0"), "{e}");
    let e = err("latncy = 3", torus);
    assert!(e.contains("link.latncy") && e.contains("latency"), "{e}");
    let e = err("[link.global]\nlatency = 3", torus);
    assert!(e.contains("link.global") && e.contains("dim0, dim1, injection"), "{e}");
    let e = err("[link.dim0]\nlatency = 0", torus);
    assert!(e.contains("link.dim0.latency") && e.contains("10000"), "{e}");
    let e = err("[link.dim0]\nlatncy = 2", torus);
    assert!(e.contains("link.dim0") && e.contains("latncy"), "{e}");
    let e = err("[link.dim1]\ngbytes_per_s = 4.7", torus);
    assert!(e.contains("link.dim1.gbytes_per_s") && e.contains("link.gbytes_per_s"), "{e}");
    let e = err("gbytes_per_s = 5.25\n[link.dim1]\ngbytes_per_s = -1", torus);
    assert!(e.contains("link.dim1.gbytes_per_s"), "{e}");
    assert_eq!(err("gbytes_per_s = 5.25\n[link.dim1]\ngbytes_per_s = 4.7\nlatency = 20", torus), "");
    let e = err("gbytes_per_s = 100\n[link.dim1]\ngbytes_per_s = 1", torus);
    assert!(e.contains("link.dim1.gbytes_per_s") && e.contains("15 times slower"), "{e}");
}

#[test]
fn a_spec_changed_after_it_was_validated_is_validated_again() {
    // A run is built only from a `Validated`, which cannot change; a spec taken out of one
    // and changed into an invalid one must be refused when checked again.
    let mut spec = hopsim_core::spec::from_toml_str("[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\nload = 0.25\n").unwrap().into_spec();
    spec.validate().unwrap();
    spec.traffic.load = Some(1.5);
    let e = spec.validate().unwrap_err();
    assert_eq!(e.key, "traffic.load");
    spec.traffic.load = Some(f64::NAN);
    assert_eq!(spec.validate().unwrap_err().key, "traffic.load");
    spec.traffic.load = Some(0.25);
    spec.validate().unwrap();
}

#[test]
fn a_patterns_own_key_is_refused_for_other_patterns_naming_the_patterns_keys() {
    let run = |traffic: &str| {
        let toml = format!("[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\nload = 0.25\n{traffic}");
        hopsim_core::engine::Simulation::check(&from_toml_str(&toml).unwrap())
    };
    const FAMILY: &str = "allowed keys: pattern, load, active_servers, active_fraction, burst";
    let e = run("pattern = \"uniform\"\nhotspot_fraction = 0.2\n").unwrap_err();
    assert_eq!((e.key.as_str(), e.allowed), ("traffic.hotspot_fraction", format!("unknown key for traffic.pattern = \"uniform\"; {FAMILY}")));
    let e = run("pattern = \"shift\"\nshift = [1, 0]\nadv_offset = 1\n").unwrap_err();
    assert_eq!((e.key.as_str(), e.allowed), ("traffic.adv_offset", format!("unknown key for traffic.pattern = \"shift\"; {FAMILY}, shift")));
    let e = run("pattern = \"uniform\"\nshift = [1, 0]\n").unwrap_err();
    assert_eq!(e.to_string(), format!("traffic.shift = [1, 0]: unknown key for traffic.pattern = \"uniform\"; {FAMILY}"));
    // A key the burst's pattern reads is the burst's.
    run("pattern = \"uniform\"\nshift = [1, 0]\nburst = { pattern = \"shift\", load = 0.5, start = 10, cycles = 10 }\n").unwrap();
    // A sweep over patterns shares one table: each run leaves the others' keys to them.
    run("pattern = \"uniform\"\nshift = [1, 0]\n[sweep]\n\"traffic.pattern\" = [\"uniform\", \"shift\"]\n").unwrap();
}

#[test]
fn the_normalised_spec_lists_the_workload_and_pattern_keys_as_one_table_did() {
    // Run folders keep it (spec.json) and `--resume` compares it, so its shape stays.
    let v: serde_json::Value = serde_json::from_str(&hopsim_core::validate_json(r#"{"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"load": 0.3}}"#).unwrap()).unwrap();
    // The chosen kind's keys with their defaults (bernoulli has none), the others' null.
    assert_eq!(v["workload"], serde_json::json!({"kind": "bernoulli", "iterations": null, "window": null, "ack_bytes": null}));
    for key in ["shift", "adv_offset", "hotspots", "hotspot_fraction", "active_servers", "active_fraction"] {
        assert!(v["traffic"][key].is_null() && v["traffic"].as_object().unwrap().contains_key(key), "{key}: {}", v["traffic"]);
    }
    // A kind refuses the keys of the others, unless the experiment sweeps the kind: one
    // table then serves every run of the sweep.
    let ping_pong = format!("{TORUS}[workload]\nkind = \"ping_pong\"\nwindow = 4\n[traffic]\nactive_servers = 4\n");
    let e = hopsim_core::engine::Simulation::check(&from_toml_str(&ping_pong).unwrap()).unwrap_err();
    assert_eq!(e.to_string(), "workload.window = 4: unknown key for workload.kind = \"ping_pong\"; allowed keys: kind, iterations, ack_bytes");
    let swept = from_toml_str(&format!("{ping_pong}[sweep]\n\"workload.kind\" = [\"ping_pong\", \"bandwidth\"]\n")).unwrap();
    hopsim_core::engine::Simulation::check(&swept).unwrap();
}

#[test]
fn a_spec_json_of_an_older_build_reads_and_normalises_as_today() {
    // Older builds kept the topology kinds' keys, `routing.ladder_vcs_per_step` and the
    // allocation keys in fields of the spec, and wrote them into every run folder's
    // spec.json at their unset values, whichever kind ran: `dims = []`, nulls, 0.
    let old = serde_json::json!({
        "topology": {"kind": "dragonfly", "switches_per_group": 4, "global_links_per_switch": 2, "dims": [], "groups": null, "k": null,
                     "levels": null, "global_arrangement": null, "leaves_per_group": null, "spines_per_group": null, "chassis": null,
                     "blades": null, "column_links": null},
        "router": {"vcs": 4},
        "routing": {"algorithm": "minimal", "vc_policy": "min_first", "ladder_vcs_per_step": 0},
        "traffic": {},
        "jobs": [{"name": "a", "ranks": 2, "workload": {"motif": "barrier"}, "allocation": {"policy": "explicit", "offset": 0, "servers": [0, 5]}}],
    });
    let today = serde_json::json!({
        "topology": {"kind": "dragonfly", "switches_per_group": 4, "global_links_per_switch": 2},
        "router": {"vcs": 4},
        "routing": {"algorithm": "minimal", "vc_policy": "min_first"},
        "traffic": {},
        "jobs": [{"name": "a", "ranks": 2, "workload": {"motif": "barrier"}, "allocation": {"policy": "explicit", "servers": [0, 5]}}],
    });
    let normalised = |v: &serde_json::Value| -> serde_json::Value { serde_json::from_str(&hopsim_core::normalise_json(&v.to_string()).unwrap()).unwrap() };
    assert_eq!(normalised(&old), normalised(&today));
    let validated: serde_json::Value = serde_json::from_str(&hopsim_core::validate_json(&old.to_string()).unwrap_or_else(|e| panic!("{e}"))).unwrap();
    assert_eq!(validated, normalised(&today));
    // Given today, those values are a kind's or a policy's own keys: refused where unread.
    let e = hopsim_core::validate_json(&serde_json::json!({"topology": {"kind": "dragonfly", "switches_per_group": 4, "global_links_per_switch": 2, "dims": [4]}, "traffic": {"load": 0.1}}).to_string()).unwrap_err();
    assert_eq!(e.to_string(), "topology.dims = [4]: unknown key for topology.kind = \"dragonfly\"; allowed keys: kind, servers_per_switch, switches_per_group, global_links_per_switch, groups, global_arrangement");
}
