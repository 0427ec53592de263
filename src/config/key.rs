//! The API key: read from the environment (after `.env`), never from a flag or
//! a file; which variable depends on the provider (`providers`). What must
//! stay true: the key never prints (`Debug` is redacted) and is exposed only
//! for the `Authorization` / `x-api-key` header.

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
        Self::from_env_var(API_KEY_VAR)
    }

    /// The key from this variable (a provider preset's), if set and not blank.
    pub fn from_env_var(var: &str) -> Option<Self> {
        std::env::var(var).ok().and_then(ApiKey::new)
    }

    /// The raw key, for the `Authorization` or `x-api-key` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}
