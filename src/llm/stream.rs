//! Assembling a reply from streamed chat-completion chunks (or one JSON body),
//! tolerant of what real OpenAI-compatible servers send: tool-call deltas
//! without `index`, arguments split anywhere, `finish_reason: ""`, usage in a
//! final chunk without choices, `usage: {}`, unknown extra fields (ignored,
//! except on a tool call, where they are kept to be sent back).
//!
//! Parallel calls are told apart by `index`, and by `id` when one arrives at
//! an index already in use with another id (Ollama streams every parallel
//! call at `index: 0`). Reasoning is kept to be sent back with a turn that
//! calls tools: DeepSeek's `reasoning_content` pieces joined, OpenRouter's
//! `reasoning_details` pieces merged by their `index` (their texts joined,
//! other fields as they came).
//!
//! OpenAI's `refusal` (streamed like content) makes the reply a refusal:
//! its text as the content, `"refusal"` as the finish reason.
//!
//! What one reply keeps (text, reasoning, tool calls) is counted as it
//! grows and held to the caps of `limits`; past one, the reply ends with
//! that error.
//!
//! `<think>…</think>` blocks in the content (Qwen3, DeepSeek-R1 distills
//! and others behind servers without a reasoning parser) are thinking, not
//! the answer: the reply's content comes without them.

use super::errors::inline_error;
use super::limits;
use super::{LlmError, ModelReply, TokenUsage, ToolCallMsg};
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Chunk {
    choices: Option<Vec<Choice>>,
    usage: Option<WireUsage>,
    /// An error reported inside a 200 reply (OpenAI, OpenRouter).
    error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Choice {
    /// Streaming chunks carry `delta`, complete bodies carry `message`.
    delta: Option<Delta>,
    message: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Delta {
    content: Option<String>,
    tool_calls: Option<Vec<ToolCallDelta>>,
    /// DeepSeek's thinking text (also vLLM's and xAI's).
    reasoning_content: Option<String>,
    /// OpenRouter's structured reasoning, streamed in pieces.
    reasoning_details: Option<Vec<Value>>,
    /// OpenAI's refusal text, in place of the content.
    refusal: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ToolCallDelta {
    index: Option<usize>,
    id: Option<String>,
    /// Always `"function"`; read so that it is not kept as an unknown field.
    #[serde(rename = "type")]
    _kind: Option<Value>,
    function: Option<FunctionDelta>,
    /// Fields stepwise does not know (e.g. Gemini's `extra_content`).
    #[serde(flatten)]
    extra: Map<String, Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FunctionDelta {
    name: Option<String>,
    /// A JSON text per the spec; some servers send an object instead.
    arguments: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    extra: Map<String, Value>,
}

/// Accumulates chunks of one streamed reply.
#[derive(Debug, Default)]
pub struct StreamAccumulator {
    content: String,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<TokenUsage>,
    /// Argument fragments not yet reported: (call position, fragment).
    fragments: Vec<(usize, String)>,
    reasoning_content: String,
    reasoning_details: Vec<Value>,
    refusal: String,
    /// Pieces of the reply received so far (text, reasoning, arguments):
    /// what tells a model that is producing from a connection kept alive.
    tokens: u64,
    /// Bytes kept besides `content`, `refusal` and `reasoning_content`:
    /// reasoning details and tool calls (see `limits::PER_PART_BYTES`).
    parts_bytes: usize,
    /// The position in `calls` of the last call at each `index`.
    by_index: std::collections::HashMap<usize, usize>,
}

impl StreamAccumulator {
    /// Argument fragments received since the last call, with their call's
    /// position and name (for live previews of a call still streaming).
    pub fn take_argument_fragments(&mut self) -> Vec<(usize, String, String)> {
        std::mem::take(&mut self.fragments)
            .into_iter()
            .map(|(i, f)| (i, self.calls[i].name.clone(), f))
            .collect()
    }

    /// Feed the `data:` of one SSE event (not `[DONE]`). Returns the text delta, if any.
    pub fn push_data(&mut self, data: &str) -> Result<Option<String>, LlmError> {
        let chunk: Chunk = serde_json::from_str(data)
            .map_err(|e| LlmError::Decode(format!("{e} in chunk {}", clip(data))))?;
        self.push_chunk(chunk)
    }

    /// Take in one chunk; an error it reports (an `error` member, or
    /// `finish_reason: "error"`) ends the reply with that error.
    fn push_chunk(&mut self, chunk: Chunk) -> Result<Option<String>, LlmError> {
        if let Some(error) = chunk.error.as_ref().and_then(inline_error) {
            return Err(error.into_llm_error());
        }
        if let Some(usage) = chunk.usage {
            // `usage: {}` carries nothing; keep whatever we had.
            if usage.prompt_tokens.is_some() || usage.completion_tokens.is_some() {
                self.usage = Some(TokenUsage {
                    prompt_tokens: usage.prompt_tokens.unwrap_or(0),
                    completion_tokens: usage.completion_tokens.unwrap_or(0),
                    cached_tokens: usage
                        .prompt_tokens_details
                        .and_then(|d| d.cached_tokens)
                        .unwrap_or(0),
                    cache_write_tokens: 0,
                });
            }
        }
        let mut text = None;
        for choice in chunk.choices.unwrap_or_default() {
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                if reason == "error" {
                    return Err(LlmError::Server {
                        message:
                            "the server ended the reply with finish_reason \"error\" and no message"
                                .into(),
                        transient: false,
                    });
                }
                self.finish_reason = Some(reason);
            }
            let Some(delta) = choice.delta.or(choice.message) else {
                continue;
            };
            if let Some(content) = delta.content.filter(|c| !c.is_empty()) {
                self.tokens += 1;
                self.content.push_str(&content);
                text.get_or_insert_with(String::new).push_str(&content);
            }
            if let Some(refusal) = delta.refusal.filter(|r| !r.is_empty()) {
                self.tokens += 1;
                self.refusal.push_str(&refusal);
            }
            if let Some(reasoning) = delta.reasoning_content.filter(|r| !r.is_empty()) {
                self.tokens += 1;
                self.reasoning_content.push_str(&reasoning);
            }
            for piece in delta.reasoning_details.unwrap_or_default() {
                self.tokens += 1;
                self.parts_bytes += limits::PER_PART_BYTES + value_bytes(&piece);
                merge_detail(&mut self.reasoning_details, piece);
            }
            for call in delta.tool_calls.unwrap_or_default() {
                self.tokens += 1;
                self.push_call_delta(call)?;
            }
        }
        let kept = self.content.len()
            + self.refusal.len()
            + self.reasoning_content.len()
            + self.parts_bytes;
        limits::check(kept, None)?;
        Ok(text)
    }

    fn push_call_delta(&mut self, delta: ToolCallDelta) -> Result<(), LlmError> {
        let id = delta.id.filter(|id| !id.is_empty());
        let position = match delta.index {
            Some(index) => match self.by_index.get(&index).copied() {
                // Another id at an index in use is another call (Ollama's parallel calls).
                Some(p)
                    if id.as_ref().is_some_and(|id| {
                        !self.calls[p].id.is_empty() && &self.calls[p].id != id
                    }) =>
                {
                    None
                }
                found => found,
            },
            // Without an index, a new id starts a new call; otherwise it continues the last one.
            None => match &id {
                Some(id)
                    if self
                        .calls
                        .last()
                        .is_none_or(|c| !c.id.is_empty() && &c.id != id) =>
                {
                    None
                }
                _ => self.calls.len().checked_sub(1),
            },
        };
        let position = position.unwrap_or_else(|| {
            self.calls.push(PartialCall::default());
            if let Some(index) = delta.index {
                self.by_index.insert(index, self.calls.len() - 1);
            }
            self.parts_bytes += limits::PER_PART_BYTES;
            self.calls.len() - 1
        });
        let call = &mut self.calls[position];
        if let Some(id) = id {
            self.parts_bytes += id.len();
            call.id = id;
        }
        // Later deltas may repeat or complete a field; the last value wins.
        for (key, value) in delta.extra.into_iter().filter(|(_, v)| !v.is_null()) {
            self.parts_bytes += key.len() + value_bytes(&value);
            call.extra.insert(key, value);
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                // Some servers repeat the whole name in every delta; others split it.
                if call.name != name {
                    self.parts_bytes += name.len();
                    call.name.push_str(&name);
                }
            }
            let fragment = match function.arguments {
                Some(Value::String(part)) => part,
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            if !fragment.is_empty() {
                self.parts_bytes += fragment.len();
                call.arguments.push_str(&fragment);
                limits::check(0, Some((&call.name, call.arguments.len())))?;
                self.fragments.push((position, fragment));
            }
        }
        Ok(())
    }

    /// How many pieces of the reply (text, reasoning, arguments) came so far.
    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    /// True once a finish reason was seen.
    pub fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// The assembled reply. Calls without an id get a generated one.
    pub fn into_reply(self) -> ModelReply {
        let tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let id = if c.id.is_empty() {
                    format!("call_{i}")
                } else {
                    c.id
                };
                ToolCallMsg::new(id, c.name, c.arguments).with_extra(c.extra)
            })
            .collect();
        let mut reasoning = Map::new();
        if !self.reasoning_content.is_empty() {
            reasoning.insert(
                "reasoning_content".into(),
                Value::String(self.reasoning_content),
            );
        }
        if !self.reasoning_details.is_empty() {
            reasoning.insert(
                "reasoning_details".into(),
                Value::Array(self.reasoning_details),
            );
        }
        // A refusal (OpenAI's `refusal` field) is the reply, and says so.
        let (content, finish_reason) = if self.refusal.is_empty() {
            (without_think(self.content), self.finish_reason)
        } else {
            (self.refusal, Some("refusal".to_string()))
        };
        ModelReply {
            content,
            tool_calls,
            finish_reason,
            usage: self.usage,
            reasoning,
        }
    }
}

/// The content without its `<think>…</think>` blocks. A `</think>` with no
/// opening tag (chat templates that put `<think>` in the prompt) ends
/// thinking that began with the reply; a block never closed runs to the end.
pub fn without_think(content: String) -> String {
    const OPEN: &str = "<think>";
    const CLOSE: &str = "</think>";
    if !content.contains(CLOSE) && !content.contains(OPEN) {
        return content;
    }
    let mut rest = content.as_str();
    // Thinking that began before the reply did.
    if let Some(close) = rest.find(CLOSE)
        && rest.find(OPEN).is_none_or(|open| open > close)
    {
        rest = rest.get(close + CLOSE.len()..).unwrap_or_default();
    }
    let mut answer = String::new();
    while let Some(open) = rest.find(OPEN) {
        answer.push_str(rest.get(..open).unwrap_or_default());
        let after = rest.get(open + OPEN.len()..).unwrap_or_default();
        rest = match after.find(CLOSE) {
            Some(close) => after.get(close + CLOSE.len()..).unwrap_or_default(),
            None => "",
        };
    }
    answer.push_str(rest);
    answer.trim_start().to_string()
}

/// Add one streamed piece of OpenRouter's `reasoning_details`: a piece with
/// the `index` and `type` of one already there continues it (its text,
/// summary or encrypted data appended, other fields set), any other is a
/// new entry. Entries keep the order they came in, as OpenRouter wants them back.
fn merge_detail(details: &mut Vec<Value>, piece: Value) {
    let Value::Object(piece) = piece else { return };
    let index = piece.get("index").filter(|i| i.is_u64()).cloned();
    let existing = index.and_then(|index| {
        details
            .iter_mut()
            .rev()
            .find(|d| d.get("index") == Some(&index) && d.get("type") == piece.get("type"))
    });
    let Some(Value::Object(existing)) = existing else {
        details.push(Value::Object(piece));
        return;
    };
    for (key, value) in piece {
        if value.is_null() {
            continue;
        }
        if matches!(key.as_str(), "text" | "summary" | "data")
            && let (Some(Value::String(old)), Value::String(more)) =
                (existing.get_mut(&key), &value)
        {
            old.push_str(more);
            continue;
        }
        existing.insert(key, value);
    }
}

/// Roughly how many bytes a JSON value holds (its strings and keys, and a
/// few for every other value).
fn value_bytes(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(value_bytes).sum::<usize>() + 8,
        Value::Object(map) => {
            map.iter()
                .map(|(k, v)| k.len() + value_bytes(v))
                .sum::<usize>()
                + 8
        }
        _ => 8,
    }
}

/// Parse a complete (non-streaming) chat-completions JSON body.
pub fn parse_completion_body(body: &str) -> Result<ModelReply, LlmError> {
    if body.trim().is_empty() {
        return Err(LlmError::EmptyReply);
    }
    let value: Value = serde_json::from_str(body)
        .map_err(|e| LlmError::Decode(format!("{e} in body {}", clip(body))))?;
    let has_choices = value
        .get("choices")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty());
    if !has_choices {
        // An error in a 200 body, in whichever shape: `{"error": ...}`,
        // vLLM's `{"object": "error", ...}`, or a bare `message`/`detail`.
        let error = super::errors::error_object(&value)
            .or_else(|| value.get("message").filter(|m| m.is_string()))
            .or_else(|| value.get("detail").filter(|m| m.is_string()));
        if let Some(error) = error.and_then(inline_error) {
            return Err(error.into_llm_error());
        }
        return Err(LlmError::Decode(format!(
            "no choices in body {}",
            clip(body)
        )));
    }
    let chunk: Chunk = serde_json::from_value(value)
        .map_err(|e| LlmError::Decode(format!("{e} in body {}", clip(body))))?;
    let mut acc = StreamAccumulator::default();
    acc.push_chunk(chunk)?;
    let mut reply = acc.into_reply();
    reply.finish_reason.get_or_insert_with(|| "stop".into());
    Ok(reply)
}

fn clip(s: &str) -> String {
    const MAX: usize = 200;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
