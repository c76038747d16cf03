//! Text → `Spec`, with errors that name the dotted key.

use super::Spec;
use crate::error::{SpecError, SpecResult};

/// Parse and validate a spec given as JSON (what the Python layer sends).
pub fn from_json_str(text: &str) -> SpecResult<Spec> {
    let mut de = serde_json::Deserializer::from_str(text);
    let spec: Spec = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let found = serde_json::from_str::<serde_json::Value>(text).ok().and_then(|v| value_at(&v, &path));
        serde_error(&path, &e.inner().to_string(), found)
    })?;
    spec.validate()?;
    Ok(spec)
}

/// Parse and validate a spec given as TOML (for users of the Rust crate).
pub fn from_toml_str(text: &str) -> SpecResult<Spec> {
    let value: toml::Value = toml::from_str(text).map_err(|e| {
        SpecError::new("file", "", format!("malformed TOML: {}", e.message().replace('\n', " ")))
    })?;
    let json = serde_json::to_string(&value).expect("TOML values are JSON-representable");
    from_json_str(&json)
}

/// The value at a dotted path of the document, as the user wrote it.
fn value_at(doc: &serde_json::Value, path: &str) -> Option<String> {
    let mut v = doc;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        v = match v {
            serde_json::Value::Object(m) => m.get(part)?,
            serde_json::Value::Array(a) => a.get(part.trim_matches(|c| c == '[' || c == ']').parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(v.to_string())
}

/// Rust type names in serde's messages, in the words of the experiment file.
fn plain(expected: &str) -> String {
    match expected.trim() {
        "f64" | "f32" => "a number".into(),
        "u64" | "u32" | "u16" | "u8" | "usize" => "a whole number >= 0".into(),
        "i64" | "i32" => "a whole number".into(),
        "a string" | "a sequence" | "a map" | "a boolean" => expected.replace("sequence", "list").replace("map", "table"),
        other => other.replace("struct ", "table ").replace('`', "").to_string(),
    }
}

/// Turn serde's message into `key = value: allowed`.
fn serde_error(path: &str, msg: &str, found: Option<String>) -> SpecError {
    let msg = msg.split(" at line ").next().unwrap_or(msg).to_string();
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        let (field, tail) = rest.split_once('`').unwrap_or((rest, ""));
        // The path already ends with the unknown field.
        let key = if path.ends_with(field) { path.to_string() } else { join(path, field) };
        let allowed = tail.trim_start_matches(',').trim().replace("expected one of", "allowed keys:");
        let allowed = allowed.replace("expected", "allowed:").replace('`', "");
        return SpecError::new(key, found.unwrap_or_default(), format!("unknown key; {}", allowed));
    }
    if let Some(rest) = msg.strip_prefix("missing field `") {
        let field = rest.split('`').next().unwrap_or(rest);
        return SpecError::new(join(path, field), "", "missing; this key is required");
    }
    if let Some(rest) = msg.strip_prefix("invalid type: ") {
        let (what, expected) = rest.split_once(", expected ").unwrap_or((rest, "another type"));
        return SpecError::new(path_or_root(path), found.unwrap_or_else(|| what.to_string()), format!("wrong type, expected {}", plain(expected)));
    }
    if let Some(rest) = msg.strip_prefix("invalid value: ") {
        let (what, expected) = rest.split_once(", expected ").unwrap_or((rest, "another value"));
        return SpecError::new(path_or_root(path), found.unwrap_or_else(|| what.to_string()), format!("expected {}", plain(expected)));
    }
    SpecError::new(path_or_root(path), "", msg)
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() || path == "." {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

fn path_or_root(path: &str) -> String {
    if path.is_empty() || path == "." {
        "spec".into()
    } else {
        path.to_string()
    }
}
