//! Text → `Spec`, with errors that name the dotted key.

use super::Spec;
use crate::error::{SpecError, SpecResult};

/// Parse and validate a spec given as JSON (what the Python layer sends).
pub fn from_json_str(text: &str) -> SpecResult<Spec> {
    let mut de = serde_json::Deserializer::from_str(text);
    let spec: Spec = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        serde_error(&path, &e.inner().to_string())
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

/// Turn serde's message into `key = value: allowed`.
fn serde_error(path: &str, msg: &str) -> SpecError {
    let msg = msg.split(" at line ").next().unwrap_or(msg).to_string();
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        let (field, tail) = rest.split_once('`').unwrap_or((rest, ""));
        let key = join(path, field);
        let allowed = tail.trim_start_matches(',').trim().replace("expected one of", "allowed keys:");
        let allowed = allowed.replace("expected", "allowed:");
        return SpecError::new(key, "", format!("unknown key; {}", allowed));
    }
    if let Some(rest) = msg.strip_prefix("missing field `") {
        let field = rest.split('`').next().unwrap_or(rest);
        return SpecError::new(join(path, field), "", "missing; this key is required");
    }
    if let Some(rest) = msg.strip_prefix("invalid type: ") {
        let (found, expected) = rest.split_once(", expected ").unwrap_or((rest, "another type"));
        return SpecError::new(path_or_root(path), found, format!("wrong type, expected {}", expected));
    }
    if let Some(rest) = msg.strip_prefix("invalid value: ") {
        let (found, expected) = rest.split_once(", expected ").unwrap_or((rest, "another value"));
        return SpecError::new(path_or_root(path), found, format!("expected {}", expected));
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
