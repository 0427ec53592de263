//! Core events into the App: each `AgentEvent` updates the transcript, the
//! tool-call rows, the approval queue, the live previews, the overlays and
//! the header's counters.

use crate::agent::{AgentEvent, FinishReason};
use crate::llm::TokenUsage;
use crate::tui::app::{App, Overlay, TaskState, format_elapsed};
use crate::tui::overlays::session_diff::SessionDiffView;
use crate::tui::panes::line_kind::Kind;
use crate::tui::panes::tool_calls::{CallRow, RowStatus};

impl App {
    /// One event from the core.
    pub(in crate::tui) fn on_agent(&mut self, event: AgentEvent) {
        match event {
            // Only appended here; previews are computed at frame time.
            AgentEvent::ToolCallStreaming {
                index,
                tool,
                fragment,
            } => self.live.fragment(index, &tool, &fragment),
            AgentEvent::LiveEditBase {
                index,
                tool,
                path,
                old,
            } => self.live.base(index, &tool, path, old),
            AgentEvent::SessionDiff { files, git } => {
                self.overlay = Some(Overlay::SessionDiff(SessionDiffView::new(files, git)));
            }
            AgentEvent::UndoFinished { reverted, error } => self.undo_finished(reverted, error),
            AgentEvent::TaskStarted {
                max_steps, rules, ..
            } => {
                if !rules.is_empty() {
                    let text = format!("Following the project rules in {}", rules.join(", "));
                    self.conversation.push_entry(Kind::Notice, &text);
                }
                self.rules = rules;
                self.state = TaskState::Thinking;
                self.step = 0;
                self.max_steps = max_steps;
                self.task_tokens = TokenUsage::default();
                self.task_cost = None;
                self.task_started = Some(self.now);
                self.last_elapsed = None;
                self.auto_approved.clear();
            }
            AgentEvent::ModelRequest { .. } => {
                self.live.clear();
                self.conversation.new_turn();
                self.set_state(TaskState::Thinking);
            }
            AgentEvent::AssistantDelta { text } => self.conversation.delta(&text),
            AgentEvent::AssistantMessage { text } => {
                if !self.conversation.is_streaming() {
                    self.conversation.delta(&text);
                }
                self.conversation.close_reply();
            }
            AgentEvent::Usage(u) => {
                for t in [&mut self.task_tokens, &mut self.session_tokens] {
                    t.prompt_tokens += u.prompt_tokens;
                    t.completion_tokens += u.completion_tokens;
                    t.cached_tokens += u.cached_tokens;
                }
            }
            AgentEvent::Retrying {
                retry,
                max_retries,
                delay_ms,
                error,
            } => {
                self.conversation.discard_reply();
                self.live.clear();
                let secs = delay_ms as f64 / 1000.0;
                let why = if retry > 1 {
                    "still failing".to_string()
                } else {
                    error
                };
                self.conversation.push_entry(
                    Kind::Notice,
                    &format!("{why} — retrying ({retry}/{max_retries}) in {secs:.1}s"),
                );
            }
            AgentEvent::Cost {
                task_usd,
                session_usd,
                ..
            } => {
                self.task_cost = Some(task_usd);
                self.session_cost = Some(session_usd);
            }
            AgentEvent::Compacted {
                before_tokens,
                after_tokens,
                elided,
                summarized,
            } => {
                let text = format!(
                    "Context compacted to fit the model: {before_tokens} → {after_tokens} tokens ({elided} old tool results shortened, {summarized} turns summarized)"
                );
                self.conversation.push_entry(Kind::Notice, &text);
            }
            AgentEvent::StepStarted { step, max_steps } => {
                // The reply has arrived whole: its proposals replace the previews.
                self.live.clear();
                self.step = step;
                self.max_steps = max_steps;
            }
            AgentEvent::ToolCallProposed {
                step,
                call_id,
                tool,
                target,
                arguments,
                diff,
                ..
            } => {
                self.conversation.close_reply();
                self.calls.propose(CallRow {
                    step,
                    call_id,
                    tool,
                    target,
                    arguments,
                    diff,
                    status: RowStatus::Pending,
                    summary: String::new(),
                    result: None,
                    auto_approved: false,
                });
            }
            AgentEvent::ApprovalRequested(request) => {
                self.calls.set_status(&request.call_id, RowStatus::Awaiting);
                tracing::info!(step = request.step, prompt = %request.action.prompt(), "approval requested");
                // The diff must be visible while the prompt is open.
                if matches!(
                    self.overlay,
                    Some(Overlay::Detail(_) | Overlay::SessionDiff(_))
                ) {
                    self.overlay = None;
                }
                self.approvals.push(request);
                self.set_state(TaskState::AwaitingApproval);
            }
            AgentEvent::ToolRunning {
                call_id,
                auto_approved,
                ..
            } => {
                let tool = self
                    .calls
                    .running(&call_id, auto_approved)
                    .and_then(crate::tools::ToolName::parse)
                    .map_or("", |t| t.as_str());
                self.set_state(if tool == "run_tests" {
                    TaskState::RunningTests
                } else {
                    TaskState::Running(tool)
                });
            }
            AgentEvent::ToolFinished {
                call_id,
                status,
                summary,
                result,
                ..
            } => {
                self.calls
                    .finished(&call_id, status.into(), summary, result);
                self.set_state(TaskState::Thinking);
            }
            AgentEvent::ProtocolRepair { attempt, error } => self.conversation.push_entry(
                Kind::Notice,
                &format!(
                    "The model's reply was not understood (repair request {attempt}): {error}"
                ),
            ),
            AgentEvent::GateRefused { reason, .. } => {
                self.conversation.push_entry(Kind::Gate, &reason)
            }
            AgentEvent::FinalAnswer { text, receipt } => {
                self.conversation.final_answer(&text);
                self.conversation
                    .push_lines(&crate::tui::panes::receipt::lines(&receipt));
            }
            AgentEvent::Error { message } => {
                tracing::warn!(%message, "agent error");
                self.conversation
                    .push_entry(Kind::Error, &explain_error(&message));
            }
            AgentEvent::TaskFinished { reason, steps, .. } => self.finish(reason, steps),
        }
        if self.approvals.prune()
            && self.approvals.is_empty()
            && self.state == TaskState::AwaitingApproval
        {
            self.state = TaskState::Thinking;
        }
    }

    pub(in crate::tui) fn set_state(&mut self, state: TaskState) {
        // An interrupt in progress stays visible until the task ends.
        if self.state != TaskState::Interrupting {
            self.state = state;
        }
    }

    fn finish(&mut self, reason: FinishReason, steps: u32) {
        self.conversation.close_reply();
        self.live.clear();
        self.approvals.decline_all();
        self.cancel = None;
        self.auto_approved.clear();
        let elapsed = self.elapsed();
        self.last_elapsed = Some(elapsed);
        let secs = format_elapsed(elapsed);
        let plural = if steps == 1 { "" } else { "s" };
        let (state, text) = match &reason {
            FinishReason::Answered => (
                TaskState::Done,
                format!("Done in {steps} step{plural} · {secs}"),
            ),
            FinishReason::BudgetExhausted => (
                TaskState::Failed,
                format!("Stopped: the step budget ran out after {steps} step{plural} · {secs}"),
            ),
            FinishReason::CostLimit => (
                TaskState::Failed,
                format!(
                    "Stopped: the cost limit (--max-cost) was reached after {steps} step{plural} · {secs}"
                ),
            ),
            FinishReason::Cancelled => (
                TaskState::Interrupted,
                format!(
                    "Interrupted after {steps} step{plural} · {secs}. The conversation is kept."
                ),
            ),
            FinishReason::Error(_) => (
                TaskState::Failed,
                format!("Stopped by an error after {steps} step{plural} · {secs}"),
            ),
        };
        tracing::info!(?reason, steps, "task finished");
        self.state = state;
        self.conversation.push_entry(Kind::Notice, &text);
    }
}

/// Add what to do about common endpoint errors.
fn explain_error(message: &str) -> String {
    let hint = if message.contains("OPENAI_API_KEY") || message.contains("--base-url") {
        // The core already says what to check.
        ""
    } else if message.contains("HTTP 401") || message.contains("HTTP 403") {
        " — check OPENAI_API_KEY (in .env or the environment) and --base-url."
    } else if message.contains("cannot reach the model server") {
        " — is the server running, and is --base-url right?"
    } else if message.contains("HTTP 404") {
        " — check --base-url (it usually ends in /v1) and --model."
    } else {
        ""
    };
    format!("{message}{hint}")
}
