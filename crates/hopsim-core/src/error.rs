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
        SpecError { key: key.into(), value: value.to_string(), allowed: allowed.into() }
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
