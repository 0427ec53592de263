//! Taking a saved session back (`Session::restore`), handing checkpoints to
//! the transcript (`Session::checkpoint`), and the `SessionRestored` event
//! that shows the earlier conversation.
//!
//! What must stay true: a restored session starts with no task running
//! (nothing to `/continue`): the next task is a new one; its change log is
//! the saved one, so `/undo` reverts earlier edits (still refusing a file
//! changed on disk since). A task still running at its last checkpoint was
//! cut off: it is said so (`TaskCutOff`, its changes in `/diff` and
//! `/undo`), and its unanswered tool calls get a result saying why.

use crate::agent::contract::{AgentEvent, CallKind, CallStatus, RestoredEntry};
use crate::agent::history::saved::SavedState;
use crate::agent::session::Session;
use crate::llm::{ChatMessage, Role};
use crate::tools::calls::registry::Registry;
use crate::tools::{ToolId, ToolName};
use serde_json::Value;
use std::collections::HashSet;

/// The outcome a checkpoint names while a task runs.
pub const RUNNING: &str = "running";
/// The outcome of a task whose process stopped while it ran.
pub const CUT_OFF: &str = "cut_off";

/// Tool calls a cut-off task never answered get a result saying so, or the
/// next request would be invalid (every call needs its result).
/// Only the last reply with calls can be unanswered (every earlier one was
/// answered before the next request), and only results after it count:
/// ids repeat across replies (`call_0` for a server that sends none).
fn answer_dangling_calls(history: &mut Vec<ChatMessage>) {
    let Some(last) =
        (history.iter()).rposition(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
    else {
        return;
    };
    let answered: HashSet<String> = (history[last + 1..].iter())
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.clone())
        .collect();
    let dangling: Vec<String> = (history[last].tool_calls.iter())
        .map(|c| c.id.clone())
        .filter(|id| !answered.contains(id))
        .collect();
    let body = serde_json::json!({
        "success": false,
        "error": "stepwise stopped while this call ran, so its result was lost; files it changed are in the session's change log (/diff). Read them again before going on."
    })
    .to_string();
    for id in dangling {
        history.push(ChatMessage::tool_result(id, body.clone()));
    }
}

impl Session {
    /// Send every checkpoint to `sink` (the transcript).
    pub fn on_checkpoint(&mut self, sink: crate::agent::history::saved::CheckpointSink) {
        self.saved.sink = Some(sink);
    }

    /// What resuming this session later needs, as of now.
    pub fn saved_state(&self) -> SavedState {
        SavedState {
            messages: self.history.clone(),
            changes: crate::agent::history::changes_store::encode(&self.changes),
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
        self.saved.behind = false;
    }

    /// A checkpoint after a change in the middle of a task: at once while
    /// the task's checkpoints have cost at most 50 ms plus a tenth of the
    /// task's time, else after a later reply of the model or at a later
    /// change that keeps within that (and always at the task's end). A checkpoint writes the whole state, so it
    /// grows with the session: a session paced by its user's approvals has
    /// every change on disk at once, and a burst of auto-approved edits
    /// spends at most about a tenth of its time on them (1,600 scripted
    /// edits: 122 s with a checkpoint per change, 8 s with this).
    pub(in crate::agent) fn checkpoint_soon(&mut self) {
        const ALLOWANCE: std::time::Duration = std::time::Duration::from_millis(50);
        let (task_started, spent) = self.saved.task_checkpoints;
        if spent > ALLOWANCE + task_started.elapsed() / 10 {
            self.saved.behind = true;
            return;
        }
        let started = std::time::Instant::now();
        self.checkpoint();
        self.saved.task_checkpoints.1 += started.elapsed();
    }

    /// After each reply of the model: a change `checkpoint_soon` left for
    /// later goes to disk now, if the budget allows (the model's time
    /// counts towards it).
    pub(in crate::agent) fn checkpoint_if_behind(&mut self) {
        if self.saved.behind {
            self.checkpoint_soon();
        }
    }

    /// Bring back a saved session (named `from`): its conversation, change
    /// log and totals. A conversation without a system message is refused.
    pub fn restore(&mut self, state: SavedState, from: &str) -> Result<(), String> {
        if state.messages.first().map(|m| m.role) != Some(Role::System) {
            return Err("the saved conversation does not start with a system message".into());
        }
        let changes = crate::agent::history::changes_store::decode(&state.changes)?;
        self.history = state.messages;
        self.changes = changes;
        self.session_usage = state.usage;
        self.session_cost = state.cost_usd;
        self.tasks = state.tasks;
        self.saved.steps = state.steps;
        self.saved.outcome = state.outcome;
        self.saved.restored_from = Some(from.to_string());
        self.carried = None;
        if self.saved.outcome.as_deref() == Some(RUNNING) {
            self.saved.outcome = Some(CUT_OFF.to_string());
            answer_dangling_calls(&mut self.history);
        }
        Ok(())
    }

    /// The events that show a restored conversation, once, when the session
    /// was restored: `SessionRestored`, then `TaskCutOff` if its last task
    /// never finished.
    pub fn restored_events(&self) -> Vec<AgentEvent> {
        let Some(from) = self.saved.restored_from.clone() else {
            return Vec::new();
        };
        let mut events = vec![AgentEvent::SessionRestored {
            session: from,
            entries: restored_entries(&self.registry, &self.history),
            tasks: self.tasks,
            steps: self.saved.steps,
            usage: self.session_usage,
            cost_usd: (self.session_cost > 0.0).then_some(self.session_cost),
        }];
        if self.saved.outcome.as_deref() == Some(CUT_OFF) {
            let files = self.changes.task_contents(self.tasks);
            events.push(AgentEvent::TaskCutOff {
                files: files.into_iter().map(|(path, _, _)| path).collect(),
            });
        }
        events
    }

    /// A task starts: until it finishes, a checkpoint says it is running, so
    /// a session whose process was killed mid-task resumes knowing it.
    pub(in crate::agent) fn note_running(&mut self) {
        self.saved.outcome = Some(RUNNING.to_string());
        self.saved.task_checkpoints = (std::time::Instant::now(), std::time::Duration::ZERO);
        self.checkpoint();
    }

    /// Count a finished task for the session list.
    pub(in crate::agent) fn note_finished(
        &mut self,
        steps: u32,
        outcome: &crate::agent::FinishReason,
    ) {
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
        Some(reason) if reason.starts_with(crate::agent::session::GATE_REFUSED) => {
            RestoredEntry::Gate { text: reason }
        }
        Some(error) => RestoredEntry::Notice { text: error },
        None => RestoredEntry::Notice {
            text: text.to_string(),
        },
    }
}

/// A call's entry with the result the model got (left unsettled when the
/// result says neither success nor failure: compaction replaced it).
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
    // The result's JSON, even with a note after it (a repeated call's).
    let body: Value = serde_json::Deserializer::from_str(result)
        .into_iter::<Value>()
        .next()
        .and_then(Result::ok)
        .unwrap_or(Value::Null);
    let Some(ok) = body
        .get("success")
        .and_then(Value::as_bool)
        .or(was_declined.then_some(false))
    else {
        // A result that says neither (a compaction's stub for an old one):
        // how the call ended is not known any more.
        return;
    };
    *status = Some(match (was_declined, ok) {
        (true, _) => CallStatus::Declined,
        (false, true) => CallStatus::Ok,
        (false, false) => CallStatus::Failed,
    });
    let error = body.get("error").and_then(Value::as_str).unwrap_or(result);
    *detail = match (was_declined, ok) {
        // Only the user's own words: the rest was said to the model.
        (true, _) => error
            .split_once(crate::agent::step::approve::USER_REASON)
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
        *output =
            crate::text::tail::output_tail(text, crate::text::tail::FAILURE_TAIL_LINES).join("\n");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCallMsg;

    #[test]
    fn a_restored_call_says_how_it_ended_and_a_compacted_one_says_nothing() {
        let calls = vec![
            ToolCallMsg::new("a", "read_file", r#"{"path":"a.py"}"#),
            ToolCallMsg::new("b", "write_file", r#"{"path":"b.py"}"#),
            ToolCallMsg::new("c", "run_tests", "{}"),
            ToolCallMsg::new("d", "list_files", "{}"),
        ];
        let history = vec![
            ChatMessage::system("s"),
            ChatMessage::user("task"),
            ChatMessage::assistant_tool_calls("", calls),
            ChatMessage::tool_result("a", r#"{"success":true,"content":"x"}"#),
            ChatMessage::tool_result("b", "declined").declined(true),
            // A repeated call's result carries a note after its JSON.
            ChatMessage::tool_result(
                "c",
                "{\"success\":false,\"error\":\"exit 1\"}\nthis call returned the same result three times",
            ),
            ChatMessage::tool_result("d", "[list_files: 3 entries, elided]"),
        ];
        let statuses: Vec<Option<CallStatus>> = restored_entries(&Registry::default(), &history)
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

    #[test]
    fn a_cut_off_tasks_unanswered_calls_get_a_result_and_answered_ones_keep_theirs() {
        let calls = vec![
            ToolCallMsg::new("c1", "read_file", "{}"),
            ToolCallMsg::new("c2", "write_file", "{}"),
        ];
        // An earlier reply used the same id, answered then.
        let earlier = vec![ToolCallMsg::new("c2", "list_files", "{}")];
        let mut history = vec![
            ChatMessage::user("task"),
            ChatMessage::assistant_tool_calls("", earlier),
            ChatMessage::tool_result("c2", "{\"success\":true}"),
            ChatMessage::assistant_tool_calls("", calls),
            ChatMessage::tool_result("c1", "{\"success\":true}"),
        ];
        answer_dangling_calls(&mut history);
        assert_eq!(history.len(), 6);
        assert_eq!(history[5].tool_call_id.as_deref(), Some("c2"));
        let body = history[5].content.as_deref().unwrap_or("");
        assert!(
            body.contains("stepwise stopped while this call ran"),
            "{body}"
        );
        answer_dangling_calls(&mut history);
        assert_eq!(history.len(), 6, "answered once");
    }
}
