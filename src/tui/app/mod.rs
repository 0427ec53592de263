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
pub(in crate::tui) mod parts;
mod picking;
mod prompt;
mod quit;
pub(in crate::tui) mod record;
mod restored;
mod task;
mod update;

pub use layers::{Handled, Layers, Overlay};
use parts::{Lifecycle, Picking, SessionFacts, TaskStatus, TerminalState};
pub use update::Msg;

use crate::agent::AgentCommand;
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

/// The App composes the components (each owning its state) and the few
/// facts of its own, grouped by what reads them. At most 20 fields (an
/// architecture rule: a new concern goes into a component or a group).
pub struct App {
    /// The clock as of the last event; the run loop advances it.
    now: Instant,
    /// The header's figures: model, task state, steps, tokens, cost, time.
    status: TaskStatus,
    /// What the session learned that outlives a task (for hints, `/mcp`,
    /// the exit summary).
    facts: SessionFacts,
    /// How the terminal is used: mouse capture, focus reports, the palette.
    term: TerminalState,
    /// Running, quitting, undoing: the task's and the app's lifecycle.
    life: Lifecycle,
    pub(in crate::tui) conversation: Conversation,
    pub(in crate::tui) calls: ToolCalls,
    pub(in crate::tui) diff: DiffView,
    pub(in crate::tui) live: LivePreviews,
    pub(in crate::tui) approvals: Approvals,
    pub(in crate::tui) input: InputBox,
    /// The `@` file picker (while open) and where it lists files from.
    pub(in crate::tui) picking: Picking,
    pub(in crate::tui) focus: Focus,
    /// When a key last went into the input as text (prompts wait while the
    /// user is composing, see `App::composing`).
    pub(in crate::tui) last_typed: Option<Instant>,
    /// The overlays over the panes, the top one first to get a key.
    pub(in crate::tui) layers: Layers,
    /// A one-off message shown above the input until the next key.
    flash: Option<String>,
    /// Pane rectangles of the last layout (for mouse hits and page sizes).
    pub(in crate::tui) panes: Panes,
    effects: Vec<Effect>,
}

impl App {
    pub fn new(model: impl Into<String>, workspace: impl Into<String>) -> Self {
        App {
            now: Instant::now(),
            status: TaskStatus::new(model.into(), workspace.into()),
            facts: SessionFacts::default(),
            term: TerminalState::default(),
            life: Lifecycle::default(),
            conversation: Conversation::new(),
            calls: ToolCalls::default(),
            diff: DiffView::default(),
            live: LivePreviews::default(),
            approvals: Approvals::default(),
            input: InputBox::new(),
            picking: Picking::default(),
            focus: Focus::Input,
            last_typed: None,
            layers: Layers::default(),
            flash: None,
            panes: Panes::default(),
            effects: Vec::new(),
        }
    }

    /// The input's history from earlier sessions (oldest first).
    pub fn set_history(&mut self, entries: Vec<String>) {
        self.input.set_history(entries);
    }

    /// The configured provider's key variable, for the words about keys.
    pub fn set_key_var(&mut self, var: Option<&'static str>) {
        self.facts.key_var = var;
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
        self.status.rules = files;
    }

    /// The timeout a test run gets (from the configuration), for its prompt.
    pub fn set_test_timeout(&mut self, timeout: Duration) {
        self.facts.test_timeout = Some(timeout);
    }

    /// Show a configuration problem; tasks are refused until it is fixed.
    pub fn set_config_error(&mut self, message: impl Into<String>) {
        let message = message.into();
        self.conversation
            .push_entry(Kind::Error, &format!("Configuration problem: {message}"));
        self.facts.config_error = Some(message);
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
        self.life.cancel.is_some()
    }

    /// The token that interrupts the running task.
    pub fn cancel_token(&self) -> Option<&CancellationToken> {
        self.life.cancel.as_ref()
    }

    /// Time spent on the current (or last) task.
    pub fn elapsed(&self) -> Duration {
        match (self.status.task_started, self.status.last_elapsed) {
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
        self.conversation.separate_task();
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
        self.life.cancel = Some(cancel.clone());
        self.status.state = TaskState::Thinking;
        self.status.step = 0;
        self.status.task_started = Some(self.now);
        self.status.last_elapsed = None;
        self.status.retried = false;
        cancel
    }

    /// Ctrl+C while a task runs: decline what is pending and cancel the task.
    pub fn interrupt(&mut self) {
        for answered in self.approvals.decline_all() {
            self.calls
                .set_status(&answered.call_id, RowStatus::Declined);
        }
        if let Some(run) = &mut self.life.undo {
            run.declined = true;
        }
        if let Some(cancel) = &self.life.cancel {
            tracing::info!("interrupt requested");
            cancel.cancel();
            self.status.state = TaskState::Interrupting;
        }
    }

    /// Leave the app: pending requests are declined, the task is cancelled.
    pub fn request_quit(&mut self) {
        self.interrupt();
        self.life.quit = true;
        self.effect(Effect::Quit);
    }

    /// The agent is gone (it panicked or stopped taking commands): nothing
    /// can run any more. Said once, however often it is found out.
    pub fn agent_died(&mut self, why: &str) {
        self.life.cancel = None;
        self.life.undo = None;
        self.status.state = TaskState::Failed;
        if std::mem::replace(&mut self.facts.agent_gone, true) {
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
