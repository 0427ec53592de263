//! Configuration: flags, environment (with `.env`) and `stepwise.toml` files
//! layered into one validated `Config`, and the model table.
//!
//! - [`flags`]: the clap command line ([`cli_docs`]: its completions and man
//!   page); [`file`](mod@file): finding and layering the files.
//! - [`settings`]: the table of layered settings (one row each), read through
//!   [`raw`] and checked against [`ranges`].
//! - [`layers`]: resolving flags > environment > files > defaults;
//!   [`report`]: `--print-config`.
//! - [`key`]: the API key; [`providers`]: the `--provider` presets;
//!   [`headers`]: the extra request headers of `[headers]`; [`validate`]: checks before any request; [`models`]:
//!   context windows and prices.
//! - [`guard`]: which values a project file may set before its folder is
//!   trusted; [`dotenv`]: the documented variables of `./.env`; [`trust`]:
//!   the folders the user trusted, and asking.
//!
//! What must stay true: every value passes `ranges` (and its row's reader)
//! whichever source it came from, so a `Config` only holds valid values; this
//! folder imports nothing from `agent`, `llm`, `tui`, `headless`, `setup` or
//! `audit` (only the leaf `tools::ToolSelector`); whoever runs a session builds
//! its policies from the checked lists here.

pub mod cli_docs;
pub mod dotenv;
pub mod file;
pub mod flags;
pub mod guard;
pub mod headers;
pub mod key;
pub mod layers;
pub mod mcp;
pub mod models;
pub mod providers;
pub mod ranges;
pub mod raw;
pub mod read;
pub mod report;
pub mod sandbox;
pub mod settings;
pub mod trust;
pub mod validate;

pub use flags::command;
pub use key::{API_KEY_VAR, ApiKey};
pub use layers::{resolve, resolve_with_files};
pub use providers::{Provider, WireApi};
pub use report::{Provenance, Resolved};
pub use validate::{ConfigError, is_local_url};

use crate::tool_id::ToolSelector;
use models::ModelTable;
use sandbox::SandboxSettings;
use std::path::PathBuf;
use std::time::Duration;

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";

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

/// How a task's changes reach the workspace (`--review`, `review` in
/// `stepwise.toml`; `--stage` is `--review staged`).
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
pub enum Review {
    /// Every write and test run is approved as it comes.
    #[default]
    Step,
    /// The task works in a stage; its whole changeset is reviewed once its
    /// tests have passed, and only then written.
    Staged,
}

/// Whether output is colored (`--color`); `auto` also honours `NO_COLOR`.
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
pub enum ColorChoice {
    /// Colors on a terminal, unless `NO_COLOR` is set (and not empty) or `TERM=dumb`.
    #[default]
    Auto,
    /// Always colored, even into a pipe or with `NO_COLOR`.
    Always,
    /// Never colored.
    Never,
}

/// The full-screen UI's palette (`--theme`).
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
pub enum ThemeChoice {
    /// Ask the terminal its background colour at start-up (dark if it does not answer).
    #[default]
    Auto,
    Dark,
    Light,
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
    /// The workspace was named with `--workspace`/`-C` (not the current folder by default).
    pub workspace_given: bool,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    pub max_steps: u32,
    pub test_timeout: Duration,
    pub protocol: Protocol,
    /// Step by step, or staged (see [`Review`]).
    pub review: Review,
    pub model_source: ModelSource,
    /// Retries of a failed model request (connection, timeout, 429, 5xx).
    pub max_retries: u32,
    /// The same call with the same result this many times in a row stops
    /// the task, with a note to the model at three (0: no loop detection).
    pub max_repeats: u32,
    /// Seconds the model server may send nothing before the request counts as broken.
    pub idle_timeout: Duration,
    /// Seconds a stream kept alive (SSE comments, pings) may go without a
    /// token of the reply; never shorter than `idle_timeout` in effect.
    pub token_timeout: Duration,
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
    /// Tools that "approve for the rest of the task" may never cover.
    pub no_auto_approve: Vec<ToolSelector>,
    /// Paths whose edits always ask, even after "approve for the rest of the task".
    pub no_auto_approve_paths: Vec<globset::Glob>,
    /// Colored output (`--color`), in `exec` and the full-screen UI.
    pub color: ColorChoice,
    /// How test runs are confined (the `[sandbox]` table).
    pub sandbox: SandboxSettings,
    /// Extra environment variables test runs may see (`test_env = [...]`).
    pub test_env: Vec<String>,
    /// Named test commands from `[test_commands]` (argument arrays), added to
    /// or replacing the ones found from the project's files.
    pub test_commands: Vec<(String, Vec<String>)>,
    /// A task given on the command line to the full-screen UI (`stepwise "TASK"`).
    pub task: Option<String>,
    /// Paths no tool may read, write, list or search, on top of the fixed deny list.
    pub deny_paths: Vec<globset::Glob>,
    /// Ring the bell / send a desktop notification when an approval waits
    /// while the terminal is not focused (`notify = false` turns it off).
    pub notify: bool,
    /// The full-screen UI's palette (`--theme`, `theme`).
    pub theme: ThemeChoice,
    /// The `--provider` preset: base URL (unless `base_url` is set), key
    /// variable and wire API.
    pub provider: Provider,
    /// Extra request headers from `[headers]` (checked names and values).
    pub headers: Vec<(String, String)>,
    /// Resume an earlier session of the workspace (`--continue`, `--resume`,
    /// `stepwise resume`) instead of starting a new one.
    pub resume: Option<ResumeFrom>,
    /// MCP servers to start with the session (the `[mcp]` table).
    pub mcp: mcp::McpSettings,
}

/// Which earlier session to resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeFrom {
    /// The newest one this user's stepwise wrote (`--continue`, `resume --last`).
    Newest,
    /// The transcript of this name (`--resume NAME`, `resume NAME`, the picker).
    Named(String),
    /// A session an editor was handed (its id is the transcript's name):
    /// resumed as `Named` when its transcript holds a checkpoint; a session
    /// never prompted (no checkpoint yet) goes on as an empty one in the
    /// same transcript, nothing of which is read back.
    Handed(String),
}

/// Where the session transcript goes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LogSetting {
    Off,
    #[default]
    InWorkspace,
    Dir(PathBuf),
}
