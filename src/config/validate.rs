//! Checks that can be made before any request: the workspace exists, the base
//! URL is http(s), and a key is present unless the server is local or the
//! model scripted. What must stay true: each problem is a `ConfigError` the
//! user can fix (exit code 2), and its message never shows the key.

use super::Config;

/// A configuration problem the user must fix (exit code 2).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// The variable the chosen provider reads its key from is not set.
    #[error(
        "{0} is not set: add `{0}=...` to .env in the current directory (or export it), or point --base-url at a local server"
    )]
    MissingKey(&'static str),
    #[error("--base-url {0:?} is not an http(s) URL")]
    BadBaseUrl(String),
    #[error("workspace folder {0} does not exist or is not a folder")]
    BadWorkspace(String),
    #[error(
        "--provider custom needs the server's address: give --base-url (or base_url in stepwise.toml, OPENAI_BASE_URL)"
    )]
    CustomWithoutBaseUrl,
}

impl Config {
    /// Check what can be checked before any request: URL shape, key presence, workspace.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !self.workspace.is_dir() {
            return Err(ConfigError::BadWorkspace(
                self.workspace.display().to_string(),
            ));
        }
        if self.base_url.is_empty() && self.provider == super::providers::Provider::Custom {
            return Err(ConfigError::CustomWithoutBaseUrl);
        }
        let local = is_local_url(&self.base_url)?;
        let key_var = self.provider.preset().key_var;
        if let Some(var) = key_var
            && self.api_key.is_none()
            && !local
            && !self.model_source.is_scripted()
        {
            return Err(ConfigError::MissingKey(var));
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
pub(crate) mod tests {
    use super::*;
    use crate::config::models::ModelTable;
    use crate::config::{ApiKey, ColorChoice, DEFAULT_BASE_URL, LogSetting, ModelSource, Protocol};
    use std::time::Duration;

    pub(crate) fn config(base_url: &str, key: Option<&str>) -> Config {
        Config {
            workspace: std::env::temp_dir(),
            workspace_given: true,
            test_commands: Vec::new(),
            task: None,
            resume: None,
            model: "m".into(),
            base_url: base_url.into(),
            api_key: key.and_then(ApiKey::new),
            max_steps: 20,
            test_timeout: Duration::from_secs(30),
            protocol: Protocol::Tools,
            review: crate::config::Review::Step,
            model_source: ModelSource::Http,
            max_retries: 4,
            max_repeats: 5,
            idle_timeout: Duration::from_secs(120),
            token_timeout: Duration::from_secs(600),
            log: LogSetting::InWorkspace,
            context_budget: 70,
            context_window: 32768,
            max_cost: None,
            models: ModelTable::builtin(),
            no_auto_approve: Vec::new(),
            no_auto_approve_paths: Vec::new(),
            color: ColorChoice::Auto,
            sandbox: Default::default(),
            test_env: Vec::new(),
            deny_paths: Vec::new(),
            notify: true,
            provider: Default::default(),
            headers: Vec::new(),
            mcp: Default::default(),
            theme: crate::config::ThemeChoice::Auto,
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
            Err(ConfigError::MissingKey("OPENAI_API_KEY"))
        );
        assert_eq!(
            config(DEFAULT_BASE_URL, Some("  ")).validate(),
            Err(ConfigError::MissingKey("OPENAI_API_KEY"))
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
        let msg = ConfigError::MissingKey("OPENAI_API_KEY").to_string();
        assert!(
            msg.contains("OPENAI_API_KEY") && msg.contains(".env"),
            "{msg}"
        );
    }
}
