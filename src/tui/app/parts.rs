//! The App's own facts, grouped by what reads them, so the App stays a
//! composition of a few parts: the header's figures (`TaskStatus`), what the
//! session learned (`SessionFacts`), how the terminal is used
//! (`TerminalState`), the lifecycle (`Lifecycle`) and the `@` picker
//! (`Picking`). Plain data: the App's methods change them.

use super::{TaskState, UndoRun};
use crate::llm::TokenUsage;
use crate::tools::ToolId;
use crate::tui::input::picker::{FileSource, Picker};
use crate::tui::render::theme::Look;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The header's figures.
#[derive(Debug)]
pub struct TaskStatus {
    pub model: String,
    pub workspace: String,
    pub state: TaskState,
    pub step: u32,
    pub max_steps: u32,
    pub task_tokens: TokenUsage,
    /// Project rule files the model follows (e.g. `AGENTS.md`).
    pub rules: Vec<String>,
    /// How test runs are confined, as the core reports it (empty: not told).
    pub sandbox: String,
    /// The stage tasks work in (`None`: step by step).
    pub stage: Option<String>,
    pub session_tokens: TokenUsage,
    /// Estimated cost in USD, when the model's prices are known.
    pub task_cost: Option<f64>,
    pub session_cost: Option<f64>,
    pub task_started: Option<Instant>,
    /// Duration of the last finished task.
    pub last_elapsed: Option<Duration>,
    /// Tools the user approved for the rest of the task.
    pub auto_approved: Vec<ToolId>,
    /// When the model request that failed is tried again (the header counts down).
    pub retry_until: Option<Instant>,
    /// When the model last sent a piece of its reply (see `liveness`).
    pub last_token: Option<Instant>,
    /// `stream_token_timeout`, when known.
    pub token_timeout: Option<Duration>,
    /// The task retried a request (if it then fails, `/continue` is offered).
    pub retried: bool,
}

impl TaskStatus {
    pub fn new(model: String, workspace: String) -> TaskStatus {
        TaskStatus {
            model,
            workspace,
            state: TaskState::Idle,
            step: 0,
            max_steps: 0,
            task_tokens: TokenUsage::default(),
            rules: Vec::new(),
            sandbox: String::new(),
            stage: None,
            session_tokens: TokenUsage::default(),
            task_cost: None,
            session_cost: None,
            task_started: None,
            last_elapsed: None,
            auto_approved: Vec::new(),
            retry_until: None,
            last_token: None,
            token_timeout: None,
            retried: false,
        }
    }
}

/// What the session learned that outlives a task.
#[derive(Debug)]
pub struct SessionFacts {
    /// How the last task ended (its finish line), for the exit summary.
    pub last_outcome: Option<String>,
    /// The files the session has changed, as the core's change log says
    /// (`SessionFiles`), for the exit summary.
    pub session_files: Vec<String>,
    /// The configured provider's key variable (`None`: it takes no key),
    /// which the hints for a refused key name.
    pub key_var: Option<&'static str>,
    /// The test run's timeout, shown at a `run_tests` prompt.
    pub test_timeout: Option<Duration>,
    /// A configuration problem that keeps tasks from running.
    pub config_error: Option<String>,
    /// The MCP servers as their last `McpServer` events described them (for `/mcp`).
    pub mcp: Vec<crate::mcp::ServerReport>,
    /// The agent stopped (reported once).
    pub agent_gone: bool,
    /// The auto-approved steps the conversation's last line reports.
    pub auto_run: Option<AutoRun>,
}

/// Consecutive steps of one tool run without asking: one line for them all.
#[derive(Debug)]
pub struct AutoRun {
    pub tool: ToolId,
    /// Each step's call (`run_tests unittest`).
    pub calls: Vec<String>,
    /// The line as shown (to tell it is still the conversation's last).
    pub text: String,
}

impl Default for SessionFacts {
    fn default() -> Self {
        SessionFacts {
            last_outcome: None,
            session_files: Vec::new(),
            key_var: Some(crate::config::API_KEY_VAR),
            test_timeout: None,
            config_error: None,
            mcp: Vec::new(),
            agent_gone: false,
            auto_run: None,
        }
    }
}

/// How the terminal is used.
#[derive(Debug)]
pub struct TerminalState {
    pub mouse_capture: bool,
    /// The terminal has the focus (as its focus reports say).
    pub focused: bool,
    /// Notify when an approval waits unfocused (`notify` in the configuration).
    pub notify: bool,
    /// The serial of the last request notified about (once per request).
    pub notified: u64,
    /// The palette (or no colour) each frame is painted with.
    pub look: Look,
}

impl Default for TerminalState {
    fn default() -> Self {
        TerminalState {
            mouse_capture: true,
            focused: true,
            notify: false,
            notified: 0,
            look: Look::default(),
        }
    }
}

/// Running, quitting, undoing.
#[derive(Debug, Default)]
pub struct Lifecycle {
    pub quit: bool,
    /// Until when a second Ctrl+C / Ctrl+D quits (see `quit`).
    pub quit_confirm: Option<Instant>,
    pub cancel: Option<CancellationToken>,
    /// An `/undo` is waiting for the core.
    pub undo: Option<UndoRun>,
}

/// The `@` file picker.
#[derive(Debug, Default)]
pub struct Picking {
    /// The picker, while open.
    pub picker: Option<Picker>,
    /// Where the picker lists files from (`None`: no workspace to list).
    pub file_source: Option<FileSource>,
}
