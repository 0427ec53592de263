//! Messages in OpenAI chat-completions format, as sent in `messages`.
//! Fields a server attached to a tool call that stepwise does not know (e.g.
//! Gemini's `extra_content` thought signatures) are kept and sent back as
//! they came: some servers refuse a history without them.
//!
//! The reasoning of an assistant turn that called tools (DeepSeek's
//! `reasoning_content`, OpenRouter's `reasoning_details`) travels with that
//! turn in `reasoning`, sent back next to `content` as the providers ask:
//! DeepSeek answers 400 to a tool-call turn without it. A turn without tool
//! calls never carries it (DeepSeek ignores it there; the agent drops it).

use serde::Serialize;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// The `function` part of a tool call; `arguments` is a JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionCall {
    pub name: String,
    pub arguments: String,
}

/// One entry of an assistant message's `tool_calls`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCallMsg {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionCall,
    /// Unknown fields of the call as the server sent them, echoed back unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolCallMsg {
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCallMsg {
            id: id.into(),
            kind: "function",
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
            extra: Map::new(),
        }
    }

    /// The same call carrying the server's unknown fields.
    pub fn with_extra(mut self, extra: Map<String, Value>) -> Self {
        self.extra = extra;
        self
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatMessage {
    pub role: Role,
    /// `null` only for an assistant message that carries tool calls and no text.
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallMsg>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// This message answers a tool call the user declined. Never sent to the
    /// server; a scripted model reads it instead of the text.
    #[serde(skip)]
    pub declined: bool,
    /// Reasoning the server wants back with this (tool-calling assistant)
    /// turn: `reasoning_content` and/or `reasoning_details`, as they came.
    #[serde(flatten)]
    pub reasoning: Map<String, Value>,
}

impl ChatMessage {
    fn text(role: Role, content: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            declined: false,
            reasoning: Map::new(),
        }
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::text(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::text(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::text(Role::Assistant, content)
    }

    /// An assistant turn that called tools (its text, if any, is kept).
    pub fn assistant_tool_calls(content: &str, tool_calls: Vec<ToolCallMsg>) -> Self {
        ChatMessage {
            role: Role::Assistant,
            content: (!content.is_empty()).then(|| content.to_string()),
            tool_calls,
            tool_call_id: None,
            declined: false,
            reasoning: Map::new(),
        }
    }

    /// The same turn carrying the reasoning the server wants back with it.
    pub fn with_reasoning(mut self, reasoning: Map<String, Value>) -> Self {
        self.reasoning = reasoning;
        self
    }

    /// The answer to one tool call.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
            declined: false,
            reasoning: Map::new(),
        }
    }

    /// Mark this message as the answer to a declined call.
    pub fn declined(mut self, declined: bool) -> Self {
        self.declined = declined;
        self
    }
}
