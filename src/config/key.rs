//! The API key: read from the environment (after `.env`), never from a flag or
//! a file. What must stay true: the key never prints (`Debug` is redacted)
//! and is exposed only for the `Authorization` header.

use std::fmt;

pub const API_KEY_VAR: &str = "OPENAI_API_KEY";

/// The API key. `Debug` and `Display` are redacted so it cannot leak into logs.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// `None` for a missing or blank value.
    pub fn new(value: impl Into<String>) -> Option<Self> {
        let value = value.into();
        let trimmed = value.trim();
        (!trimmed.is_empty()).then(|| ApiKey(trimmed.to_string()))
    }

    /// The key from the environment, if set and not blank.
    pub fn from_env() -> Option<Self> {
        std::env::var(API_KEY_VAR).ok().and_then(ApiKey::new)
    }

    /// The raw key, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}
