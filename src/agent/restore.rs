//! Taking a saved session back (`Session::restore`), handing checkpoints to
//! the transcript (`Session::checkpoint`), and the `SessionRestored` event
//! that shows the earlier conversation.
//!
//! What must stay true: a restored session starts with no task running
//! (nothing to `/continue`): the next task is a new one; its change log is
//! the saved one, so `/undo` reverts earlier edits (still refusing a file
//! changed on disk since).

use super::contract::{AgentEvent, CallKind, CallStatus, RestoredEntry};
use super::saved::SavedState;
use super::session::Session;
use crate::llm::{ChatMessage, Role};
use crate::tools::registry::Registry;
use crate::tools::{ToolId, ToolName};
use serde_json::Value;

impl Session {
    /// Send every checkpoint to `sink` (the transcript).
    pub fn on_checkpoint(&mut self, sink: super::saved::CheckpointSink) {
        self.saved.sink = Some(sink);
    }

    /// What resuming this session later needs, as of now.
    pub fn saved_state(&self) -> SavedState {
        SavedState {
            messages: self.history.clone(),
            changes: super::changes_store::encode(&self.changes),
            usage: self.session_usage,
            cost_usd: self.session_cost,
            tasks: self.tasks,
            steps: self.saved.steps,
            outcome: self.saved.outcome.clone(),
            model: self.saved.model.clone(),
        }
    }

    /// Hand the current state to the checkpoint sink, if there is one.
    pub fn checkpoint(&mut self) {
        if self.saved.sink.is_none() {
            return;
        }
        let state = self.saved_state();
        if let Some(sink) = self.saved.sink.as_mut() {
            sink(&state);
        }
    }

    /// Bring back a saved session (named `from`): its conversation, change
    /// log and totals. A conversation without a system message is refused.
    pub fn restore(&mut self, state: SavedState, from: &str) -> Result<(), String> {
        if state.messages.first().map(|m| m.role) != Some(Role::System) {
            return Err("the saved conversation does not start with a system message".into());
        }
        let changes = super::changes_store::decode(&state.changes)?;
        self.history = state.messages;
        self.changes = changes;
        self.session_usage = state.usage;
        self.session_cost = state.cost_usd;
        self.tasks = state.tasks;
        self.saved.steps = state.steps;
        self.saved.outcome = state.outcome;
        self.saved.restored_from = Some(from.to_string());
        self.carried = None;
        Ok(())
    }

    /// The event that shows a restored conversation, once, when the session
    /// was restored.
    pub fn restored_event(&self) -> Option<AgentEvent> {
        let from = self.saved.restored_from.clone()?;
        Some(AgentEvent::SessionRestored {
            session: from,
            entries: restored_entries(&self.registry, &self.history),
            tasks: self.tasks,
            steps: self.saved.steps,
            usage: self.session_usage,
            cost_usd: (self.session_cost > 0.0).then_some(self.session_cost),
        })
    }

    /// Count a finished task for the session list.
    pub(super) fn note_finished(&mut self, steps: u32, outcome: &super::FinishReason) {
        self.saved.steps = self.saved.steps.saturating_add(steps);
        let word = serde_json::to_value(outcome)
            .ok()
            .and_then(|v| v["reason"].as_str().map(str::to_string));
        self.saved.outcome = word;
    }
}

/// The conversation as the user saw it: their tasks, the model's text, the
/// tools it called with how each ended (read from the result the model got:
/// declined, failed and why, the user's own version), and what stepwise
/// told the model (gate refusals apart), so a resumed session reads like a
/// live one. stepwise's messages are never shown as the user's turns.
fn restored_entries(registry: &Registry, history: &[ChatMessage]) -> Vec<RestoredEntry> {
    let mut out = Vec::new();
    for m in history {
        let text = m.content.as_deref().unwrap_or("").trim();
        match m.role {
            Role::User if text.starts_with(FEEDBACK) => {
                out.push(feedback_entry(text[FEEDBACK.len()..].trim()));
            }
            // A tool's result under `--protocol json`: shown with its call.
            Role::User if text.starts_with("Tool result for ") => {}
            Role::User if !text.is_empty() => out.push(RestoredEntry::User {
                text: text.to_string(),
            }),
            Role::Assistant => {
                if !text.is_empty() {
                    out.push(RestoredEntry::Assistant {
                        text: text.to_string(),
                    });
                }
                for call in &m.tool_calls {
                    let id = registry.identify(&call.function.name);
                    let args: Value =
                        serde_json::from_str(&call.function.arguments).unwrap_or(Value::Null);
                    out.push(RestoredEntry::Tool {
                        name: call.function.name.clone(),
                        arguments: call.function.arguments.clone(),
                        call_id: call.id.clone(),
                        call_kind: kind_of(&id),
                        target: target_of(&args),
                        status: None,
                        detail: String::new(),
                        summary: String::new(),
                        edited: false,
                        output: String::new(),
                    });
                }
            }
            Role::Tool => {
                let Some(call_id) = m.tool_call_id.as_deref() else {
                    continue;
                };
                let entry = out
                    .iter_mut()
                    .rev()
                    .find(|e| matches!(e, RestoredEntry::Tool { call_id: c, .. } if c == call_id));
                if let Some(entry) = entry {
                    settle(entry, text, m.declined);
                }
            }
            _ => {}
        }
    }
    out
}

/// How stepwise's own messages to the model start (`protocol::record_feedback`).
const FEEDBACK: &str = "[stepwise]";

/// A message stepwise sent the model: a gate refusal, or any other notice
/// (its `error`, when it is a JSON result).
fn feedback_entry(text: &str) -> RestoredEntry {
    let error = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_string));
    match error {
        Some(reason) if reason.starts_with(super::session::GATE_REFUSED) => {
            RestoredEntry::Gate { text: reason }
        }
        Some(error) => RestoredEntry::Notice { text: error },
        None => RestoredEntry::Notice {
            text: text.to_string(),
        },
    }
}

/// A call's entry with the result the model got.
fn settle(entry: &mut RestoredEntry, result: &str, was_declined: bool) {
    let RestoredEntry::Tool {
        status,
        detail,
        summary,
        edited,
        output,
        ..
    } = entry
    else {
        return;
    };
    let body: Value = serde_json::from_str(result).unwrap_or(Value::Null);
    let ok = body.get("success").and_then(Value::as_bool) == Some(true);
    *status = Some(match (was_declined, ok) {
        (true, _) => CallStatus::Declined,
        (false, true) => CallStatus::Ok,
        (false, false) => CallStatus::Failed,
    });
    let error = body.get("error").and_then(Value::as_str).unwrap_or(result);
    *detail = match (was_declined, ok) {
        // Only the user's own words: the rest was said to the model.
        (true, _) => error
            .split_once(super::approve::USER_REASON)
            .map(|(_, reason)| reason.to_string())
            .unwrap_or_default(),
        // A test run says its summary; the error was advice to the model.
        (false, false) => match body.get("summary").and_then(Value::as_str) {
            Some(summary) if body.get("output").is_some() => summary.to_string(),
            _ => error.to_string(),
        },
        (false, true) => String::new(),
    };
    *edited = body.get("user_modified").and_then(Value::as_bool) == Some(true);
    if !ok && !was_declined {
        let text = body
            .get("output")
            .and_then(Value::as_str)
            .unwrap_or_default();
        *output = crate::present::output_tail(text, crate::present::FAILURE_TAIL_LINES).join("\n");
    }
    *summary = body
        .get("summary")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
}

/// What a call does, for the rows of a restored session (a live call knows
/// it from its plan; a restored one from its tool).
fn kind_of(id: &ToolId) -> CallKind {
    match id {
        ToolId::Mcp { .. } => CallKind::External,
        ToolId::Unknown(_) => CallKind::Other,
        ToolId::Builtin(name) => match *name {
            ToolName::RUN_TESTS => CallKind::Execute,
            ToolName::WRITE_FILE | ToolName::REPLACE_TEXT | ToolName::APPLY_PATCH => CallKind::Edit,
            _ => CallKind::Read,
        },
    }
}

/// The key argument of a call, as a live row shows it (its path or command).
fn target_of(args: &Value) -> String {
    ["path", "command"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
        .unwrap_or_default()
        .to_string()
}
