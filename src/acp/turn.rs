//! The event pump of one ACP session: each `AgentEvent` becomes the
//! `session/update` that says it (the model's text as `agent_message_chunk`,
//! a proposed call as `tool_call`, its progress and result as
//! `tool_call_update`, notes as `agent_thought_chunk`), each approval a
//! `session/request_permission`, and the task's end the prompt's answer.
//!
//! What must stay true: the receipt is the turn's last `agent_message_chunk`
//! and is sent before the turn's end is reported; an approval is answered
//! only with what the client chose among the options offered (anything else
//! declines, and hunks only when the client said it can choose them); an
//! approval whose task was cancelled meanwhile is left alone
//! (the core declines it); a tool rejected for the turn is declined without
//! asking again; a turn asks its first approval only once it holds its
//! workspace's writing turn, which it keeps until it ends, so two sessions
//! of the process never change one workspace at once; the workspace lock is
//! held until the session's events end.

use super::map;
use super::permission::{self, Choice};
use super::rpc::Outbox;
use super::state::{Ended, SharedState, lock};
use crate::agent::{AgentEvent, ApprovalRequest, Decision, EventReceiver};
use crate::lock::WorkspaceLock;
use agent_client_protocol_schema::v1::{
    RequestPermissionRequest, SessionNotification, SessionUpdate, ToolCallContent,
};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The right to change a workspace, one turn at a time, shared by the
/// process's sessions on it.
pub(super) type WritingSlot = Arc<tokio::sync::Mutex<()>>;

/// What a turn waiting for its workspace's writing turn is told.
const WAITING: &str =
    "Another thread is changing this folder: this one asks its first approval when that turn ends.";

/// Speaks for one session.
pub(super) struct Pump {
    out: Arc<Outbox>,
    session: String,
    shared: SharedState,
    root: PathBuf,
    /// The model's current reply was streamed (its whole text is not sent again).
    streamed: bool,
    /// The client said it can choose hunks (a stepwise extension).
    hunks: bool,
    /// The `diff` content each open call shows, kept for its completion.
    diffs: HashMap<String, Vec<ToolCallContent>>,
    /// The workspace's writing turn (see [`WritingSlot`]).
    slot: WritingSlot,
    /// Held until the session's events end.
    _lock: Option<WorkspaceLock>,
}

impl Pump {
    pub fn new(
        out: Arc<Outbox>,
        session: String,
        shared: SharedState,
        root: PathBuf,
        hunks: bool,
    ) -> Self {
        Pump {
            out,
            session,
            shared,
            root,
            streamed: false,
            hunks,
            diffs: HashMap::new(),
            slot: WritingSlot::default(),
            _lock: None,
        }
    }

    /// The pump holds the workspace's lock and shares its writing turn.
    pub fn holding(self, lock: WorkspaceLock, slot: WritingSlot) -> Self {
        Pump {
            slot,
            _lock: Some(lock),
            ..self
        }
    }

    /// Take the workspace's writing turn for the running turn, unless it
    /// holds it already; false when the approval was withdrawn meanwhile.
    async fn writing_turn(&mut self, reply: &mut tokio::sync::oneshot::Sender<Decision>) -> bool {
        let holds = lock(&self.shared)
            .turn
            .as_ref()
            .is_none_or(|t| t.writing.is_some());
        if holds {
            return true;
        }
        let guard = match self.slot.clone().try_lock_owned() {
            Ok(guard) => guard,
            Err(_) => {
                self.update(map::note(WAITING));
                tokio::select! {
                    guard = self.slot.clone().lock_owned() => guard,
                    () = reply.closed() => return false,
                }
            }
        };
        if let Some(turn) = lock(&self.shared).turn.as_mut() {
            turn.writing = Some(guard);
        }
        true
    }

    /// Until the session's events end.
    pub async fn run(mut self, mut inbox: EventReceiver) {
        while let Some(event) = inbox.recv().await {
            self.event(event).await;
        }
        // The agent is gone: a waiting prompt learns it from its dropped sender.
        lock(&self.shared).turn = None;
    }

    fn update(&self, update: SessionUpdate) {
        lock(&self.shared).said.keep(update.clone());
        let note = SessionNotification::new(self.session.clone(), update);
        self.out.notify("session/update", note);
    }

    /// A tool call's id in this session: the turn's number and the model's id.
    fn call_id(&self, call_id: &str) -> String {
        let turn = lock(&self.shared).turn.as_ref().map_or(0, |t| t.number);
        format!("{turn}:{call_id}")
    }

    async fn event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::AssistantDelta { text } => {
                self.streamed = true;
                self.update(map::message(&text));
            }
            AgentEvent::AssistantMessage { text } => {
                if !self.streamed && !text.is_empty() {
                    self.update(map::message(&text));
                }
                self.streamed = false;
            }
            AgentEvent::ModelRequest { .. } => self.streamed = false,
            AgentEvent::ToolCallProposed {
                call_id,
                tool,
                kind,
                target,
                arguments,
                diff,
                ..
            } => {
                let id = self.call_id(&call_id);
                let tool = tool.to_string();
                let call = map::proposed(
                    &id,
                    kind,
                    &tool,
                    &target,
                    arguments,
                    diff.as_ref(),
                    &self.root,
                );
                if !call.content.is_empty() {
                    self.diffs.insert(id.clone(), call.content.clone());
                }
                self.update(SessionUpdate::ToolCall(call));
            }
            AgentEvent::ApprovalRequested(request) => self.approve(request).await,
            AgentEvent::ToolRunning { call_id, .. } => {
                let id = self.call_id(&call_id);
                self.update(SessionUpdate::ToolCallUpdate(map::running(&id)));
            }
            AgentEvent::ToolFinished {
                call_id,
                status,
                summary,
                result,
                ..
            } => {
                let id = self.call_id(&call_id);
                // What was written stays shown; a call that did not run shows why.
                let kept = self.diffs.remove(&id).unwrap_or_default();
                let kept = match status {
                    crate::agent::CallStatus::Ok => kept,
                    _ => Vec::new(),
                };
                let update = map::finished(&id, status, &summary, result, kept);
                self.update(SessionUpdate::ToolCallUpdate(update));
            }
            AgentEvent::GateRefused { reason, .. } => {
                self.update(map::note(&format!("Answer refused: {reason}")));
            }
            AgentEvent::FinalAnswer { receipt, .. } => {
                if let Some(turn) = lock(&self.shared).turn.as_mut() {
                    turn.receipt = Some(receipt);
                }
            }
            AgentEvent::Retrying {
                retry,
                max_retries,
                delay_ms,
                error,
            } => {
                let line = crate::present::retry_line(retry, max_retries, delay_ms, &error);
                self.update(map::note(&line));
            }
            AgentEvent::ProtocolRepair {
                attempt,
                error,
                cut_at_limit,
            } => {
                let line = crate::present::repair_line(attempt, &error, cut_at_limit);
                self.update(map::note(&line));
            }
            AgentEvent::Compacted {
                before_tokens,
                after_tokens,
                elided,
                summarized,
            } => {
                let line = crate::present::compaction_line(
                    before_tokens,
                    after_tokens,
                    elided,
                    summarized,
                );
                self.update(map::note(&line));
            }
            AgentEvent::Error { message } => self.update(map::note(&message)),
            AgentEvent::StageChanged { message, .. } => self.update(map::note(&message)),
            AgentEvent::StageReviewed {
                stage,
                written,
                not_written,
                kept,
            } => {
                let line =
                    crate::present::stage_reviewed_line(&stage, &written, &not_written, kept);
                self.update(map::note(&line));
            }
            AgentEvent::McpServer(report) => {
                self.update(map::note(&crate::present::mcp::server_line(&report)));
            }
            AgentEvent::ScopesChanged { approved } => lock(&self.shared).approved = approved,
            AgentEvent::TaskFinished { reason, .. } => self.finish(reason),
            // Shown by `session/load` itself, before it answers.
            AgentEvent::SessionRestored { .. } => {}
            _ => {}
        }
    }

    /// The turn's end: the receipt (or the error) as its last message, then
    /// the prompt's answer.
    fn finish(&mut self, reason: crate::agent::FinishReason) {
        let Some(mut turn) = lock(&self.shared).turn.take() else {
            return;
        };
        if let Some(receipt) = &turn.receipt {
            self.update(map::message(&map::receipt_text(receipt)));
        }
        match &reason {
            crate::agent::FinishReason::Error(message) => {
                self.update(map::message(&format!("\n\nstepwise stopped: {message}")));
            }
            crate::agent::FinishReason::Refused(words) if words.is_empty() => {
                self.update(map::message("\n\nThe model refused the task."));
            }
            crate::agent::FinishReason::Refused(_) => {
                // Its words were streamed as the turn's message already.
                self.update(map::message(
                    "\n\nThe model refused the task (its words above).",
                ));
            }
            _ => {}
        }
        if let Some(done) = turn.done.take() {
            let _ = done.send(Ended {
                reason,
                receipt: turn.receipt,
            });
        }
    }

    /// Ask the client, unless the tool was rejected for the turn.
    async fn approve(&mut self, request: ApprovalRequest) {
        let rejected = lock(&self.shared)
            .turn
            .as_ref()
            .is_some_and(|t| t.rejected.contains(&request.tool));
        if rejected {
            let _ = request
                .reply
                .send(permission::decision(Choice::RejectAlways));
            return;
        }
        let mut reply = request.reply;
        if !self.writing_turn(&mut reply).await {
            return;
        }
        let id = self.call_id(&request.call_id);
        let options = permission::options(request.allow_for_task);
        let call = map::permission_call(&id, &request.action, &self.root);
        // The tool call itself shows what would change, as the request does.
        let shown = call.fields.content.clone().unwrap_or_default();
        self.diffs.insert(id.clone(), shown);
        self.update(SessionUpdate::ToolCallUpdate(call.clone()));
        let mut asked = RequestPermissionRequest::new(self.session.clone(), call, options.clone());
        if self.hunks {
            asked = asked.meta(permission::hunk_offer(&request.action));
        }
        let answer = tokio::select! {
            answer = self.out.request("session/request_permission", asked) => answer,
            // Cancelled meanwhile: the core has declined it already.
            () = reply.closed() => return,
        };
        let choice = permission::choice(&answer, &options);
        if choice == Choice::RejectAlways
            && let Some(turn) = lock(&self.shared).turn.as_mut()
        {
            turn.rejected.push(request.tool.clone());
        }
        let chosen_hunks = match choice {
            Choice::AllowOnce if self.hunks => permission::hunk_decision(&answer, &request.action),
            _ => None,
        };
        let decision: Decision = chosen_hunks.unwrap_or_else(|| permission::decision(choice));
        if let Some(written) = permission::written_text(&request.action, &decision)
            && let Some(shown) = self.diffs.get_mut(&id)
        {
            map::with_written(shown, &written);
        }
        let _ = reply.send(decision);
    }
}
