//! Text → `Spec`, with errors that name the dotted key.

use super::{Spec, Validated};
use crate::error::{SpecError, SpecResult};

/// Parse and validate a spec given as JSON.
pub fn from_json_str(text: &str) -> SpecResult<Validated> {
    Validated::new(parse_json(text)?)
}

/// Specs parsed so far in this process (tests check that a run is parsed once per process).
static PARSES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub fn parses() -> u64 {
    PARSES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Parse a spec given as JSON (what the Python layer sends) without validating it: for
/// callers that make it a `Validated` themselves (or check its text's seal first).
pub fn parse_json(text: &str) -> SpecResult<Spec> {
    PARSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut de = serde_json::Deserializer::from_str(text);
    let spec: Spec = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        // Python writes NaN and infinities as bare `NaN` / `Infinity`, which JSON has not.
        if let Some(err) = non_finite_in_json(text) {
            return err;
        }
        let path = e.path().to_string();
        let found = serde_json::from_str::<serde_json::Value>(text).ok().and_then(|v| value_at(&v, &path));
        serde_error(&path, &e.inner().to_string(), found)
    })?;
    Ok(spec)
}

/// Parse and validate a spec given as TOML (for users of the Rust crate).
pub fn from_toml_str(text: &str) -> SpecResult<Validated> {
    let value: toml::Value = toml::from_str(text).map_err(|e| {
        let message = format!("malformed TOML: {}", e.message().replace('\n', " "));
        match e.span().and_then(|span| key_at(text, span.start)) {
            Some((key, value)) => SpecError::new(key, value, message),
            None => SpecError::new("file", "", message),
        }
    })?;
    // JSON has no NaN or infinity: serde_json would write them as null, a missing key.
    if let Some((key, x)) = non_finite_in_toml(&value, "") {
        return Err(non_finite(&key, &x));
    }
    let json = serde_json::to_string(&value).expect("TOML values are JSON-representable");
    from_json_str(&json)
}

fn non_finite(key: &str, value: &str) -> SpecError {
    SpecError::new(key, value, "must be a finite number (not NaN or infinity)")
}

/// The dotted key and text of the first NaN or infinity in a TOML document.
fn non_finite_in_toml(v: &toml::Value, path: &str) -> Option<(String, String)> {
    match v {
        toml::Value::Float(x) if !x.is_finite() => Some((path.to_string(), x.to_string())),
        toml::Value::Table(t) => t.iter().find_map(|(k, v)| non_finite_in_toml(v, &join(path, k))),
        toml::Value::Array(a) => a.iter().enumerate().find_map(|(i, v)| non_finite_in_toml(v, &format!("{path}[{i}]"))),
        _ => None,
    }
}

/// The first bare `NaN`, `Infinity` or `-Infinity` of a JSON text, as an error naming its key:
/// the tokens are replaced by marked strings so that the document parses and the marker can
/// be found with its path.
fn non_finite_in_json(text: &str) -> Option<SpecError> {
    const MARK: &str = "\\u0000non-finite:";
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped, mut found) = (false, false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if let Some(token) = ["-Infinity", "Infinity", "NaN"].into_iter().find(|t| rest.starts_with(t)) {
            out.push_str(&format!("\"{MARK}{token}\""));
            rest = &rest[token.len()..];
            found = true;
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    if !found {
        return None;
    }
    let doc: serde_json::Value = serde_json::from_str(&out).ok()?;
    fn find(v: &serde_json::Value, path: &str) -> Option<(String, String)> {
        match v {
            serde_json::Value::String(s) => s.strip_prefix("\u{0}non-finite:").map(|t| (path.to_string(), t.to_string())),
            serde_json::Value::Object(m) => m.iter().find_map(|(k, v)| find(v, &join(path, k))),
            serde_json::Value::Array(a) => a.iter().enumerate().find_map(|(i, v)| find(v, &format!("{path}[{i}]"))),
            _ => None,
        }
    }
    find(&doc, "").map(|(key, token)| non_finite(&key, &token))
}

/// The dotted key and value written on the line of `offset` of a TOML text (the table from
/// the last `[header]` above it), so that a value TOML cannot read (an integer beyond 64
/// bits) is reported under its key.
fn key_at(text: &str, offset: usize) -> Option<(String, String)> {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or("");
    let (key, value) = line.split_once('=')?;
    let key = key.trim().trim_matches('"');
    if key.is_empty() || key.starts_with('[') || key.contains(char::is_whitespace) {
        return None;
    }
    let above = &text[..start];
    let header = above.lines().rev().map(str::trim).find(|l| l.starts_with('['));
    let table = header.map(|h| table_path(above, h.trim_matches(|c| c == '[' || c == ']').trim())).unwrap_or_default();
    Some((join(&table, key), value.trim().to_string()))
}

/// The dotted path of table `name` as the last header of `above` opens it: each part that
/// is an array of tables (`[[jobs]]`) takes the index of its last entry (`jobs[1].workload`).
fn table_path(above: &str, name: &str) -> String {
    let mut path = String::new();
    let mut prefix = String::new();
    for part in name.split('.').map(|p| p.trim().trim_matches('"')) {
        prefix = join(&prefix, part);
        path = join(&path, part);
        let entries = above.lines().map(str::trim).filter(|l| l.strip_prefix("[[").and_then(|l| l.strip_suffix("]]")).is_some_and(|h| h.trim() == prefix)).count();
        if entries > 0 {
            path.push_str(&format!("[{}]", entries - 1));
        }
    }
    path
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
