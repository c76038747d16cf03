//! docs/experiment-file.md's `[topology]` rows against the topology registry, which declares
//! each kind's keys next to its code: a kind or key added without its row, or a row left for
//! a key no kind has, fails here. The same for the `[routing]`, `[traffic]` and `[workload]`
//! keys against the routing algorithms, VC policies, traffic patterns and workloads, which
//! declare theirs the same way, and for the names of every registered component.

use hopsim_core::component::Component;
use hopsim_core::spec::Key;
use hopsim_core::topology::KINDS;
use std::collections::{BTreeMap, BTreeSet};

/// The first cells of the experiment-file key table, e.g. "`topology.k`, `topology.levels`"
/// (the table of the top-level keys, before the sections on workloads and jobs).
fn key_cells() -> Vec<(String, String)> {
    cells(doc().split("\n## ").next().unwrap())
}

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/experiment-file.md");
    std::fs::read_to_string(path).expect("docs/experiment-file.md")
}

fn cells(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split_once(" | "))
        .map(|(first, rest)| (first.to_string(), rest.to_string()))
        .collect()
}

/// The `topology.<key>` names in a cell (backquoted).
fn topology_keys(cell: &str) -> Vec<String> {
    cell.split('`').filter_map(|part| part.strip_prefix("topology.")).map(str::to_string).collect()
}

#[test]
fn every_topology_kind_and_key_has_its_row_and_every_row_a_key() {
    let cells = key_cells();
    let documented: BTreeSet<String> = cells.iter().flat_map(|(first, _)| topology_keys(first)).collect();
    let every = hopsim_core::topology::TABLE_KEYS.iter();
    let declared: BTreeSet<String> = KINDS.iter().flat_map(|k| k.keys.iter()).chain(every).map(|key| key.name.to_string()).collect();
    let missing: Vec<&String> = declared.difference(&documented).filter(|k| *k != "kind").collect();
    assert!(missing.is_empty(), "keys without a row in docs/experiment-file.md: {missing:?}");
    let stale: Vec<&String> = documented.difference(&declared).filter(|k| *k != "kind").collect();
    assert!(stale.is_empty(), "rows in docs/experiment-file.md for keys no topology has: {stale:?}");
    let (_, kinds_row) = cells.iter().find(|(first, _)| first == "`topology.kind`").expect("a topology.kind row");
    for k in KINDS {
        assert!(kinds_row.contains(&format!("`{}`", k.name)), "topology.kind row lacks `{}`", k.name);
    }
}

#[test]
fn a_kind_row_names_the_kinds_that_use_it() {
    // A row that says which kinds need a key, "(dragonfly)" or "(aries)", names only kinds
    // that declare it.
    for (first, rest) in key_cells() {
        for key in topology_keys(&first) {
            for k in KINDS {
                let named = rest.contains(&format!("({})", k.name)) || first.contains(&format!("({})", k.name));
                if named {
                    assert!(k.keys.iter().any(|d| d.name == key), "row {first} names {} for topology.{key}, which it lacks", k.name);
                }
            }
        }
    }
}

/// The `<table>.<key>` names in a cell (backquoted; `[traffic.burst]` names `burst`).
fn table_keys(cell: &str, table: &str) -> Vec<String> {
    let prefix = format!("{table}.");
    cell.split('`').map(|part| part.trim_matches(|c| c == '[' || c == ']')).filter_map(|part| part.strip_prefix(prefix.as_str())).map(str::to_string).collect()
}

/// A default as the docs' column and the registries write it, without the backquotes.
fn plain(default: &str) -> String {
    default.replace('`', "").trim().to_string()
}

/// Every key a family's components and table declare, with its declared defaults.
fn declared(families: &[&[Key]]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for keys in families {
        for k in *keys {
            out.entry(k.name.to_string()).or_default().insert(plain(k.default));
        }
    }
    out
}

/// The rows of `table` against its declared keys: each declared key has a row, each row a
/// declared key, and a row of one key gives the default the registry declares.
fn check_table(table: &str, keys: &BTreeMap<String, BTreeSet<String>>) {
    let cells = key_cells();
    let documented: BTreeSet<String> = cells.iter().flat_map(|(first, _)| table_keys(first, table)).collect();
    let names: BTreeSet<String> = keys.keys().cloned().collect();
    let missing: Vec<&String> = names.difference(&documented).collect();
    assert!(missing.is_empty(), "{table} keys without a row in docs/experiment-file.md: {missing:?}");
    let stale: Vec<&String> = documented.difference(&names).collect();
    assert!(stale.is_empty(), "rows in docs/experiment-file.md for {table} keys no component declares: {stale:?}");
    for (first, rest) in &cells {
        let own = table_keys(first, table);
        if own.len() != 1 || first.trim() != format!("`{table}.{}`", own[0]) {
            continue;
        }
        let default = plain(rest.split(" | ").next().unwrap_or(""));
        let want = &keys[&own[0]];
        assert!(want.len() == 1 && want.contains(&default), "{table}.{}: docs default {default:?}, declared {want:?}", own[0]);
    }
}

/// The row of `key` names every one of `names`, backquoted.
fn row_names_all(key: &str, names: &[&str]) {
    let cells = key_cells();
    let (_, row) = cells.iter().find(|(first, _)| first == &format!("`{key}`")).unwrap_or_else(|| panic!("a {key} row"));
    for n in names {
        assert!(row.contains(&format!("`{n}`")), "the {key} row lacks `{n}`");
    }
}

#[test]
fn routing_traffic_and_workload_rows_match_their_registries() {
    use hopsim_core::{routing, spec, traffic, vc, workload};
    let algorithms: Vec<&[Key]> = routing::ALGORITHMS.iter().map(|a| a.keys).collect();
    let policies: Vec<&[Key]> = vc::POLICIES.iter().map(|p| p.keys).collect();
    check_table("routing", &declared(&[&[routing::TABLE_KEYS], &algorithms[..], &policies[..]].concat()));
    let patterns: Vec<&[Key]> = traffic::PATTERNS.iter().map(|p| p.keys).collect();
    check_table("traffic", &declared(&[&[traffic::TABLE_KEYS], &patterns[..]].concat()));
    let workloads: Vec<&[Key]> = workload::WORKLOADS.iter().map(|w| w.keys).collect();
    check_table("workload", &declared(&[&[spec::workload::TABLE_KEYS], &workloads[..]].concat()));

    row_names_all("routing.algorithm", &routing::ALGORITHMS.iter().map(|a| a.name).collect::<Vec<_>>());
    row_names_all("routing.vc_policy", &vc::POLICIES.iter().map(|p| p.name).collect::<Vec<_>>());
    row_names_all("traffic.pattern", &traffic::PATTERNS.iter().map(|p| p.name).collect::<Vec<_>>());
    row_names_all("workload.kind", &workload::WORKLOADS.iter().map(|w| w.name).collect::<Vec<_>>());
}

#[test]
fn rows_that_differ_from_a_key_type_fail_the_check() {
    // The traffic keys as the key types declare them pass; a key type with a key more, one
    // fewer, or another default than docs/experiment-file.md gives must each be caught.
    use hopsim_core::traffic;
    let patterns: Vec<&[Key]> = traffic::PATTERNS.iter().map(|p| p.keys).collect();
    let keys = declared(&[&[traffic::TABLE_KEYS], &patterns[..]].concat());
    check_table("traffic", &keys);
    let mut more = keys.clone();
    more.insert("hotspot_radius".into(), BTreeSet::from(["1".to_string()]));
    let mut fewer = keys.clone();
    fewer.remove("shift");
    let mut other = keys.clone();
    other.insert("shift".into(), BTreeSet::from(["[1, 1]".to_string()]));
    for (what, keys) in [("a key more", more), ("a key fewer", fewer), ("another default", other)] {
        let caught = std::panic::catch_unwind(|| check_table("traffic", &keys));
        assert!(caught.is_err(), "a traffic key type with {what} than the docs passed the check");
    }
}

#[test]
fn the_pattern_and_motif_tables_match_their_registries() {
    use hopsim_core::{traffic, workload::motifs::MOTIFS};
    // "| `name` | ..." rows of the Traffic patterns table, which follows its heading.
    let text = doc();
    let section = text.split("## Traffic patterns").nth(1).expect("a Traffic patterns section").split("\n## ").next().unwrap();
    let rows: BTreeSet<&str> = section.lines().filter_map(|l| l.strip_prefix("| `")).filter_map(|l| l.split('`').next()).collect();
    let names: BTreeSet<&str> = traffic::PATTERNS.iter().map(|p| p.name).collect();
    assert_eq!(rows, names, "the Traffic patterns table against traffic::PATTERNS");

    let (_, motif_row) = cells(&text).into_iter().find(|(first, _)| first == "`workload.motif`").expect("a workload.motif row");
    for m in MOTIFS {
        assert!(motif_row.contains(&format!("`{}`", m.name)), "the workload.motif row lacks `{}`", m.name);
        for k in m.keys {
            assert!(motif_row.contains(&format!("`{}`", k.name)), "the workload.motif row lacks {}'s key `{}`", m.name, k.name);
        }
    }
}

/// A component's declared keys against its one key type's values when nothing is given: the
/// same names, and each declared default that is a value (not words such as "one packet"
/// or "required") equal to the type's.
fn keys_match_their_type(component: &str, keys: &[Key], defaults: serde_json::Value) {
    let values = defaults.as_object().unwrap_or_else(|| panic!("{component}: its key type is a table"));
    let declared: BTreeSet<&str> = keys.iter().map(|k| k.name).collect();
    let typed: BTreeSet<&str> = values.keys().map(String::as_str).collect();
    assert_eq!(declared, typed, "{component}: declared keys against its key type's fields");
    for k in keys {
        let value = &values[k.name];
        match serde_json::from_str::<serde_json::Value>(k.default) {
            Ok(declared) => assert_eq!(&declared, value, "{component}.{}: declared default against its key type's", k.name),
            Err(_) => assert!(value.is_null(), "{component}.{}: declared {:?}, its key type gives {value}", k.name, k.default),
        }
    }
}

/// Every registered component of every family, through the one contract they share.
fn components() -> Vec<(&'static str, &'static dyn Component)> {
    use hopsim_core::{routing, topology, traffic, vc, workload};
    fn all<C: Component>(family: &'static str, list: &'static [C]) -> impl Iterator<Item = (&'static str, &'static dyn Component)> {
        list.iter().map(move |c| (family, c as &dyn Component))
    }
    all("topology", topology::KINDS)
        .chain(all("routing", routing::ALGORITHMS))
        .chain(all("vc_policy", vc::POLICIES))
        .chain(all("traffic", traffic::PATTERNS))
        .chain(all("workload", workload::WORKLOADS))
        .chain(all("motif", workload::motifs::MOTIFS))
        .chain(all("allocation", workload::alloc::POLICIES))
        .collect()
}

#[test]
fn each_components_declared_keys_are_its_key_types_fields() {
    let found = components();
    for family in ["topology", "routing", "vc_policy", "traffic", "workload", "motif", "allocation"] {
        assert!(found.iter().any(|(f, _)| *f == family), "no {family} component found");
    }
    for (family, c) in found {
        keys_match_their_type(&format!("{family} {}", c.name()), c.keys(), c.defaults());
    }
    // The keys every motif reads, against the fields of `jobs[].workload` (`motif` is
    // required: given here, and declared as such).
    let w: hopsim_core::spec::JobWorkloadSpec = serde_json::from_str(r#"{"motif": "barrier"}"#).unwrap();
    let mut fields = serde_json::to_value(w).unwrap();
    fields["motif"] = serde_json::Value::Null;
    keys_match_their_type("jobs[].workload", hopsim_core::spec::JOB_WORKLOAD_KEYS, fields);
}

#[test]
fn a_declaration_that_disagrees_with_its_key_type_fails_the_check() {
    // bcast reads `bytes` and `root = 0` with its key type: declaring another default, one
    // key fewer, or one more than the type has must each be caught.
    let bcast = hopsim_core::workload::motifs::MOTIFS.iter().find(|m| m.name == "bcast").expect("bcast");
    let bytes = Key { name: "bytes", default: "8 bytes", meaning: "" };
    let root = |default| Key { name: "root", default, meaning: "" };
    keys_match_their_type("bcast as declared", bcast.keys, (bcast.defaults)());
    let wrong: [&[Key]; 3] = [
        &[Key { ..bytes }, root("1")],
        &[root("0")],
        &[Key { ..bytes }, root("0"), Key { name: "block", default: "1", meaning: "" }],
    ];
    for keys in wrong {
        let names: Vec<_> = keys.iter().map(|k| (k.name, k.default)).collect();
        let caught = std::panic::catch_unwind(|| keys_match_their_type("bcast", keys, (bcast.defaults)()));
        assert!(caught.is_err(), "declaring {names:?} for bcast passed the check");
    }
}
