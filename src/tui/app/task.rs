//! The task's lifecycle in the App: its start, each model request and step,
//! the token and cost counters, the header's state, and how it finished.
//! An interrupt in progress stays on the header until the task ends.

use crate::agent::{AgentEvent, FinishReason};
use crate::llm::TokenUsage;
use crate::present;
use crate::tools::ToolId;
use crate::tui::app::{App, TaskState};
use crate::tui::panes::line_kind::Kind;

impl App {
    /// Put a task in the input box, ready to submit with Enter.
    pub fn prefill(&mut self, task: &str) {
        self.input.insert_str(task);
    }

    /// Start a task as if it had been typed and sent (`stepwise "TASK"`).
    pub fn start_given_task(&mut self, task: &str) {
        // Through the input box, so Up recalls it like a typed task.
        self.input.insert_str(task);
        let task = self.input.take();
        self.start_task(task);
    }

    /// Start, requests, steps, counters and the end of a task.
    pub(in crate::tui::app) fn task_event(&mut self, event: AgentEvent) {
        use AgentEvent as E;
        match event {
            E::TaskStarted {
                max_steps, rules, ..
            } => {
                if let Some(text) = present::rules_line(&rules) {
                    self.conversation.push_entry(Kind::Notice, &text);
                }
                self.status.rules = rules;
                self.status.state = TaskState::Thinking;
                self.status.step = 0;
                self.status.max_steps = max_steps;
                self.status.task_tokens = TokenUsage::default();
                self.status.task_cost = None;
                self.status.task_started = Some(self.now);
                self.status.last_elapsed = None;
                self.status.retried = false;
                self.status.auto_approved.clear();
            }
            E::ModelRequest { .. } => {
                self.live.clear();
                self.conversation.new_turn();
                self.set_state(TaskState::Thinking);
            }
            E::Usage(u) => {
                for t in [
                    &mut self.status.task_tokens,
                    &mut self.status.session_tokens,
                ] {
                    t.prompt_tokens += u.prompt_tokens;
                    t.completion_tokens += u.completion_tokens;
                    t.cached_tokens += u.cached_tokens;
                }
            }
            E::Cost {
                task_usd,
                session_usd,
                ..
            } => {
                self.status.task_cost = Some(task_usd);
                self.status.session_cost = Some(session_usd);
            }
            E::StepStarted { step, max_steps } => {
                // The reply has arrived whole: its proposals replace the previews.
                self.live.clear();
                self.status.step = step;
                self.status.max_steps = max_steps;
            }
            E::TaskFinished { reason, steps, .. } => self.finish(reason, steps),
            other => tracing::debug!(?other, "not a task event"),
        }
    }

    /// A model request failed and is tried again after `delay_ms`.
    pub(in crate::tui::app) fn retry_started(&mut self, delay_ms: u64) {
        self.status.retried = true;
        self.status.retry_until = Some(self.now + std::time::Duration::from_millis(delay_ms));
    }

    /// Whole seconds until the failed request is tried again, while waiting.
    pub fn retry_countdown(&self) -> Option<u64> {
        let until = self.status.retry_until.filter(|u| *u > self.now)?;
        Some(
            until
                .saturating_duration_since(self.now)
                .as_secs_f64()
                .ceil() as u64,
        )
    }

    /// The user approved `tool` for the rest of the task (the header lists it).
    pub(in crate::tui) fn approved_for_task(&mut self, tool: &ToolId) {
        if !self.status.auto_approved.contains(tool) {
            self.status.auto_approved.push(tool.clone());
        }
    }

    /// The tools the core has approved for the rest of the task (the header
    /// shows exactly these).
    pub fn sync_scopes(&mut self, tools: Vec<ToolId>) {
        self.status.auto_approved = tools;
    }

    pub(in crate::tui) fn set_state(&mut self, state: TaskState) {
        // An interrupt in progress stays visible until the task ends.
        if self.status.state != TaskState::Interrupting {
            self.status.state = state;
        }
    }

    /// The core found nothing to continue: back to idle, nothing ran.
    pub(in crate::tui::app) fn resume_refused(&mut self, message: String) {
        self.life.cancel = None;
        self.status.task_started = None;
        self.status.state = TaskState::Idle;
        self.conversation.push_entry(Kind::Error, &message);
        self.show_flash(message);
    }

    fn finish(&mut self, reason: FinishReason, steps: u32) {
        self.conversation.close_reply();
        self.live.clear();
        self.approvals.decline_all();
        self.life.cancel = None;
        self.status.auto_approved.clear();
        let elapsed = self.elapsed();
        self.status.last_elapsed = Some(elapsed);
        let state = match &reason {
            FinishReason::Answered => TaskState::Done,
            FinishReason::Cancelled => TaskState::Interrupted,
            FinishReason::BudgetExhausted
            | FinishReason::CostLimit
            | FinishReason::Error(_)
            | FinishReason::Refused(_) => TaskState::Failed,
        };
        let text = present::finish_line(&reason, steps, elapsed);
        tracing::info!(?reason, steps, "task finished");
        self.status.state = state;
        self.conversation.push_entry(Kind::Notice, &text);
        self.facts.last_outcome = Some(text);
        self.status.retry_until = None;
        if matches!(reason, FinishReason::Error(_)) && self.status.retried {
            self.conversation.push_entry(
                Kind::Notice,
                "The retries ran out: /continue resumes the task where it stopped.",
            );
        }
    }
}
