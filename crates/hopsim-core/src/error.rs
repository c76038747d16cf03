//! One error type for everything a user can get wrong in an experiment file.

use std::fmt;

/// A problem with the experiment file: the dotted key, the value found and what is allowed.
/// Its `Display` is one line, ready for `hopsim: error: ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    pub key: String,
    pub value: String,
    pub allowed: String,
}

impl SpecError {
    pub fn new(key: impl Into<String>, value: impl fmt::Display, allowed: impl Into<String>) -> Self {
        SpecError { key: key.into(), value: shown(value.to_string()), allowed: allowed.into() }
    }
}

/// A value as a user would write it: an `Option` a message formatted with `{:?}` shows as
/// its value (or as nothing), and a number that `Display` wrote out in hundreds of digits
/// (`5e-324`, `1e300`) in the shortest form that reads back the same.
fn shown(value: String) -> String {
    if value == "None" {
        return String::new();
    }
    if let Some(inner) = value.strip_prefix("Some(").and_then(|v| v.strip_suffix(')')) {
        return shown(inner.to_string());
    }
    // No integer a key holds has more than 20 digits.
    if value.len() > 24 && value.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'-') {
        if let Ok(x) = value.parse::<f64>() {
            return format!("{x:?}");
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::SpecError;

    #[test]
    fn values_are_shown_as_written() {
        assert_eq!(SpecError::new("k", 5e-324, "").value, "5e-324");
        assert_eq!(SpecError::new("k", 1e300, "").value, "1e300");
        assert_eq!(SpecError::new("k", 0.25, "").value, "0.25");
        assert_eq!(SpecError::new("k", u64::MAX, "").value, "18446744073709551615");
        assert_eq!(SpecError::new("k", format!("{:?}", Some(0.0)), "").value, "0.0");
        assert_eq!(SpecError::new("k", format!("{:?}", None::<f64>), "").value, "");
        assert_eq!(SpecError::new("k", "\"Some(x)\"", "").value, "\"Some(x)\"");
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}: {}", self.key, self.allowed)
        } else {
            write!(f, "{} = {}: {}", self.key, self.value, self.allowed)
        }
    }
}

impl std::error::Error for SpecError {}

pub type SpecResult<T> = Result<T, SpecError>;
