//! Layering the configuration: flags beat environment beat `stepwise.toml`
//! files beat defaults, using clap's value sources to tell a default from an
//! explicit value; and the `--print-config` report of where each value came from.

use crate::agent::scopes::ScopePolicy;
use crate::config::flags::Options;
use crate::config::{API_KEY_VAR, Config};
use crate::config::file as config_file;
use clap::ArgMatches;
use clap::parser::ValueSource;
use std::path::PathBuf;
use std::time::Duration;

/// One line of `--print-config`: a setting, its value, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    pub name: &'static str,
    pub value: String,
    pub source: String,
}

/// The configuration after layering flags, environment, config files and defaults.
pub struct Resolved {
    pub config: Config,
    pub provenance: Vec<Provenance>,
}

impl Resolved {
    /// The `--print-config` report. The key is shown only as set or unset.
    pub fn report(&self) -> String {
        let width = self
            .provenance
            .iter()
            .map(|p| p.name.len())
            .max()
            .unwrap_or(0);
        let value_width = self
            .provenance
            .iter()
            .map(|p| p.value.chars().count())
            .max()
            .unwrap_or(0)
            .min(48);
        self.provenance
            .iter()
            .map(|p| {
                format!(
                    "{:width$}  {:value_width$}  ({})\n",
                    p.name, p.value, p.source
                )
            })
            .collect()
    }
}

fn source_of(matches: &ArgMatches, id: &str, env: Option<&str>) -> String {
    match matches.value_source(id) {
        Some(ValueSource::CommandLine) => "flag".into(),
        Some(ValueSource::EnvVariable) => format!("env {}", env.unwrap_or("")),
        _ => "default".into(),
    }
}

/// Whether a setting was left at its default (so a config file may set it).
fn defaulted(matches: &ArgMatches, id: &str) -> bool {
    !matches!(
        matches.value_source(id),
        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
    )
}

/// Layer the configuration: flags beat environment beat config files beat defaults.
pub fn resolve(matches: &ArgMatches, options: &Options) -> Result<Resolved, String> {
    resolve_with_files(
        matches,
        options,
        &config_file::candidate_paths(&options.workspace),
    )
}

/// `resolve` with explicit config-file paths (for tests).
pub fn resolve_with_files(
    matches: &ArgMatches,
    options: &Options,
    files: &[PathBuf],
) -> Result<Resolved, String> {
    let loaded = config_file::load(files)?;
    let file = &loaded.config;
    let mut provenance = Vec::new();
    let mut pick =
        |name: &'static str, env: Option<&str>, flag: String, from_file: Option<String>| {
            let (value, source) = match from_file {
                Some(v) if defaulted(matches, name) => {
                    let origin = loaded.origin.get(name).map(|p| p.display().to_string());
                    (v, format!("file {}", origin.unwrap_or_default()))
                }
                _ => (flag, source_of(matches, name, env)),
            };
            provenance.push(Provenance {
                name,
                value: value.clone(),
                source,
            });
            value
        };
    let mut config = options.to_config();
    config.model = pick(
        "model",
        Some("STEPWISE_MODEL"),
        config.model.clone(),
        file.model.clone(),
    );
    config.base_url = pick(
        "base_url",
        Some("OPENAI_BASE_URL"),
        config.base_url.clone(),
        file.base_url.clone(),
    );
    let number = |v: &str| v.parse::<u64>().map_err(|e| format!("{v}: {e}"));
    config.max_steps = number(&pick(
        "max_steps",
        None,
        config.max_steps.to_string(),
        file.max_steps.map(|v| v.to_string()),
    ))? as u32;
    config.test_timeout = Duration::from_secs(number(&pick(
        "test_timeout",
        None,
        config.test_timeout.as_secs().to_string(),
        file.test_timeout.map(|v| v.to_string()),
    ))?);
    config.max_retries = number(&pick(
        "max_retries",
        None,
        config.max_retries.to_string(),
        file.max_retries.map(|v| v.to_string()),
    ))? as u32;
    config.idle_timeout = Duration::from_secs(number(&pick(
        "stream_idle_timeout",
        None,
        config.idle_timeout.as_secs().to_string(),
        file.stream_idle_timeout.map(|v| v.to_string()),
    ))?);
    config.context_budget = number(&pick(
        "context_budget",
        None,
        config.context_budget.to_string(),
        file.context_budget.map(|v| v.to_string()),
    ))?
    .clamp(10, 95) as u8;
    if let Some(p) = file.protocol.filter(|_| defaulted(matches, "protocol")) {
        config.protocol = p;
    }
    let protocol_source = if defaulted(matches, "protocol") && file.protocol.is_some() {
        format!(
            "file {}",
            loaded
                .origin
                .get("protocol")
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        )
    } else {
        source_of(matches, "protocol", None)
    };
    provenance.push(Provenance {
        name: "protocol",
        value: format!("{:?}", config.protocol).to_lowercase(),
        source: protocol_source,
    });
    if options.max_cost.is_none() {
        config.max_cost = file.max_cost;
    }
    provenance.push(Provenance {
        name: "max_cost",
        value: config
            .max_cost
            .map_or("none".into(), |c| format!("${c:.2}")),
        source: if options.max_cost.is_some() {
            "flag".into()
        } else if file.max_cost.is_some() {
            "file".into()
        } else {
            "default".into()
        },
    });
    config.models.merge(&file.models);
    config.scope_policy = ScopePolicy::new(&file.no_auto_approve, &file.no_auto_approve_paths)?;
    provenance.push(Provenance {
        name: "no_auto_approve",
        value: format!(
            "{:?} {:?}",
            file.no_auto_approve, file.no_auto_approve_paths
        ),
        source: if file.no_auto_approve.is_empty() && file.no_auto_approve_paths.is_empty() {
            "default".into()
        } else {
            "file".into()
        },
    });
    let (window, window_source) = match (options.context_window, file.context_window) {
        (Some(w), _) => (w, "flag".to_string()),
        (None, Some(w)) => (w, "file".to_string()),
        (None, None) => {
            let known = config
                .models
                .lookup(&config.model)
                .and_then(|m| m.context_window);
            (
                config.models.context_window(&config.model),
                if known.is_some() {
                    "model table".into()
                } else {
                    "default for unknown models".into()
                },
            )
        }
    };
    config.context_window = window;
    provenance.push(Provenance {
        name: "context_window",
        value: window.to_string(),
        source: window_source,
    });
    provenance.push(Provenance {
        name: "workspace",
        value: config.workspace.display().to_string(),
        source: source_of(matches, "workspace", None),
    });
    provenance.push(Provenance {
        name: "api_key",
        value: if config.api_key.is_some() {
            "set".into()
        } else {
            "unset".into()
        },
        source: format!("env {API_KEY_VAR} (or .env)"),
    });
    provenance.push(Provenance {
        name: "config_files",
        value: if loaded.files.is_empty() {
            "none".into()
        } else {
            loaded
                .files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        },
        source: "looked for: ".to_string()
            + &files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
    });
    Ok(Resolved { config, provenance })
}
