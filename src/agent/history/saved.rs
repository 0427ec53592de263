//! What a session keeps for resuming it later: the exact messages sent to
//! the model, the change log (for `/diff` and `/undo`), token and cost
//! totals, and a few counters for the session list. The core only builds
//! and takes back a [`SavedState`]; writing it to disk (and deciding whether
//! a file on disk may be trusted) is the transcript's business (`resume`).
//!
//! Taking a state back into a session is in `restore`.
//!
//! What must stay true: messages are stored in the wire form the server got
//! (`ChatMessage`'s own serialization); parsing them back never panics on a
//! malformed value, it fails.

use crate::agent::history::changes_store;
use crate::llm::{ChatMessage, Role, TokenUsage, ToolCallMsg};
use serde_json::{Map, Value};

/// Where a session's checkpoints go (set by whoever writes the transcript).
pub type CheckpointSink = Box<dyn FnMut(&SavedState) + Send + Sync>;

/// Everything needed to bring a session back.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedState {
    pub messages: Vec<ChatMessage>,
    /// The change log, encoded as the transcript keeps it (`changes_store`).
    pub changes: Vec<Value>,
    pub usage: TokenUsage,
    pub cost_usd: f64,
    pub tasks: u32,
    pub steps: u32,
    /// How the last task ended, in a word (`answered`, `cancelled`, ...).
    pub outcome: Option<String>,
    /// The model `/model` switched to (`None`: the one the session started
    /// with, which the transcript already names).
    pub model: Option<String>,
}

impl SavedState {
    /// The first task the user gave, for the session list.
    pub fn first_task(&self) -> Option<&str> {
        self.messages
            .iter()
            .find(|m| m.role == Role::User)
            .and_then(|m| m.content.as_deref())
    }

    /// The messages in wire form, and the indexes of declined tool results
    /// (a flag the wire form does not carry).
    pub fn messages_json(&self) -> (Vec<Value>, Vec<usize>) {
        let values = self
            .messages
            .iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect();
        let declined = (self.messages.iter().enumerate())
            .filter(|(_, m)| m.declined)
            .map(|(i, _)| i)
            .collect();
        (values, declined)
    }

    /// The change log entries (see `changes_store`).
    pub fn changes_json(&self) -> Vec<Value> {
        self.changes.clone()
    }

    /// Entries read from a transcript, once checked to decode.
    pub fn changes_from_json(entries: &[Value]) -> Result<Vec<Value>, String> {
        changes_store::decode(entries).map(|_| entries.to_vec())
    }

    /// Encoded entries of these changes, `(task, path, before, after)`
    /// oldest first (for tests and tools that build a state by hand).
    pub fn encode_changes(changes: &[(u32, &str, Option<&str>, Option<&str>)]) -> Vec<Value> {
        let mut log = crate::agent::history::changes::ChangeLog::default();
        for (task, path, before, after) in changes {
            log.record(*task, path, *before, *after);
        }
        changes_store::encode(&log)
    }
}

/// One message back from its wire form.
pub fn message_from_json(value: &Value, declined: bool) -> Result<ChatMessage, String> {
    let role = match value["role"].as_str() {
        Some("system") => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") => Role::Tool,
        _ => return Err("a message has no known role".into()),
    };
    let content = match &value["content"] {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        _ => return Err("a message's content is not text".into()),
    };
    let mut tool_calls = Vec::new();
    if let Some(calls) = value.get("tool_calls") {
        for call in calls.as_array().ok_or("tool_calls is not a list")? {
            let mut extra: Map<String, Value> = call.as_object().cloned().unwrap_or_default();
            let (id, function) = (extra.remove("id"), extra.remove("function"));
            extra.remove("type");
            let id = id
                .as_ref()
                .and_then(Value::as_str)
                .ok_or("a tool call has no id")?;
            let function = function.unwrap_or(Value::Null);
            let (Some(name), Some(arguments)) =
                (function["name"].as_str(), function["arguments"].as_str())
            else {
                return Err("a tool call has no function name or arguments".into());
            };
            tool_calls.push(ToolCallMsg::new(id, name, arguments).with_extra(extra));
        }
    }
    let tool_call_id = match value.get("tool_call_id") {
        None => None,
        Some(v) => Some(v.as_str().ok_or("tool_call_id is not text")?.to_string()),
    };
    // The reasoning a server wants back with a tool-calling turn (see `llm::wire`).
    let reasoning: Map<String, Value> = ["reasoning_content", "reasoning_details"]
        .iter()
        .filter_map(|key| Some((key.to_string(), value.get(*key)?.clone())))
        .filter(|(_, v)| !v.is_null())
        .collect();
    Ok(ChatMessage {
        role,
        content,
        tool_calls,
        tool_call_id,
        declined,
        reasoning,
    })
}

/// The session's own bookkeeping for checkpoints.
pub(in crate::agent) struct Bookkeeping {
    pub(in crate::agent) steps: u32,
    pub(in crate::agent) outcome: Option<String>,
    pub(in crate::agent) sink: Option<CheckpointSink>,
    /// The transcript this session was restored from (its name).
    pub(in crate::agent) restored_from: Option<String>,
    /// The model `/model` switched to, if it did.
    pub(in crate::agent) model: Option<String>,
    /// When the running task started, and the time its checkpoints took
    /// (see `Session::checkpoint_soon`).
    pub(in crate::agent) task_checkpoints: (std::time::Instant, std::time::Duration),
    /// A change is not on disk yet (its checkpoint was put off).
    pub(in crate::agent) behind: bool,
}

impl Default for Bookkeeping {
    fn default() -> Self {
        Bookkeeping {
            steps: 0,
            outcome: None,
            sink: None,
            restored_from: None,
            model: None,
            task_checkpoints: (std::time::Instant::now(), std::time::Duration::ZERO),
            behind: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_come_back_from_their_wire_form_exactly() {
        let mut extra = Map::new();
        extra.insert("extra_content".into(), serde_json::json!({"sig": "abc"}));
        let mut reasoning = Map::new();
        reasoning.insert("reasoning_content".into(), "think first".into());
        reasoning.insert(
            "reasoning_details".into(),
            serde_json::json!([{"type": "reasoning.text", "text": "t", "index": 0}]),
        );
        let messages = vec![
            ChatMessage::system("sys"),
            ChatMessage::user("task"),
            ChatMessage::assistant_tool_calls(
                "",
                vec![ToolCallMsg::new("c1", "read_file", "{\"path\":\"a\"}").with_extra(extra)],
            )
            .with_reasoning(reasoning),
            ChatMessage::tool_result("c1", "declined").declined(true),
            ChatMessage::assistant("done"),
        ];
        let state = SavedState {
            messages: messages.clone(),
            changes: vec![],
            usage: TokenUsage::default(),
            cost_usd: 0.0,
            tasks: 1,
            steps: 2,
            outcome: None,
            model: None,
        };
        let (values, declined) = state.messages_json();
        assert_eq!(declined, vec![3]);
        let back: Vec<_> = (values.iter().enumerate())
            .map(|(i, v)| message_from_json(v, declined.contains(&i)).unwrap())
            .collect();
        assert_eq!(back, messages);
        assert_eq!(state.first_task(), Some("task"));
    }

    #[test]
    fn malformed_messages_are_errors() {
        for bad in [
            serde_json::json!({"role": "root", "content": "x"}),
            serde_json::json!({"role": "user", "content": 5}),
            serde_json::json!({"role": "assistant", "content": null, "tool_calls": [{"id": "1"}]}),
            serde_json::json!({"role": "tool", "content": "x", "tool_call_id": 7}),
            serde_json::json!(null),
        ] {
            assert!(message_from_json(&bad, false).is_err(), "{bad}");
        }
    }
}
