//! Taking a saved session back (`Session::restore`), handing checkpoints to
//! the transcript (`Session::checkpoint`), and the `SessionRestored` event
//! that shows the earlier conversation.
//!
//! What must stay true: a restored session starts with no task running
//! (nothing to `/continue`): the next task is a new one; its change log is
//! the saved one, so `/undo` reverts earlier edits (still refusing a file
//! changed on disk since).

use super::contract::{AgentEvent, CallStatus, RestoredEntry};
use super::saved::SavedState;
use super::session::Session;
use crate::llm::{ChatMessage, Role};

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
            entries: restored_entries(&self.history),
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

/// The conversation as the user saw it: their tasks, the model's text and
/// the tools it called with how each ended (results are not repeated).
fn restored_entries(history: &[ChatMessage]) -> Vec<RestoredEntry> {
    let mut out = Vec::new();
    for m in history {
        let text = m.content.as_deref().unwrap_or("").trim();
        match m.role {
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
                    out.push(RestoredEntry::Tool {
                        name: call.function.name.clone(),
                        arguments: call.function.arguments.clone(),
                        status: status_of(history, &call.id),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// How the call `id` ended, from its result in the conversation: declined,
/// or the result's `success` field. `None` when the result is gone or was
/// replaced by a stub (compaction) that says neither.
fn status_of(history: &[ChatMessage], id: &str) -> Option<CallStatus> {
    let result = history
        .iter()
        .find(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(id))?;
    if result.declined {
        return Some(CallStatus::Declined);
    }
    let body: serde_json::Value = serde_json::from_str(result.content.as_deref()?).ok()?;
    match body.get("success")?.as_bool()? {
        true => Some(CallStatus::Ok),
        false => Some(CallStatus::Failed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCallMsg;

    #[test]
    fn a_restored_tool_call_says_how_it_ended() {
        let calls = vec![
            ToolCallMsg::new("a", "read_file", "{}"),
            ToolCallMsg::new("b", "write_file", "{}"),
            ToolCallMsg::new("c", "run_tests", "{}"),
            ToolCallMsg::new("d", "list_files", "{}"),
        ];
        let history = vec![
            ChatMessage::system("s"),
            ChatMessage::user("task"),
            ChatMessage::assistant_tool_calls("", calls),
            ChatMessage::tool_result("a", r#"{"success":true,"content":"x"}"#),
            ChatMessage::tool_result("b", "declined").declined(true),
            ChatMessage::tool_result("c", r#"{"success":false,"error":"exit 1"}"#),
            ChatMessage::tool_result("d", "[elided]"),
        ];
        let statuses: Vec<Option<CallStatus>> = restored_entries(&history)
            .into_iter()
            .filter_map(|e| match e {
                RestoredEntry::Tool { status, .. } => Some(status),
                _ => None,
            })
            .collect();
        assert_eq!(
            statuses,
            vec![
                Some(CallStatus::Ok),
                Some(CallStatus::Declined),
                Some(CallStatus::Failed),
                None
            ]
        );
    }
}
