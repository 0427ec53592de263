//! The request body of Anthropic's Messages API, from the conversation the
//! agent keeps in chat-completions form: system messages go to `system`,
//! tool calls become `tool_use` blocks and their answers `tool_result`
//! blocks in a user turn, consecutive turns of one role are merged (the API
//! wants user and assistant to alternate), and OpenAI `tools` become
//! `{name, description, input_schema}`.
//!
//! Prompt caching: cache breakpoints (`cache_control`) go on the last tool,
//! the system prompt, and the last block of each of the two latest user
//! turns (the newest step, and the one the previous request ended with),
//! at most four as the API allows. The conversation only grows between
//! steps, so what one request marks is a byte-identical prefix of the next,
//! which then reads it from the cache.
//!
//! What must stay true: every tool call's id reaches the API unchanged, and
//! its answer carries the same id; no empty text block is sent (the API
//! refuses them); arguments that are not a JSON object (a model's broken
//! call) are sent as an object holding the raw text, never dropped.

use crate::llm::{ChatMessage, ChatRequest, Role};
use serde_json::{Map, Value, json};

/// Output tokens asked for per reply (`max_tokens` is required by the API);
/// every current Claude model allows at least this many.
pub const MAX_TOKENS: u32 = 8192;

/// The whole body of one streaming request.
pub fn body(model: &str, request: &ChatRequest<'_>) -> Value {
    let (system, messages) = convert(request.messages);
    let mut body = json!({
        "model": model,
        "max_tokens": MAX_TOKENS,
        "messages": messages,
        "stream": true,
    });
    let mut breakpoints = 0;
    if !system.is_empty() {
        body["system"] = json!([{"type": "text", "text": system, "cache_control": ephemeral()}]);
        breakpoints += 1;
    }
    if let Some(tools) = request.tools.and_then(Value::as_array) {
        let mut tools: Vec<Value> = tools.iter().filter_map(tool).collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral();
            breakpoints += 1;
        }
        body["tools"] = Value::Array(tools);
    }
    if let Some(turns) = body["messages"].as_array_mut() {
        mark_latest_user_turns(turns, MAX_BREAKPOINTS - breakpoints);
    }
    body
}

/// Most `cache_control` breakpoints one request may carry.
pub const MAX_BREAKPOINTS: usize = 4;

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// A breakpoint on the last block of the latest user turns, two at most
/// (and no more than `left`).
fn mark_latest_user_turns(turns: &mut [Value], left: usize) {
    let marked = turns
        .iter_mut()
        .rev()
        .filter(|t| t["role"] == "user")
        .take(left.min(2));
    for turn in marked {
        if let Some(block) = turn["content"].as_array_mut().and_then(|b| b.last_mut()) {
            block["cache_control"] = ephemeral();
        }
    }
}

/// The system text and the alternating user/assistant turns.
fn convert(messages: &[ChatMessage]) -> (String, Vec<Value>) {
    let mut system = Vec::new();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message.role {
            Role::System => {
                if let Some(text) = message.content.as_deref().filter(|t| !t.is_empty()) {
                    system.push(text);
                }
                continue;
            }
            Role::User => ("user", text_block(message.content.as_deref())),
            Role::Assistant => ("assistant", assistant_blocks(message)),
            Role::Tool => ("user", vec![tool_result(message)]),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let turns = turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    (system.join("\n\n"), turns)
}

fn text_block(text: Option<&str>) -> Vec<Value> {
    match text {
        Some(text) if !text.is_empty() => vec![json!({"type": "text", "text": text})],
        _ => Vec::new(),
    }
}

fn assistant_blocks(message: &ChatMessage) -> Vec<Value> {
    let mut blocks = text_block(message.content.as_deref());
    for call in &message.tool_calls {
        let input = match serde_json::from_str::<Value>(&call.function.arguments) {
            Ok(Value::Object(map)) => Value::Object(map),
            _ if call.function.arguments.trim().is_empty() => Value::Object(Map::new()),
            _ => json!({"_raw_arguments": call.function.arguments}),
        };
        blocks.push(json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.function.name,
            "input": input,
        }));
    }
    blocks
}

fn tool_result(message: &ChatMessage) -> Value {
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": message.tool_call_id.clone().unwrap_or_default(),
        "content": message.content.clone().unwrap_or_default(),
    });
    if message.declined {
        block["is_error"] = Value::Bool(true);
    }
    block
}

/// One OpenAI `{"type":"function","function":{...}}` tool in Anthropic's shape.
fn tool(tool: &Value) -> Option<Value> {
    let function = tool.get("function")?;
    let schema = function
        .get("parameters")
        .cloned()
        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    Some(json!({
        "name": function.get("name")?,
        "description": function.get("description").cloned().unwrap_or_default(),
        "input_schema": schema,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCallMsg;

    #[test]
    fn system_is_separate_and_tool_turns_become_blocks_with_their_ids() {
        let messages = vec![
            ChatMessage::system("be careful"),
            ChatMessage::user("add divide"),
            ChatMessage::assistant_tool_calls(
                "Reading.",
                vec![ToolCallMsg::new(
                    "toolu_1",
                    "read_file",
                    r#"{"path":"a.py"}"#,
                )],
            ),
            ChatMessage::tool_result("toolu_1", "def add(): ..."),
            ChatMessage::user("and tests"),
            ChatMessage::assistant_tool_calls("", vec![ToolCallMsg::new("toolu_2", "x", "")]),
            ChatMessage::tool_result("toolu_2", "no").declined(true),
        ];
        let tools = json!([{"type": "function", "function": {"name": "read_file", "description": "Read", "parameters": {"type": "object"}}}]);
        let request = ChatRequest {
            messages: &messages,
            tools: Some(&tools),
        };
        let body = body("claude-x", &request);
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "be careful", "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(body["max_tokens"], MAX_TOKENS);
        assert_eq!(body["stream"], true);
        assert_eq!(
            body["tools"],
            json!([{"name": "read_file", "description": "Read", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}])
        );
        let turns = body["messages"].as_array().unwrap();
        let roles: Vec<_> = turns.iter().map(|t| t["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
        assert_eq!(
            turns[1]["content"][1],
            json!({"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}})
        );
        assert_eq!(
            turns[2]["content"],
            json!([
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "def add(): ..."},
                {"type": "text", "text": "and tests", "cache_control": {"type": "ephemeral"}}
            ]),
            "a tool result and the next user message merge into one user turn"
        );
        assert_eq!(turns[3]["content"][0]["input"], json!({}));
        assert_eq!(turns[4]["content"][0]["is_error"], true);
        assert_eq!(turns[4]["content"][0]["cache_control"]["type"], "ephemeral");
        assert!(turns[0]["content"][0].get("cache_control").is_none());
        let marks = body.to_string().matches("cache_control").count();
        assert_eq!(marks, MAX_BREAKPOINTS);
    }

    #[test]
    fn broken_arguments_are_kept_as_raw_text() {
        let messages = vec![
            ChatMessage::user("go"),
            ChatMessage::assistant_tool_calls("", vec![ToolCallMsg::new("t", "x", "{not json")]),
        ];
        let request = ChatRequest {
            messages: &messages,
            tools: None,
        };
        let body = body("m", &request);
        assert_eq!(
            body["messages"][1]["content"][0]["input"],
            json!({"_raw_arguments": "{not json"})
        );
        assert!(body.get("tools").is_none() && body.get("system").is_none());
    }
}
