//! A key that only another kind of the same table reads is refused, for every registered
//! kind of every family (read from the registries, not listed here), with one error shape:
//! the dotted key, its value, the kind chosen and the keys it allows. A sweep over the
//! kinds leaves the others' keys to them (one table serves every run of the sweep).

use hopsim_core::error::SpecResult;
use hopsim_core::spec::{parse_json, AriesMode, ProtocolKind, Spec, APP_AWARE_KEYS};
use serde_json::{json, Value};

/// One table whose kind selects its keys.
struct Family {
    /// The selector's dotted key (`routing.algorithm`), and the table's dotted prefix.
    selector: &'static str,
    table: &'static str,
    /// Each registered kind with the keys it declares.
    kinds: Vec<(String, Vec<String>)>,
    /// A spec choosing `kind` (the selector and the table written in).
    spec: fn(kind: &str) -> Value,
    /// The family's check that reads the chosen kind's keys.
    check: fn(&Spec) -> SpecResult<()>,
}

fn names(list: &Value) -> Vec<(String, Vec<String>)> {
    let keys = |c: &Value| c["keys"].as_array().unwrap().iter().map(|k| k["name"].as_str().unwrap().to_string()).collect();
    list.as_array().unwrap().iter().map(|c| (c["name"].as_str().unwrap().to_string(), keys(c))).collect()
}

fn torus(extra: Value) -> Value {
    let mut spec = json!({"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"load": 0.3}});
    merge(&mut spec, extra);
    spec
}

fn with_job(workload: Value, allocation: Value) -> Value {
    json!({
        "topology": {"kind": "torus", "dims": [2], "servers_per_switch": 16},
        "packet": {"phits": 4, "bytes": 64},
        "traffic": {},
        "jobs": [{"name": "a", "ranks": 4, "workload": workload, "allocation": allocation}],
    })
}

fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v,
    }
}

fn families() -> Vec<Family> {
    let c: Value = serde_json::from_str(&hopsim_core::components_json()).unwrap();
    // A job's routing mode: an Aries mode, which reads no `app_aware` key, or app_aware.
    let app_aware = (String::from("app_aware"), APP_AWARE_KEYS.iter().map(|k| k.to_string()).collect());
    let routing_modes = AriesMode::ALL.iter().map(|m| (m.name().to_string(), vec![])).chain([app_aware]).collect();
    let allocation = hopsim_core::workload::alloc::POLICIES.iter().map(|p| (p.name.to_string(), p.keys.iter().map(|k| k.name.to_string()).collect())).collect();
    vec![
        Family {
            selector: "topology.kind",
            table: "topology",
            kinds: names(&c["topologies"]),
            spec: |k| json!({"topology": {"kind": k}, "traffic": {"load": 0.3}}),
            check: |s| hopsim_core::topology::build(s).map(|_| ()),
        },
        Family {
            selector: "routing.algorithm",
            table: "routing",
            kinds: names(&c["routing_algorithms"]),
            spec: |k| torus(json!({"routing": {"algorithm": k}})),
            check: |s| hopsim_core::routing::own_keys::<Value>(s).map(|_| ()),
        },
        Family {
            selector: "routing.vc_policy",
            table: "routing",
            kinds: names(&c["vc_policies"]),
            spec: |k| torus(json!({"routing": {"vc_policy": k}})),
            check: |s| hopsim_core::vc::Policy::from_spec(s).map(|_| ()),
        },
        Family {
            selector: "traffic.pattern",
            table: "traffic",
            kinds: names(&c["traffic_patterns"]),
            spec: |k| torus(json!({"traffic": {"pattern": k}})),
            check: |s| hopsim_core::traffic::own_keys::<Value>(s).map(|_| ()),
        },
        Family {
            selector: "workload.kind",
            table: "workload",
            kinds: names(&c["workloads"]),
            spec: |k| torus(json!({"workload": {"kind": k}})),
            check: |s| hopsim_core::workload::own_keys::<Value>(s).map(|_| ()),
        },
        Family {
            selector: "jobs[0].workload.motif",
            table: "jobs[0].workload",
            kinds: names(&c["motifs"]),
            spec: |k| with_job(json!({"motif": k}), json!({})),
            check: hopsim_core::workload::motifs::check,
        },
        Family {
            selector: "nic.protocol",
            table: "nic",
            kinds: ProtocolKind::ALL.iter().map(|p| (p.name().to_string(), p.keys().iter().map(|k| k.to_string()).collect())).collect(),
            spec: |k| torus(json!({"nic": {"protocol": k}, "packet": {"phits": 16}})),
            check: |s| s.validate(),
        },
        Family {
            selector: "jobs[0].routing_mode",
            table: "jobs[0].app_aware",
            kinds: routing_modes,
            spec: |k| {
                let mut s = with_job(json!({"motif": "barrier"}), json!({}));
                s["jobs"][0]["routing_mode"] = json!(k);
                s
            },
            check: |s| s.validate(),
        },
        Family {
            selector: "jobs[0].allocation.policy",
            table: "jobs[0].allocation",
            kinds: allocation,
            spec: |k| with_job(json!({"motif": "barrier"}), json!({"policy": k})),
            check: |s| hopsim_core::workload::alloc::build(s, 0).map(|_| ()),
        },
    ]
}

/// `spec` with `key` of `table` set to the first of a few values of different types that
/// parses (a typed key takes only its type; the error must be the key's, not its type's).
fn with_key(spec: &Value, table: &str, key: &str) -> (Spec, String) {
    for value in [json!(2), json!([2, 2]), json!("switch"), json!(true)] {
        let mut s = spec.clone();
        let mut slot = &mut s;
        for part in table.split('.') {
            slot = match part.strip_suffix("[0]") {
                Some(array) => &mut slot[array][0],
                None => &mut slot[part],
            };
        }
        slot[key] = value.clone();
        if let Ok(parsed) = parse_json(&s.to_string()) {
            let shown = match &value {
                Value::Array(_) => "[2, 2]".to_string(),
                v => v.to_string(),
            };
            return (parsed, shown);
        }
    }
    panic!("{table}.{key}: no value parses");
}

fn sweeping(mut spec: Spec, selector: &str, kinds: &[(String, Vec<String>)]) -> Spec {
    let plain = selector.replace("[0]", ".0");
    spec.sweep = Some(json!({ plain: kinds.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>() }));
    spec
}

#[test]
fn every_kind_of_every_family_refuses_a_key_that_only_another_kind_reads() {
    for family in families() {
        let mut tested = 0;
        for (kind, own) in &family.kinds {
            // A key another kind declares and this one does not.
            let Some(key) = family.kinds.iter().flat_map(|(_, keys)| keys).find(|k| !own.contains(k)) else { continue };
            let (spec, value) = with_key(&(family.spec)(kind), family.table, key);
            let e = (family.check)(&spec).expect_err(&format!("{} = {kind:?} with {}.{key}", family.selector, family.table));
            assert_eq!((e.key.as_str(), e.value.as_str()), (format!("{}.{key}", family.table).as_str(), value.as_str()), "{e}");
            let shape = format!("unknown key for {} = {kind:?}; allowed keys: ", family.selector);
            assert!(e.allowed.starts_with(&shape), "{e}");
            let allowed: Vec<&str> = e.allowed[shape.len()..].split(", ").collect();
            assert!(own.iter().all(|k| allowed.contains(&k.as_str())) && !allowed.contains(&key.as_str()), "{e}");
            // A sweep over the family's kinds leaves the key to the kinds that read it.
            let swept = sweeping(spec, family.selector, &family.kinds);
            if let Err(e) = (family.check)(&swept) {
                assert_ne!(e.key, format!("{}.{key}", family.table), "swept {}: {e}", family.selector);
            }
            tested += 1;
        }
        assert!(tested > 0, "{}: no kind has a key another lacks", family.selector);
    }
}

#[test]
fn a_key_of_another_motif_is_refused_by_a_whole_check_of_the_spec() {
    // The gap that was found: halo3d's `domain` in an allreduce job ran, ignored.
    let spec = with_job(json!({"motif": "allreduce", "elements": 4, "domain": [2, 2, 1]}), json!({}));
    let e = hopsim_core::validate_json(&spec.to_string()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "jobs[0].workload.domain = [2, 2, 1]: unknown key for jobs[0].workload.motif = \"allreduce\"; allowed keys: motif, iterations, compute, barrier, algorithm, bytes, elements, element_bytes"
    );
}

hopsim_core::keys! {
    /// The keys of a topology kind of this test's own, one named like a key of the
    /// dragonflies (`groups`), one like the fat tree's (`k`).
    struct FixtureKeys {
        /// groups of the fixture
        groups: usize = required,
        /// its k
        k: usize = 2,
    }
}

/// The fixture kind's keys, read as a registered kind reads its own (`topology::own_keys`).
fn fixture_keys(spec: &Spec) -> SpecResult<FixtureKeys> {
    let given = &spec.topology.kind_keys;
    hopsim_core::spec::read_own_keys("topology", "topology.kind = \"fixture\"", given, hopsim_core::topology::TABLE_KEYS, FixtureKeys::KEYS, &[])
}

/// A kind may name its keys like those of other kinds (`groups`, `k`): the spec keeps no
/// key of one kind in a field of its own, so the kind reads what the user wrote, and a key
/// it needs and is not given is named as missing.
#[test]
fn a_kind_may_name_its_key_groups() {
    let spec = parse_json(r#"{"topology": {"kind": "fixture", "groups": 5, "k": 3, "servers_per_switch": 2}}"#).unwrap();
    let FixtureKeys { groups, k } = fixture_keys(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((groups, k, spec.topology.servers_per_switch), (5, 3, Some(2)));

    let spec = parse_json(r#"{"topology": {"kind": "fixture"}}"#).unwrap();
    let e = fixture_keys(&spec).err().expect("groups is required");
    assert_eq!(e.to_string(), "topology.groups: missing; topology.kind = \"fixture\" needs it");
    let spec = parse_json(r#"{"topology": {"kind": "fixture", "groups": 5, "levels": 2}}"#).unwrap();
    let e = fixture_keys(&spec).err().expect("levels is not the fixture's");
    assert_eq!(e.to_string(), "topology.levels = 2: unknown key for topology.kind = \"fixture\"; allowed keys: kind, servers_per_switch, groups, k");
    let spec = parse_json(r#"{"topology": {"kind": "fixture", "groups": "five"}}"#).unwrap();
    let e = fixture_keys(&spec).err().expect("groups is a number");
    assert!(e.to_string().starts_with("topology.groups = \"five\": wrong type"), "{e}");

    // The registered kinds read theirs alike: a dragonfly's `groups`, a fat tree's `k`.
    let df = parse_json(r#"{"topology": {"kind": "dragonfly", "switches_per_group": 2, "global_links_per_switch": 1, "groups": 2}}"#).unwrap();
    assert_eq!(hopsim_core::topology::build(&df).unwrap().groups(), 2);
    let ft = parse_json(r#"{"topology": {"kind": "fat_tree", "k": 3, "levels": 2}}"#).unwrap();
    assert_eq!(hopsim_core::topology::build(&ft).unwrap().num_switches(), 6);
}
