//! Resolved run configuration: flags and environment (with `.env`) turned into
//! one validated `Config`. The API key is held in a type that never prints.

pub mod file;
pub mod flags;
pub mod layers;
pub mod models;

use crate::agent::scopes::ScopePolicy;
use crate::config::models::ModelTable;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";
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

/// How tool calls travel between the model and stepwise.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// Native OpenAI tool calling (`tools` + `tool_calls`).
    #[default]
    Tools,
    /// A JSON object in the reply text: `{"type":"tool_call",...}` or `{"type":"final",...}`.
    Json,
}

/// Where the model's replies come from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ModelSource {
    /// An OpenAI-compatible HTTP endpoint.
    #[default]
    Http,
    /// The built-in scripted demo (`assets/demo/calculator.json`).
    Demo,
    /// A script file (`--script FILE`).
    Script(PathBuf),
}

impl ModelSource {
    pub fn is_scripted(&self) -> bool {
        !matches!(self, ModelSource::Http)
    }
}

/// Everything a session needs to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub workspace: PathBuf,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    pub max_steps: u32,
    pub test_timeout: Duration,
    pub protocol: Protocol,
    pub model_source: ModelSource,
    /// Retries of a failed model request (connection, timeout, 429, 5xx).
    pub max_retries: u32,
    /// Seconds the model server may send nothing before the request counts as broken.
    pub idle_timeout: Duration,
    /// Session transcripts: off, or a folder (default: `.stepwise/sessions` in the workspace).
    pub log: LogSetting,
    /// Compact the conversation when the next request would pass this percentage of the window.
    pub context_budget: u8,
    /// The model's context window in tokens (from the model table unless set).
    pub context_window: u64,
    /// Stop a task when its estimated cost reaches this many US dollars.
    pub max_cost: Option<f64>,
    /// Context windows and prices.
    pub models: ModelTable,
    /// Tools and paths that "approve for the rest of the task" may not cover.
    pub scope_policy: ScopePolicy,
}

/// Where the session transcript goes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LogSetting {
    Off,
    #[default]
    InWorkspace,
    Dir(PathBuf),
}

/// A configuration problem the user must fix (exit code 2).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error(
        "{API_KEY_VAR} is not set: add `{API_KEY_VAR}=...` to .env in the current directory (or export it), or point --base-url at a local server"
    )]
    MissingKey,
    #[error("--base-url {0:?} is not an http(s) URL")]
    BadBaseUrl(String),
    #[error("workspace folder {0} does not exist or is not a folder")]
    BadWorkspace(String),
}

impl Config {
    /// Check what can be checked before any request: URL shape, key presence, workspace.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !self.workspace.is_dir() {
            return Err(ConfigError::BadWorkspace(
                self.workspace.display().to_string(),
            ));
        }
        let local = is_local_url(&self.base_url)?;
        if self.api_key.is_none() && !local && !self.model_source.is_scripted() {
            return Err(ConfigError::MissingKey);
        }
        Ok(())
    }
}

/// Whether the base URL points at this machine (a local server needs no key).
pub fn is_local_url(base_url: &str) -> Result<bool, ConfigError> {
    let url = reqwest::Url::parse(base_url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| ConfigError::BadBaseUrl(base_url.to_string()))?;
    Ok(match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback() || ip.is_unspecified(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback() || ip.is_unspecified(),
        None => return Err(ConfigError::BadBaseUrl(base_url.to_string())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(base_url: &str, key: Option<&str>) -> Config {
        Config {
            workspace: std::env::temp_dir(),
            model: "m".into(),
            base_url: base_url.into(),
            api_key: key.and_then(ApiKey::new),
            max_steps: 20,
            test_timeout: Duration::from_secs(30),
            protocol: Protocol::Tools,
            model_source: ModelSource::Http,
            max_retries: 4,
            idle_timeout: Duration::from_secs(120),
            log: LogSetting::InWorkspace,
            context_budget: 70,
            context_window: 32768,
            max_cost: None,
            models: ModelTable::builtin(),
            scope_policy: ScopePolicy::default(),
        }
    }

    #[test]
    fn local_servers_need_no_key_remote_ones_do() {
        for url in [
            "http://localhost:11434/v1",
            "http://127.0.0.1:8080/v1",
            "http://[::1]:8000/v1",
        ] {
            assert_eq!(config(url, None).validate(), Ok(()), "{url}");
        }
        assert_eq!(
            config(DEFAULT_BASE_URL, None).validate(),
            Err(ConfigError::MissingKey)
        );
        assert_eq!(
            config(DEFAULT_BASE_URL, Some("  ")).validate(),
            Err(ConfigError::MissingKey)
        );
        assert_eq!(config(DEFAULT_BASE_URL, Some("sk-x")).validate(), Ok(()));
        let mut demo = config(DEFAULT_BASE_URL, None);
        demo.model_source = ModelSource::Demo;
        assert_eq!(demo.validate(), Ok(()), "a scripted model needs no key");
        assert!(matches!(
            config("ftp://x", Some("k")).validate(),
            Err(ConfigError::BadBaseUrl(_))
        ));
    }

    #[test]
    fn key_never_shows_in_debug_output() {
        let c = config(DEFAULT_BASE_URL, Some("sk-secret-123"));
        let shown = format!("{c:?}");
        assert!(!shown.contains("sk-secret-123"), "{shown}");
        assert!(shown.contains("redacted"));
    }

    #[test]
    fn missing_key_message_names_the_variable_and_env_file() {
        let msg = ConfigError::MissingKey.to_string();
        assert!(
            msg.contains("OPENAI_API_KEY") && msg.contains(".env"),
            "{msg}"
        );
    }
}
