//! The settings table: one row per layered setting, saying what it is called
//! in each source (flag, environment variable, `stepwise.toml` key), how its
//! value is read and checked, where it goes in `Config`, and how
//! `--print-config` shows it. A new setting is one row here, its clap flag in
//! `flags` (if it has one) and its field in `Config` (whose starting value in
//! `layers::flag_only` the compiler then asks for).
//!
//! What must stay true: every value, whichever source it came from, goes
//! through its row's `set` (and so through `ranges`); rows run in this order,
//! and a computed default may read only rows above it. Every row, and every
//! variable `./.env` may set, says in its `guard` whether a project file
//! (the workspace's `.stepwise/stepwise.toml`, `./.env`) may set it before
//! the user trusts that folder: this table is the one place that rule lives.

pub use super::guard::Guard;
use super::guard::{WHERE_REQUESTS_GO, split_prices};
use super::raw::{self, Raw};
use super::sandbox::SandboxSettings;
use super::{ApiKey, Config, ranges};
use std::time::Duration;

/// What the model row decides (another model costs more or sends data elsewhere).
const WHICH_MODEL: &str = "which model is asked, and so what a task costs";

/// One layered setting.
pub struct Setting {
    /// Its key in `stepwise.toml`, and its name in `--print-config`.
    pub key: &'static str,
    /// The clap id of its flag, if it has one.
    pub flag: Option<&'static str>,
    /// The environment variable its flag reads (set on the flag by `flags::command`).
    pub env: Option<&'static str>,
    /// Read and check a value from any source, and store it in the configuration.
    pub set: fn(&mut Config, Raw<'_>) -> Result<(), String>,
    /// What applies when no source sets it.
    pub fallback: Fallback,
    /// Its `--print-config` line.
    pub shown: Shown,
    /// Whether a project file may set it in a folder the user has not trusted.
    pub guard: Guard,
}

/// What applies when neither flag, environment nor file sets a setting.
pub enum Fallback {
    /// The flag's default value, read like any other value.
    FlagDefault,
    /// The value `Config` starts with (empty lists, the built-in model table, no limit).
    Initial,
    /// Computed from the rows above; returns how `--print-config` names it.
    Computed(fn(&mut Config) -> &'static str),
}

/// How a setting shows in `--print-config`.
pub enum Shown {
    /// A line of its own; a file source names the file.
    Line(fn(&Config) -> String),
    /// A line of its own; a file source shows as just `file`, as it always has
    /// for these settings.
    LineFileUnnamed(fn(&Config) -> String),
    /// Part of the line of the row above, which then counts as from a file if this is.
    WithAbove,
    /// No line (the model table; its effect shows in `context_window`).
    Hidden,
}

/// Store a checked value.
fn put<T>(slot: &mut T, value: Result<T, String>) -> Result<(), String> {
    *slot = value?;
    Ok(())
}

/// Every layered setting, in `--print-config` order.
pub const SETTINGS: &[Setting] = &[
    // Above `base_url`, whose default it decides.
    Setting {
        key: "provider",
        flag: Some("provider"),
        env: Some("STEPWISE_PROVIDER"),
        set: |c, raw| {
            c.provider = raw.choice()?;
            // Only the chosen provider's variable: another provider's key is never sent.
            c.api_key = c.provider.preset().key_var.and_then(ApiKey::from_env_var);
            Ok(())
        },
        fallback: Fallback::FlagDefault,
        shown: Shown::Line(|c| c.provider.name().to_string()),
        // It picks which key is read and where it is sent.
        guard: Guard::Trusted(WHERE_REQUESTS_GO),
    },
    // Below `provider`, whose default model it takes.
    Setting {
        key: "model",
        flag: Some("model"),
        env: Some("STEPWISE_MODEL"),
        set: |c, raw| put(&mut c.model, raw.text()),
        fallback: Fallback::Computed(|c| {
            c.model = c.provider.preset().model.to_string();
            "the provider's default"
        }),
        shown: Shown::Line(|c| c.model.clone()),
        guard: Guard::Trusted(WHICH_MODEL),
    },
    Setting {
        key: "base_url",
        flag: Some("base_url"),
        env: Some("OPENAI_BASE_URL"),
        set: |c, raw| put(&mut c.base_url, raw.text()),
        fallback: Fallback::Computed(|c| {
            // A custom server has no address of its own: it must be given.
            if c.provider == super::providers::Provider::Custom {
                c.base_url = String::new();
                return "not set";
            }
            c.base_url = c.provider.preset().base_url.to_string();
            "provider preset"
        }),
        shown: Shown::Line(|c| c.base_url.clone()),
        guard: Guard::Trusted(WHERE_REQUESTS_GO),
    },
    Setting {
        key: "max_steps",
        flag: Some("max_steps"),
        env: None,
        set: |c, raw| put(&mut c.max_steps, raw.whole(ranges::MAX_STEPS)),
        fallback: Fallback::FlagDefault,
        shown: Shown::Line(|c| c.max_steps.to_string()),
        guard: Guard::Limit(|with, without| with.max_steps <= without.max_steps),
    },
    Setting {
        key: "test_timeout",
        flag: Some("test_timeout"),
        env: None,
        set: |c, raw| {
            let secs = raw.whole(ranges::TEST_TIMEOUT);
            put(&mut c.test_timeout, secs.map(Duration::from_secs))
        },
        fallback: Fallback::FlagDefault,
        shown: Shown::Line(|c| c.test_timeout.as_secs().to_string()),
        guard: Guard::Limit(|with, without| with.test_timeout <= without.test_timeout),
    },
    Setting {
        key: "max_retries",
        flag: Some("max_retries"),
        env: None,
        set: |c, raw| put(&mut c.max_retries, raw.whole(ranges::MAX_RETRIES)),
        fallback: Fallback::FlagDefault,
        shown: Shown::Line(|c| c.max_retries.to_string()),
        guard: Guard::Limit(|with, without| with.max_retries <= without.max_retries),
    },
    Setting {
        key: "max_repeats",
        flag: Some("max_repeats"),
        env: None,
        set: |c, raw| put(&mut c.max_repeats, raw.whole(ranges::MAX_REPEATS)),
        fallback: Fallback::FlagDefault,
        shown: Shown::Line(|c| c.max_repeats.to_string()),
        // 0 turns the stop off: the loosest of all.
        guard: Guard::Limit(|with, without| {
            let bound = |n: u32| if n == 0 { u32::MAX } else { n };
            bound(with.max_repeats) <= bound(without.max_repeats)
        }),
    },
    Setting {
        key: "stream_idle_timeout",
        flag: Some("stream_idle_timeout"),
        env: None,
        set: |c, raw| {
            let secs = raw.whole(ranges::STREAM_IDLE_TIMEOUT);
            put(&mut c.idle_timeout, secs.map(Duration::from_secs))
        },
        fallback: Fallback::FlagDefault,
        shown: Shown::Line(|c| c.idle_timeout.as_secs().to_string()),
        guard: Guard::Open,
    },
    Setting {
        key: "stream_token_timeout",
        flag: Some("stream_token_timeout"),
        env: None,
        set: |c, raw| {
            let secs = raw.whole(ranges::STREAM_TOKEN_TIMEOUT);
            put(&mut c.token_timeout, secs.map(Duration::from_secs))
        },
        fallback: Fallback::FlagDefault,
        shown: Shown::Line(|c| c.token_timeout.as_secs().to_string()),
        guard: Guard::Open,
    },
    Setting {
        key: "context_budget",
        flag: Some("context_budget"),
        env: None,
        set: |c, raw| put(&mut c.context_budget, raw.whole(ranges::CONTEXT_BUDGET)),
        fallback: Fallback::FlagDefault,
        shown: Shown::Line(|c| c.context_budget.to_string()),
        guard: Guard::Limit(|with, without| with.context_budget <= without.context_budget),
    },
    Setting {
        key: "protocol",
        flag: Some("protocol"),
        env: None,
        set: |c, raw| put(&mut c.protocol, raw.choice()),
        fallback: Fallback::FlagDefault,
        shown: Shown::Line(|c| format!("{:?}", c.protocol).to_lowercase()),
        guard: Guard::Open,
    },
    Setting {
        key: "review",
        flag: Some("review"),
        env: None,
        set: |c, raw| put(&mut c.review, raw.choice()),
        fallback: Fallback::FlagDefault,
        shown: Shown::Line(|c| format!("{:?}", c.review).to_lowercase()),
        // Staged runs the tests without asking: a project may not decide that.
        guard: Guard::Trusted("that test runs start without asking (staged tasks)"),
    },
    Setting {
        key: "max_cost",
        flag: Some("max_cost"),
        env: None,
        set: |c, raw| put(&mut c.max_cost, raw.amount(ranges::MAX_COST).map(Some)),
        fallback: Fallback::Initial,
        shown: Shown::LineFileUnnamed(|c| c.max_cost.map_or("none".into(), |c| format!("${c:.2}"))),
        guard: Guard::Limit(|with, without| match (with.max_cost, without.max_cost) {
            (Some(w), Some(wo)) => w <= wo,
            (Some(_), None) => true,
            (None, other) => other.is_none(),
        }),
    },
    Setting {
        key: "no_auto_approve",
        flag: None,
        env: None,
        set: |c, raw| put(&mut c.no_auto_approve, raw.tools()),
        fallback: Fallback::Initial,
        shown: Shown::LineFileUnnamed(|c| {
            let tools: Vec<_> = c.no_auto_approve.iter().map(|t| t.to_string()).collect();
            let paths: Vec<_> = c.no_auto_approve_paths.iter().map(|g| g.glob()).collect();
            format!("{tools:?} {paths:?}")
        }),
        guard: Guard::Open,
    },
    Setting {
        key: "no_auto_approve_paths",
        flag: None,
        env: None,
        set: |c, raw| put(&mut c.no_auto_approve_paths, raw.globs()),
        fallback: Fallback::Initial,
        shown: Shown::WithAbove,
        guard: Guard::Open,
    },
    Setting {
        key: "deny_paths",
        flag: None,
        env: None,
        set: |c, raw| put(&mut c.deny_paths, raw.globs()),
        fallback: Fallback::Initial,
        shown: Shown::LineFileUnnamed(|c| {
            let paths: Vec<_> = c.deny_paths.iter().map(|g| g.glob()).collect();
            format!("{paths:?}")
        }),
        // It only takes files away from the tools, and a project file's list adds
        // to the user's (`file::RESTRICTIONS`), so it is open to project files.
        guard: Guard::Open,
    },
    Setting {
        key: "models",
        flag: None,
        env: None,
        set: |c, raw| {
            c.models.merge(&raw.table()?);
            Ok(())
        },
        fallback: Fallback::Initial,
        shown: Shown::Hidden,
        guard: Guard::Part(
            "what a task is counted as costing, and how much of the conversation is sent",
            split_prices,
        ),
    },
    Setting {
        key: "context_window",
        flag: Some("context_window"),
        env: None,
        set: |c, raw| put(&mut c.context_window, raw.whole(ranges::CONTEXT_WINDOW)),
        fallback: Fallback::Computed(|c| {
            let known = c.models.lookup(&c.model).and_then(|m| m.context_window);
            c.context_window = c.models.context_window(&c.model);
            if known.is_some() {
                "model table"
            } else {
                "default for unknown models"
            }
        }),
        shown: Shown::LineFileUnnamed(|c| c.context_window.to_string()),
        guard: Guard::Limit(|with, without| with.context_window <= without.context_window),
    },
    Setting {
        key: "color",
        flag: Some("color"),
        env: None,
        set: |c, raw| put(&mut c.color, raw.choice()),
        fallback: Fallback::FlagDefault,
        shown: Shown::Line(|c| format!("{:?}", c.color).to_lowercase()),
        // Only how stepwise's own output looks.
        guard: Guard::Open,
    },
    Setting {
        key: "sandbox",
        flag: None,
        env: None,
        set: |c, raw| match raw {
            Raw::Toml(value) => put(&mut c.sandbox, SandboxSettings::from_toml(value)),
            Raw::Text(_) => Err("is a table (set it in stepwise.toml)".into()),
        },
        fallback: Fallback::Initial,
        shown: Shown::LineFileUnnamed(|c| c.sandbox.shown()),
        // A test run could plant `mode = "off"` or `network = true` for the next session.
        guard: Guard::Trusted("how test runs are confined"),
    },
    Setting {
        key: "test_env",
        flag: None,
        env: None,
        set: |c, raw| put(&mut c.test_env, raw.strings()),
        fallback: Fallback::Initial,
        shown: Shown::LineFileUnnamed(|c| format!("{:?}", c.test_env)),
        // A project file listing a secret's name would hand it to its own tests.
        guard: Guard::Trusted("which variables test runs see"),
    },
    Setting {
        key: "test_commands",
        flag: None,
        env: None,
        set: |c, raw| put(&mut c.test_commands, raw.test_commands()),
        fallback: Fallback::Initial,
        shown: Shown::LineFileUnnamed(|c| {
            let names: Vec<_> = c
                .test_commands
                .iter()
                .map(|(n, argv)| format!("{n} = {argv:?}"))
                .collect();
            if names.is_empty() {
                "none (found from the project's files)".into()
            } else {
                names.join(", ")
            }
        }),
        // What runs on the user's machine.
        guard: Guard::Trusted("which commands run as tests"),
    },
    Setting {
        key: "notify",
        flag: None,
        env: None,
        set: |c, raw| put(&mut c.notify, raw.boolean()),
        fallback: Fallback::Initial,
        shown: Shown::Line(|c| c.notify.to_string()),
        // Only whether the terminal is told that an approval waits.
        guard: Guard::Open,
    },
    Setting {
        key: "headers",
        flag: None,
        env: None,
        set: |c, raw| match raw {
            Raw::Toml(value) => put(&mut c.headers, super::headers::read(value)),
            Raw::Text(_) => Err("is a table (set it in stepwise.toml)".into()),
        },
        fallback: Fallback::Initial,
        shown: Shown::LineFileUnnamed(|c| super::headers::shown(&c.headers)),
        // A header goes wherever the key goes: a stranger's file could add one that leaks.
        guard: Guard::Trusted("which headers are sent with every request"),
    },
    Setting {
        key: "mcp",
        flag: None,
        env: None,
        set: |c, raw| match raw {
            Raw::Toml(value) => put(&mut c.mcp, super::mcp::McpSettings::from_toml(value)),
            Raw::Text(_) => Err("is a table (set it in stepwise.toml)".into()),
        },
        fallback: Fallback::Initial,
        shown: Shown::LineFileUnnamed(|c| c.mcp.shown()),
        // Each server is a program started on the user's machine.
        guard: Guard::Trusted("which programs run as MCP servers"),
    },
    Setting {
        key: "theme",
        flag: Some("theme"),
        env: None,
        set: |c, raw| put(&mut c.theme, raw.choice()),
        fallback: Fallback::FlagDefault,
        shown: Shown::Line(|c| format!("{:?}", c.theme).to_lowercase()),
        // Only how the full-screen UI looks.
        guard: Guard::Open,
    },
];

/// The row of a `stepwise.toml` key.
pub fn by_key(key: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.key == key)
}

/// Every `stepwise.toml` key, for error messages.
pub fn keys() -> String {
    let keys: Vec<_> = SETTINGS.iter().map(|s| s.key).collect();
    keys.join(", ")
}

/// `key = value`, as a file would have it, for error messages.
pub fn assignment(key: &str, value: &toml::Value) -> String {
    format!("{key} = {}", raw::show(value))
}

/// The guard of a variable `./.env` may set, or `None` for one it may not.
pub fn env_guard(name: &str) -> Option<Guard> {
    let row = SETTINGS.iter().find(|s| s.env == Some(name));
    row.map(|s| s.guard).or_else(|| {
        super::guard::ENV_ONLY
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.guard)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_redirects_or_runs_is_guarded_and_the_rest_is_open() {
        let guarded = |key| by_key(key).and_then(|s| s.guard.decides());
        assert_eq!(guarded("base_url"), Some(WHERE_REQUESTS_GO));
        assert!(guarded("models").is_some());
        // Another model costs more or sends the code elsewhere.
        assert_eq!(guarded("model"), Some(WHICH_MODEL));
        // Staged tasks run tests without asking: only a trusted folder says so.
        assert!(guarded("review").is_some());
        // Limits: a project file may only make them stricter.
        for limit in [
            "max_steps",
            "test_timeout",
            "max_cost",
            "max_retries",
            "context_budget",
            "context_window",
            "max_repeats",
        ] {
            let guard = by_key(limit).map(|s| s.guard);
            assert!(matches!(guard, Some(Guard::Limit(_))), "{limit}");
        }
        for open in ["no_auto_approve", "deny_paths", "protocol", "color"] {
            assert_eq!(guarded(open), None, "{open}");
        }
        for var in [
            "OPENAI_BASE_URL",
            "STEPWISE_PYTHON",
            "HTTPS_PROXY",
            "no_proxy",
        ] {
            assert!(env_guard(var).and_then(|g| g.decides()).is_some(), "{var}");
        }
        assert!(matches!(env_guard("OPENAI_API_KEY"), Some(Guard::Open)));
        assert!(env_guard("LD_PRELOAD").is_none() && env_guard("PATH").is_none());
    }
}
