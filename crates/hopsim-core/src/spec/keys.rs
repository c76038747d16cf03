//! What a registered component (topology kind, routing algorithm, VC policy, traffic pattern,
//! workload, motif, allocation policy) declares about the keys it reads, with `keys!` on its
//! key type (`crate::component`), and the one way every family reads them: `hopsim list`
//! prints the declarations and docs/experiment-file.md is checked against them
//! (`tests/suite/docs_keys.rs`).

/// A key of an experiment-file table that a component reads.
#[derive(Debug)]
pub struct Key {
    pub name: &'static str,
    /// As written in an experiment file (and in docs/experiment-file.md's default column),
    /// or `required`.
    pub default: &'static str,
    pub meaning: &'static str,
}

impl Key {
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({"name": self.name, "default": self.default, "meaning": self.meaning()})
    }

    /// `meaning` without the space a doc comment starts with (`keys!` takes it from one).
    pub fn meaning(&self) -> &'static str {
        self.meaning.trim()
    }
}

/// The keys as JSON, for `components_json`.
pub fn keys_json(keys: &[Key]) -> Vec<serde_json::Value> {
    keys.iter().map(Key::json).collect()
}

/// A component's own keys: those of its family's table that `own` declares, read by serde
/// into its key type `T` (declared with `keys!`, whose fields are exactly the declared keys). `table` is the
/// dotted prefix (`workload`, `jobs[0].workload`), `chosen` names the choice that picked
/// the component (`workload.kind = "bandwidth"`), `family` are the keys every component of
/// the family reads and `given` is what the table holds beyond them. `others` are the keys
/// left to other components (`Spec::keys_left_to_others`: those of the family when the
/// experiment sweeps the choice, so that one table serves every run of the sweep); any other
/// key is refused, naming the component's keys.
pub fn read_own_keys<T: serde::de::DeserializeOwned>(
    table: &str,
    chosen: &str,
    given: &std::collections::BTreeMap<String, serde_json::Value>,
    family: &[Key],
    own: &[Key],
    others: &[&str],
) -> crate::error::SpecResult<T> {
    let mut mine = serde_json::Map::new();
    // A null is a key not given (the normalised spec lists the keys of every pattern so).
    for (key, value) in given.iter().filter(|(_, v)| !v.is_null()) {
        if own.iter().any(|k| k.name == key) {
            mine.insert(key.clone(), value.clone());
        } else if !others.contains(&key.as_str()) && !former_field_unset(key, value) {
            let names: Vec<&str> = family.iter().chain(own).map(|k| k.name).collect();
            return Err(unknown_key(table, key, shown(value), chosen, &names));
        }
    }
    deserialize_own(table, chosen, serde_json::Value::Object(mine))
}

/// Keys that were typed fields of the spec, at the value older builds wrote for them into
/// every run folder's `spec.json` whichever component ran (`dims = []` beside a dragonfly,
/// `offset = 0` beside an explicit allocation):
/// a component that does not read such a key takes that value as not given.
fn former_field_unset(key: &str, value: &serde_json::Value) -> bool {
    match key {
        "dims" => value.as_array().is_some_and(Vec::is_empty),
        "ladder_vcs_per_step" | "offset" => value.as_u64() == Some(0),
        _ => false,
    }
}

/// `own`'s keys of a table that lists every component's keys (the normalised spec), read
/// into `T`; the other components' keys are skipped, not refused.
pub fn read_listed_keys<T: serde::de::DeserializeOwned>(
    table: &str,
    chosen: &str,
    given: &std::collections::BTreeMap<String, serde_json::Value>,
    own: &[Key],
) -> crate::error::SpecResult<T> {
    let mine = given.iter().filter(|(k, v)| !v.is_null() && own.iter().any(|o| o.name == k.as_str()));
    deserialize_own(table, chosen, serde_json::Value::Object(mine.map(|(k, v)| (k.clone(), v.clone())).collect()))
}

/// A component family's table as the normalised spec writes it: the chosen component's
/// keys not given set to its defaults (`own`: its key type's values when nothing is given),
/// and every other component's keys null, which readers take as not given. So the
/// normalised spec lists the same keys whichever component runs, is valid input again, and
/// a run folder's `spec.json` from an older build (which listed every component's defaults)
/// normalises to the same table on `--resume`.
pub fn list_keys<'a>(given: &mut std::collections::BTreeMap<String, serde_json::Value>, own: serde_json::Value, every: impl Iterator<Item = &'a str>) {
    let own = match own {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    for key in every.filter(|k| !own.contains_key(*k)) {
        given.insert(key.to_string(), serde_json::Value::Null);
    }
    // A null given is a key not given: its default, or no entry when it has none (as an
    // older build's `spec.json` lists a kind's keys, `groups = null`).
    for (key, value) in own {
        if given.get(&key).is_none_or(serde_json::Value::is_null) {
            if value.is_null() {
                given.remove(&key);
            } else {
                given.insert(key, value);
            }
        }
    }
}

/// `table.key = value: unknown key for CHOSEN; allowed keys: ...`, the one error of a key
/// the chosen component does not read.
pub fn unknown_key(table: &str, key: &str, value: impl std::fmt::Display, chosen: &str, allowed: &[&str]) -> crate::error::SpecError {
    crate::error::SpecError::new(format!("{table}.{key}"), value.to_string(), format!("unknown key for {chosen}; allowed keys: {}", allowed.join(", ")))
}

/// A value as an experiment file writes it (`[1, 0]`, not JSON's `[1,0]`).
pub(crate) fn shown(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Array(items) => format!("[{}]", items.iter().map(shown).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

fn deserialize_own<T: serde::de::DeserializeOwned>(table: &str, chosen: &str, mine: serde_json::Value) -> crate::error::SpecResult<T> {
    use crate::error::SpecError;
    serde_path_to_error::deserialize(&mine).map_err(|e| {
        let key = e.path().to_string();
        let msg = e.inner().to_string();
        if let Some(missing) = msg.strip_prefix("missing field `").and_then(|m| m.split('`').next()) {
            return SpecError::new(format!("{table}.{missing}"), "", format!("missing; {chosen} needs it"));
        }
        let msg = msg.replace("invalid type: ", "wrong type: ").replace('`', "");
        let value = mine.get(&key).map(|v| v.to_string()).unwrap_or_default();
        SpecError::new(format!("{table}.{key}"), value, msg)
    })
}
