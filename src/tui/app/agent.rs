//! Core events into the App: `on_agent` is a short router that hands each
//! `AgentEvent` to the part of the App that owns what it changes: the live
//! previews, the transcript (here), the tool-call rows and the approval queue
//! (`calls_event`), and the task's counters and state (`task`). Afterwards,
//! requests the core stopped waiting for leave the queue.

use crate::agent::{AgentEvent, ApprovalRequest};
use crate::present;
use crate::tui::app::{App, Overlay, TaskState};
use crate::tui::overlays::session_diff::SessionDiffView;
use crate::tui::panes::line_kind::Kind;
use crate::tui::panes::tool_calls::{CallRow, RowStatus};

impl App {
    /// One event from the core.
    pub(in crate::tui) fn on_agent(&mut self, event: AgentEvent) {
        use AgentEvent as E;
        self.note_liveness(&event);
        match event {
            // Only appended here; previews are computed at frame time.
            E::ToolCallStreaming {
                index,
                tool,
                preview,
                fragment,
            } => self.live.fragment(index, &tool, preview, &fragment),
            E::LiveEditBase {
                index,
                tool,
                path,
                old,
            } => self.live.base(index, &tool, path, old),
            E::SessionDiff { files, git } => {
                self.layers
                    .open(Overlay::SessionDiff(SessionDiffView::new(files, git)));
            }
            E::UndoFinished { reverted, error } => self.undo_finished(reverted, error),
            E::SessionFiles { files } => self.facts.session_files = files,
            E::ModelsListed {
                current,
                models,
                error,
            } => self.models_listed(&current, &models, error.as_deref()),
            // The header names the rule files from the start (each task reads them again).
            E::SessionReady { rules, sandbox, .. } => {
                self.set_rules(rules);
                self.status.sandbox = sandbox;
            }
            // The header shows exactly what the core auto-approves.
            E::ScopesChanged { approved } => self.sync_scopes(approved),
            E::ResumeRefused { message } => self.resume_refused(message),
            // The header names the model the next request asks for.
            E::ModelChanged { model } => {
                let text = format!(
                    "Model: {} (from the next request on).",
                    present::sanitize(&model)
                );
                self.conversation.push_entry(Kind::Notice, &text);
                self.status.model = model;
            }
            E::SessionRestored {
                session,
                entries,
                tasks,
                steps,
                usage,
                cost_usd,
            } => self.session_restored(&session, &entries, (tasks, steps), usage, cost_usd),
            E::McpServer(report) => self.mcp_server(report),
            E::ApprovalRequested(request) => self.approval_requested(request),
            e @ (E::ToolCallProposed { .. } | E::ToolRunning { .. } | E::ToolFinished { .. }) => {
                self.calls_event(e)
            }
            e @ (E::TaskStarted { .. }
            | E::ModelRequest { .. }
            | E::Usage(_)
            | E::Cost { .. }
            | E::StepStarted { .. }
            | E::TaskFinished { .. }) => self.task_event(e),
            e => self.transcript_event(e),
        }
        if self.approvals.prune()
            && self.approvals.is_empty()
            && self.status.state == TaskState::AwaitingApproval
        {
            self.status.state = TaskState::Thinking;
        }
    }

    /// Events that only add to the transcript.
    fn transcript_event(&mut self, event: AgentEvent) {
        use AgentEvent as E;
        match event {
            E::AssistantDelta { text } => self.conversation.delta(&text),
            E::TaskCutOff { files } => self
                .conversation
                .push_entry(Kind::Notice, &present::cut_off_line(&files)),
            E::AssistantMessage { text } => {
                if !self.conversation.is_streaming() {
                    self.conversation.delta(&text);
                }
                self.conversation.close_reply();
            }
            E::Retrying {
                retry,
                max_retries,
                delay_ms,
                error,
            } => {
                if self.conversation.discard_reply() {
                    self.conversation.push_entry(
                        Kind::Notice,
                        "The reply above broke off: it is discarded, and the model is asked again.",
                    );
                }
                self.live.clear();
                let text = present::retry_line(retry, max_retries, delay_ms, &error);
                self.conversation.push_entry(Kind::Notice, &text);
                self.retry_started(delay_ms);
            }
            E::Compacted {
                before_tokens,
                after_tokens,
                elided,
                summarized,
            } => {
                let text =
                    present::compaction_line(before_tokens, after_tokens, elided, summarized);
                self.conversation.push_entry(Kind::Notice, &text);
            }
            E::ProtocolRepair {
                attempt,
                error,
                cut_at_limit,
            } => {
                let text = present::repair_line(attempt, &error, cut_at_limit);
                self.conversation.push_entry(Kind::Notice, &text);
            }
            E::GateRefused { reason, .. } => self.conversation.push_entry(Kind::Gate, &reason),
            E::StageChanged { stage, message } => {
                self.status.stage = stage;
                self.conversation.push_entry(Kind::Notice, &message);
            }
            E::StageReviewed {
                stage,
                written,
                not_written,
                kept,
            } => {
                let text = present::stage_reviewed_line(&stage, &written, &not_written, kept);
                self.conversation.push_entry(Kind::Notice, &text);
            }
            E::FinalAnswer { text, receipt } => {
                self.conversation.final_answer(&text);
                self.conversation
                    .push_lines(&crate::tui::panes::receipt::lines(&receipt));
            }
            E::Error { message } => {
                tracing::warn!(%message, "agent error");
                self.conversation
                    .push_entry(Kind::Error, &explain_error(&message, self.facts.key_var));
            }
            other => tracing::debug!(?other, "not a transcript event"),
        }
    }

    /// A failed or refused call on record in the conversation: its reason,
    /// and the end of its output (a failing test run's assertion), in the
    /// program's colours when the look has any.
    fn call_failed(
        &mut self,
        tool: &crate::tools::ToolId,
        call_id: &str,
        summary: &str,
        result: &serde_json::Value,
        coloured: Option<String>,
    ) {
        let target = self
            .calls
            .rows()
            .iter()
            .find(|r| r.call_id == call_id)
            .map(|r| r.target.clone())
            .unwrap_or_default();
        let line = present::failure_line(&tool.to_string(), &target, summary, result);
        let plain = result.get("output").and_then(|o| o.as_str());
        let output = match (coloured.as_deref(), plain) {
            (Some(text), _) | (None, Some(text)) => {
                present::output_tail(text, present::FAILURE_TAIL_LINES)
                    .into_iter()
                    .map(crate::tui::render::ansi::spans)
                    .collect()
            }
            (None, None) => Vec::new(),
        };
        self.conversation.push_failure(&line, output);
    }

    /// A proposal, its run and its result: the tool-call rows and the header.
    fn calls_event(&mut self, event: AgentEvent) {
        use AgentEvent as E;
        match event {
            E::ToolCallProposed {
                step,
                call_id,
                tool,
                kind,
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
                    kind,
                    target,
                    arguments,
                    diff,
                    status: RowStatus::Pending,
                    summary: String::new(),
                    result: None,
                    auto_approved: false,
                });
            }
            E::ToolRunning {
                call_id,
                auto_approved,
                ..
            } => {
                let kind = self.calls.running(&call_id, auto_approved);
                if auto_approved {
                    self.record_auto_approved(&call_id);
                }
                self.set_state(if kind == Some(crate::agent::CallKind::Execute) {
                    TaskState::RunningTests
                } else {
                    TaskState::Running
                });
            }
            E::ToolFinished {
                call_id,
                tool,
                status,
                summary,
                result,
                coloured_output,
                ..
            } => {
                if status == crate::agent::CallStatus::Failed {
                    self.call_failed(&tool, &call_id, &summary, &result, coloured_output);
                }
                self.calls
                    .finished(&call_id, status.into(), summary, result);
                self.set_state(TaskState::Thinking);
            }
            other => tracing::debug!(?other, "not a tool-call event"),
        }
    }

    /// The core asks: the row waits, the prompt opens over the diff.
    fn approval_requested(&mut self, request: ApprovalRequest) {
        self.calls.set_status(&request.call_id, RowStatus::Awaiting);
        tracing::info!(step = request.step, prompt = %request.action.prompt(), "approval requested");
        // The views the user opened stay open: the prompt bar shows below
        // them, and the key that closes one is never an answer.
        self.approvals.push(request);
        self.set_state(TaskState::AwaitingApproval);
    }
}

/// Add what to do about common endpoint errors.
fn explain_error(message: &str, key_var: Option<&str>) -> String {
    let names_a_key = crate::config::providers::KEY_VARS
        .iter()
        .any(|v| message.contains(v));
    let hint = if names_a_key || message.contains("--base-url") {
        // The core already says what to check.
        String::new()
    } else if message.contains("HTTP 401") || message.contains("HTTP 403") {
        match key_var {
            Some(var) => format!(" — check {var} (in .env or the environment) and --base-url."),
            None => " — check --base-url and --provider.".to_string(),
        }
    } else if message.contains("cannot reach the model server") {
        " — is the server running, and is --base-url right?".to_string()
    } else if message.contains("HTTP 404") {
        " — check --base-url (it usually ends in /v1) and --model.".to_string()
    } else {
        String::new()
    };
    format!("{message}{hint}")
}
