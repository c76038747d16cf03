//! docs/experiment-file.md's `[topology]` rows against the topology registry, which declares
//! each kind's keys next to its code: a kind or key added without its row, or a row left for
//! a key no kind has, fails here.

use hopsim_core::topology::KINDS;
use std::collections::BTreeSet;

/// The first cells of the experiment-file key table, e.g. "`topology.k`, `topology.levels`".
fn key_cells() -> Vec<(String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/experiment-file.md");
    let text = std::fs::read_to_string(path).expect("docs/experiment-file.md");
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
    let declared: BTreeSet<String> = KINDS.iter().flat_map(|k| k.keys.iter().map(|key| key.name.to_string())).collect();
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
