//! Slash commands typed in the input (listed, with their help, in
//! `input::slash::SLASH`): `/help`, `/clear`, `/continue`, `/diff`, `/undo`,
//! `/undo all`, `/compact`, `/revoke`, `/model`, `/model NAME`, `/mcp`, `/stage`, `/quit`. Commands
//! that the core carries out run only while no task runs (the core handles
//! one command at a time); otherwise they are refused with a message.

use crate::agent::AgentCommand;
use crate::llm::TokenUsage;
use crate::tools::ToolId;
use crate::tui::app::{App, Effect, Overlay, TaskState, UndoRun};
use crate::tui::panes::diff::view::DiffView;
use crate::tui::panes::line_kind::Kind;
use tokio_util::sync::CancellationToken;

impl App {
    /// Carry out `/command` (the text after the slash).
    pub(in crate::tui) fn run_command(&mut self, command: &str) {
        let words: Vec<&str> = command.split_whitespace().collect();
        match words.as_slice() {
            ["help"] => self.open_help(),
            ["clear"] => self.clear_conversation(),
            ["continue" | "resume"] if self.is_running() => {
                self.show_flash("A task is running already.");
            }
            ["continue" | "resume"] => self.resume(),
            ["diff"] => {
                self.core_command("/diff", Effect::Agent(AgentCommand::ShowDiff));
            }
            ["undo"] => self.start_undo(false),
            ["undo", "all"] => self.start_undo(true),
            ["compact"] => {
                if self.core_command("/compact", Effect::Agent(AgentCommand::Compact)) {
                    self.show_flash("Compacting the conversation's context…");
                }
            }
            ["revoke"] => self.revoke_approvals(),
            ["model"] => self.list_models(),
            ["model", name] => {
                let model = (*name).to_string();
                self.core_command("/model", Effect::Agent(AgentCommand::SetModel(model)));
            }
            ["mcp"] => self.list_mcp(),
            ["stage"] => {
                let on = self.status.stage.is_none();
                self.core_command("/stage", Effect::Agent(AgentCommand::SetStaged(on)));
            }
            ["stage", "on"] => {
                self.core_command("/stage", Effect::Agent(AgentCommand::SetStaged(true)));
            }
            ["stage", "off"] => {
                self.core_command("/stage", Effect::Agent(AgentCommand::SetStaged(false)));
            }
            ["mouse"] => self.toggle_mouse(),
            ["quit" | "exit"] => self.quit_command(),
            _ => self.show_flash(format!(
                "Unknown command /{} — try {} (type / to see them)",
                command.trim(),
                crate::tui::input::slash::names()
            )),
        }
    }

    /// `/model` alone: the model asked now, and the server's list (asked
    /// of the core; `ModelsListed` answers).
    fn list_models(&mut self) {
        let text = format!(
            "Model: {}. Asking the server which models it offers…",
            crate::present::one_line(&self.status.model)
        );
        if self.core_command("/model", Effect::Agent(AgentCommand::ListModels)) {
            self.conversation.push_entry(Kind::Notice, &text);
        }
    }

    /// The server's answer to `/model`.
    pub(in crate::tui) fn models_listed(
        &mut self,
        current: &str,
        models: &[String],
        error: Option<&str>,
    ) {
        const SHOWN: usize = 60;
        let current = crate::present::one_line(current);
        let text = match error {
            Some(e) => format!(
                "Model: {current}. The server's list could not be read: {}",
                crate::present::one_line(e)
            ),
            None if models.is_empty() => {
                format!("Model: {current}. The server lists no models.")
            }
            None => {
                let names: Vec<String> = models
                    .iter()
                    .take(SHOWN)
                    .map(|m| crate::present::one_line(m).into_owned())
                    .collect();
                let more = match models.len().saturating_sub(SHOWN) {
                    0 => String::new(),
                    n => format!(" and {n} more"),
                };
                format!(
                    "Model: {current}. The server offers {} model(s): {}{more}. /model NAME asks for one from the next request on.",
                    models.len(),
                    names.join(", ")
                )
            }
        };
        self.conversation.push_entry(Kind::Notice, &text);
    }

    pub(in crate::tui) fn open_help(&mut self) {
        self.layers.open(Overlay::Help);
    }

    /// Ask the core for something, unless a task (or an undo) is running.
    fn core_command(&mut self, name: &str, effect: Effect) -> bool {
        if self.is_running() {
            self.show_flash(format!(
                "A task is running: {name} works once it has finished (or press Ctrl+C to interrupt it)."
            ));
            return false;
        }
        if self.refuse_if_misconfigured() {
            return false;
        }
        self.effect(effect);
        true
    }

    /// `/undo` (the last change) or `/undo all`: the core shows the revert
    /// as a diff and asks; Ctrl+C cancels it like a task.
    fn start_undo(&mut self, all: bool) {
        let name = if all { "/undo all" } else { "/undo" };
        let cancel = CancellationToken::new();
        let effect = Effect::Agent(AgentCommand::Undo {
            all,
            cancel: cancel.clone(),
        });
        if self.core_command(name, effect) {
            self.life.undo = Some(UndoRun {
                before: self.status.state,
                declined: false,
            });
            self.life.cancel = Some(cancel);
        }
    }

    /// The user answered the `/undo` prompt: back to the state before it.
    pub(in crate::tui) fn undo_answered(&mut self, declined: bool) {
        match &mut self.life.undo {
            Some(run) => {
                run.declined = declined;
                self.status.state = run.before;
            }
            None if self.approvals.is_empty() => self.status.state = TaskState::Idle,
            None => {}
        }
    }

    /// The core finished an undo (or refused it).
    pub(in crate::tui) fn undo_finished(&mut self, reverted: Vec<String>, error: Option<String>) {
        let run = self.life.undo.take();
        self.life.cancel = None;
        if let Some(run) = run {
            self.status.state = run.before;
        }
        let declined = run.is_some_and(|r| r.declined);
        match (error, reverted.is_empty()) {
            (Some(_), _) if declined => self
                .conversation
                .push_entry(Kind::Notice, "Undo declined; nothing was reverted."),
            (Some(e), true) => self.conversation.push_entry(Kind::Error, &e),
            (Some(e), false) => {
                let text = format!("{e} (reverted: {})", reverted.join(", "));
                self.conversation.push_entry(Kind::Error, &text);
            }
            (None, _) => {
                let text = format!(
                    "Reverted {}. The model was told, so it reads these files again before editing them.",
                    reverted.join(", ")
                );
                self.conversation.push_entry(Kind::Notice, &text);
            }
        }
    }

    /// `F3` or `/revoke`: no more automatic approvals in this task.
    pub(in crate::tui) fn revoke_approvals(&mut self) {
        if self.status.auto_approved.is_empty() {
            self.show_flash("Nothing is auto-approved: every write and test run asks.");
            return;
        }
        let tools = std::mem::take(&mut self.status.auto_approved);
        let names: Vec<String> = tools.iter().map(ToolId::to_string).collect();
        let text = format!(
            "Auto-approval revoked for {}: each call asks again.",
            names.join(", ")
        );
        self.conversation.push_entry(Kind::Notice, &text);
        self.show_flash(text);
        self.effect(Effect::Agent(AgentCommand::RevokeApprovals(tools)));
    }

    /// `/continue`: go on after an error or an interrupt, without a new message.
    pub(in crate::tui) fn resume(&mut self) {
        if self.refuse_if_misconfigured() {
            return;
        }
        // Whether there is anything to continue is the core's call (`ResumeRefused`).
        self.conversation
            .push_entry(Kind::Notice, "Continuing where the last task stopped.");
        tracing::info!("resume requested");
        let cancel = self.begin_run();
        self.effect(Effect::Agent(AgentCommand::Resume { cancel }));
    }

    pub(in crate::tui) fn refuse_if_misconfigured(&mut self) -> bool {
        let Some(problem) = &self.facts.config_error else {
            return false;
        };
        let text = format!("Cannot run the task: {problem}");
        self.conversation.push_entry(Kind::Error, &text);
        true
    }

    /// `/clear`: a new conversation.
    pub(in crate::tui) fn clear_conversation(&mut self) {
        if self.is_running() {
            self.show_flash("A task is running: wait for it or press Ctrl+C, then /clear.");
            return;
        }
        self.conversation.clear();
        self.calls.clear();
        self.diff = DiffView::default();
        self.live.clear();
        self.status.state = TaskState::Idle;
        self.status.step = 0;
        self.status.task_tokens = TokenUsage::default();
        self.status.task_cost = None;
        self.status.task_started = None;
        self.status.last_elapsed = None;
        self.conversation
            .push_entry(Kind::Notice, "New conversation.");
        self.effect(Effect::Agent(AgentCommand::ClearConversation));
    }
}
