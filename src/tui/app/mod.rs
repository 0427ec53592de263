//! The UI state machine. `update(Msg)` is the only way in: terminal events
//! (routed by `input`), core events (routed by `agent`) and the editor's
//! result. Approval decisions go out through the requests' replies and
//! everything else the run loop must do comes out as `Effect`s. Nothing here
//! touches the terminal. The fields are private to the UI: outside it, the
//! App is read through `inspect` and changed only through messages.

mod agent;
mod commands;
mod exit_summary;
mod grammars;
mod inspect;
mod keys;
mod layers;
mod liveness;
mod look;
mod mcp;
mod notify;
mod picking;
mod prompt;
mod quit;
pub(in crate::tui) mod record;
mod restored;
mod task;
mod update;

pub use layers::{Handled, Layers, Overlay};
pub use update::Msg;

use crate::agent::AgentCommand;
use crate::llm::TokenUsage;
use crate::tools::ToolId;
use crate::tui::approval::queue::Approvals;
use crate::tui::input::input_box::InputBox;
use crate::tui::panes::conversation::Conversation;
use crate::tui::panes::diff::live::LivePreviews;
use crate::tui::panes::diff::view::DiffView;
use crate::tui::panes::line_kind::Kind;
use crate::tui::panes::tool_calls::{RowStatus, ToolCalls};
use crate::tui::render::layout::Panes;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// What the task is doing, for the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    Idle,
    Thinking,
    AwaitingApproval,
    RunningTests,
    /// Carrying out an approved or read-only tool call.
    Running,
    Interrupting,
    Done,
    Failed,
    Interrupted,
}

impl TaskState {
    pub fn label(self) -> &'static str {
        match self {
            TaskState::Idle => "idle",
            TaskState::Thinking => "thinking",
            TaskState::AwaitingApproval => "awaiting approval",
            TaskState::RunningTests => "running tests",
            TaskState::Running => "working",
            TaskState::Interrupting => "interrupting",
            TaskState::Done => "done",
            TaskState::Failed => "failed",
            TaskState::Interrupted => "interrupted",
        }
    }
}

/// Which pane the arrows and PgUp/PgDn act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Input,
    Conversation,
    ToolCalls,
    Diff,
}

/// What the run loop must do on the App's behalf.
#[derive(Debug)]
pub enum Effect {
    /// Send this command to the core (a task, `/continue`, `/diff`, `/undo`,
    /// `/compact`, `/clear`, `/revoke`, `/model`).
    Agent(AgentCommand),
    /// Open the proposal of approval `serial` for `path` in the user's editor.
    EditProposal {
        serial: u64,
        path: String,
        content: String,
    },
    SetMouseCapture(bool),
    Quit,
    /// Ring the bell / notify the desktop with this (sanitized) line.
    Notify(String),
    /// List the workspace's files for the `@` picker, off the UI thread
    /// (the answer comes back as `Msg::Files`).
    ListFiles(crate::tui::input::picker::FileSource),
    /// Make `lang`'s grammar ready off the UI thread, compiled by colouring
    /// `sample` (the answer comes back as `Msg::GrammarReady`).
    WarmGrammar {
        lang: String,
        sample: Vec<String>,
    },
}

/// An `/undo` on its way: the state to go back to, and whether it was declined.
#[derive(Debug, Clone, Copy)]
pub struct UndoRun {
    pub before: TaskState,
    pub declined: bool,
}

pub struct App {
    model: String,
    workspace: String,
    state: TaskState,
    step: u32,
    max_steps: u32,
    task_tokens: TokenUsage,
    /// Project rule files the model follows (e.g. `AGENTS.md`).
    rules: Vec<String>,
    /// How test runs are confined, as the core reports it (empty: not told).
    sandbox: String,
    session_tokens: TokenUsage,
    /// Estimated cost in USD, when the model's prices are known.
    task_cost: Option<f64>,
    session_cost: Option<f64>,
    /// The clock as of the last event; the run loop advances it.
    now: Instant,
    task_started: Option<Instant>,
    /// Duration of the last finished task.
    last_elapsed: Option<Duration>,
    /// Tools the user approved for the rest of the task.
    auto_approved: Vec<ToolId>,
    pub(in crate::tui) conversation: Conversation,
    pub(in crate::tui) calls: ToolCalls,
    pub(in crate::tui) diff: DiffView,
    pub(in crate::tui) live: LivePreviews,
    pub(in crate::tui) approvals: Approvals,
    pub(in crate::tui) input: InputBox,
    pub(in crate::tui) focus: Focus,
    /// When a key last went into the input as text (prompts wait while the
    /// user is composing, see `App::composing`).
    pub(in crate::tui) last_typed: Option<Instant>,
    /// The overlays over the panes, the top one first to get a key.
    pub(in crate::tui) layers: Layers,
    pub(in crate::tui) mouse_capture: bool,
    /// The terminal has the focus (as its focus reports say).
    pub(in crate::tui) focused: bool,
    /// Notify when an approval waits unfocused (`notify` in the configuration).
    notify: bool,
    /// The serial of the last request notified about (once per request).
    notified: u64,
    /// The palette (or no colour) each frame is painted with.
    look: crate::tui::render::theme::Look,
    /// An `/undo` is waiting for the core.
    undo: Option<UndoRun>,
    /// When the model request that failed is tried again (the header counts down).
    retry_until: Option<Instant>,
    /// When the model last sent a piece of its reply (see `liveness`).
    last_token: Option<Instant>,
    /// `stream_token_timeout`, when known.
    token_timeout: Option<Duration>,
    /// The task retried a request (if it then fails, `/continue` is offered).
    retried: bool,
    /// How the last task ended (its finish line), for the exit summary.
    last_outcome: Option<String>,
    /// The files the session has changed, as the core's change log says
    /// (`SessionFiles`), for the exit summary.
    session_files: Vec<String>,
    /// The configured provider's key variable (`None`: it takes no key),
    /// which the hints for a refused key name.
    key_var: Option<&'static str>,
    /// The test run's timeout, shown at a `run_tests` prompt.
    test_timeout: Option<Duration>,
    /// A configuration problem that keeps tasks from running.
    config_error: Option<String>,
    /// A one-off message shown above the input until the next key.
    flash: Option<String>,
    /// Pane rectangles of the last layout (for mouse hits and page sizes).
    pub(in crate::tui) panes: Panes,
    quit: bool,
    /// Until when a second Ctrl+C / Ctrl+D quits (see `quit`).
    quit_confirm: Option<Instant>,
    /// The agent stopped (reported once).
    agent_gone: bool,
    cancel: Option<CancellationToken>,
    effects: Vec<Effect>,
    /// The `@` file picker, while open.
    pub(in crate::tui) picker: Option<crate::tui::input::picker::Picker>,
    /// Where the picker lists files from (`None`: no workspace to list).
    pub(in crate::tui) file_source: Option<crate::tui::input::picker::FileSource>,
    /// The MCP servers as their last `McpServer` events described them (for `/mcp`).
    mcp: Vec<crate::mcp::ServerReport>,
}

impl App {
    pub fn new(model: impl Into<String>, workspace: impl Into<String>) -> Self {
        App {
            model: model.into(),
            workspace: workspace.into(),
            state: TaskState::Idle,
            step: 0,
            max_steps: 0,
            task_tokens: TokenUsage::default(),
            rules: Vec::new(),
            sandbox: String::new(),
            session_tokens: TokenUsage::default(),
            task_cost: None,
            session_cost: None,
            now: Instant::now(),
            task_started: None,
            last_elapsed: None,
            auto_approved: Vec::new(),
            conversation: Conversation::new(),
            calls: ToolCalls::default(),
            diff: DiffView::default(),
            live: LivePreviews::default(),
            approvals: Approvals::default(),
            input: InputBox::new(),
            focus: Focus::Input,
            last_typed: None,
            layers: Layers::default(),
            mouse_capture: true,
            focused: true,
            notify: false,
            notified: 0,
            look: Default::default(),
            undo: None,
            retry_until: None,
            last_token: None,
            token_timeout: None,
            retried: false,
            last_outcome: None,
            session_files: Vec::new(),
            key_var: Some(crate::config::API_KEY_VAR),
            test_timeout: None,
            config_error: None,
            flash: None,
            panes: Panes::default(),
            quit: false,
            quit_confirm: None,
            agent_gone: false,
            cancel: None,
            effects: Vec::new(),
            picker: None,
            file_source: None,
            mcp: Vec::new(),
        }
    }

    /// The input's history from earlier sessions (oldest first).
    pub fn set_history(&mut self, entries: Vec<String>) {
        self.input.set_history(entries);
    }

    /// The configured provider's key variable, for the words about keys.
    pub fn set_key_var(&mut self, var: Option<&'static str>) {
        self.key_var = var;
    }

    /// The first screen of a newcomer without a key: what to set, for the
    /// configured provider (`var`), and the ways to go on without one.
    pub fn welcome_without_key(&mut self, provider: &str, var: &str) {
        let (value, env) = match var {
            crate::config::API_KEY_VAR => (
                "sk-...",
                "optionally also `OPENAI_BASE_URL=...` and `STEPWISE_MODEL=...`; see `.env.example`",
            ),
            _ => ("...", "optionally also `STEPWISE_MODEL=...`"),
        };
        let text = format!(
            "Welcome to stepwise. No API key is set for provider {provider}, so no model can be reached yet. Pick one:
  1. Put `{var}={value}` in a `.env` file in this folder ({env}), then start stepwise again.
  2. Try it without a key: `stepwise --demo` plays a scripted model on a copy of the workspace.
  3. Use a local server, which needs no key, e.g. Ollama: `stepwise --base-url http://localhost:11434/v1 --model qwen2.5-coder`.
Press Ctrl+C to quit."
        );
        self.notice(&text);
    }

    /// Show a note in the conversation (e.g. that this is a scripted demo).
    pub fn notice(&mut self, text: &str) {
        self.conversation.push_entry(Kind::Notice, text);
    }

    /// The project rule files the model follows, for the header.
    pub fn set_rules(&mut self, files: Vec<String>) {
        self.rules = files;
    }

    /// The timeout a test run gets (from the configuration), for its prompt.
    pub fn set_test_timeout(&mut self, timeout: Duration) {
        self.test_timeout = Some(timeout);
    }

    /// Show a configuration problem; tasks are refused until it is fixed.
    pub fn set_config_error(&mut self, message: impl Into<String>) {
        let message = message.into();
        self.conversation
            .push_entry(Kind::Error, &format!("Configuration problem: {message}"));
        self.config_error = Some(message);
    }

    /// Show a one-off message above the input until the next key. The only
    /// way a message is shown.
    pub(in crate::tui) fn show_flash(&mut self, text: impl Into<String>) {
        self.flash = Some(text.into());
    }

    /// A key was pressed: the message has been seen.
    pub(in crate::tui) fn clear_flash(&mut self) {
        self.flash = None;
    }

    /// Everything the run loop must do, oldest first.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        self.queue_warm_ups();
        std::mem::take(&mut self.effects)
    }

    pub(in crate::tui) fn effect(&mut self, effect: Effect) {
        self.effects.push(effect);
    }

    /// A task is running (submitted and not yet finished).
    pub fn is_running(&self) -> bool {
        self.cancel.is_some()
    }

    /// The token that interrupts the running task.
    pub fn cancel_token(&self) -> Option<&CancellationToken> {
        self.cancel.as_ref()
    }

    /// Time spent on the current (or last) task.
    pub fn elapsed(&self) -> Duration {
        match (self.task_started, self.last_elapsed) {
            (Some(start), None) => self.now.saturating_duration_since(start),
            (_, Some(d)) => d,
            (None, None) => Duration::ZERO,
        }
    }

    /// Start a task from the input box text.
    pub(in crate::tui) fn start_task(&mut self, task: String) {
        if self.refuse_if_misconfigured() {
            return;
        }
        self.conversation.push_entry(Kind::User, &task);
        tracing::info!(chars = task.len(), "task submitted");
        let cancel = self.begin_run();
        self.effect(Effect::Agent(AgentCommand::RunTask { task, cancel }));
    }

    /// A run starts: follow the newest content, and keep the interrupt token.
    pub(in crate::tui) fn begin_run(&mut self) -> CancellationToken {
        self.conversation.follow();
        self.calls.select_last();
        let cancel = CancellationToken::new();
        self.cancel = Some(cancel.clone());
        self.state = TaskState::Thinking;
        self.step = 0;
        self.task_started = Some(self.now);
        self.last_elapsed = None;
        self.retried = false;
        cancel
    }

    /// Ctrl+C while a task runs: decline what is pending and cancel the task.
    pub fn interrupt(&mut self) {
        for answered in self.approvals.decline_all() {
            self.calls
                .set_status(&answered.call_id, RowStatus::Declined);
        }
        if let Some(run) = &mut self.undo {
            run.declined = true;
        }
        if let Some(cancel) = &self.cancel {
            tracing::info!("interrupt requested");
            cancel.cancel();
            self.state = TaskState::Interrupting;
        }
    }

    /// Leave the app: pending requests are declined, the task is cancelled.
    pub fn request_quit(&mut self) {
        self.interrupt();
        self.quit = true;
        self.effect(Effect::Quit);
    }

    /// The agent is gone (it panicked or stopped taking commands): nothing
    /// can run any more. Said once, however often it is found out.
    pub fn agent_died(&mut self, why: &str) {
        self.cancel = None;
        self.undo = None;
        self.state = TaskState::Failed;
        if std::mem::replace(&mut self.agent_gone, true) {
            return;
        }
        self.conversation.push_entry(
            Kind::Error,
            &format!("The agent stopped unexpectedly: {why}"),
        );
    }
}

/// `m:ss` (or `h:mm:ss`).
pub fn format_elapsed(d: Duration) -> String {
    crate::present::elapsed_text(d)
}
