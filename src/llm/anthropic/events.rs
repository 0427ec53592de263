//! Assembling a reply from the events of an Anthropic Messages stream:
//! `message_start` (input usage, cache tokens), `content_block_start` (text,
//! or `tool_use` with its id and name), `content_block_delta` (`text_delta`,
//! `input_json_delta` pieces split anywhere), `content_block_stop`,
//! `message_delta` (stop reason, output usage), `message_stop`, `ping`, and
//! `error` inside the 200 stream.
//!
//! What must stay true: the stop reason arrives in chat-completions words
//! (`max_tokens` and `model_context_window_exceeded` → `"length"`, so the
//! agent's cut-at-the-limit handling applies; `tool_use` → `"tool_calls"`;
//! `end_turn`/`stop_sequence` → `"stop"`; `refusal` stays `"refusal"`,
//! which the agent records as a refusal, never as an answer); an `error` event ends the reply with the server's message,
//! transient when its type says so; block kinds stepwise does not know
//! (thinking) are skipped, never an error; what the reply keeps is held to
//! the caps of `limits` after every event.

use crate::llm::errors::inline_error;
use crate::llm::{LlmError, ModelReply, StreamDelta, TokenUsage, ToolCallMsg};
use serde_json::Value;

/// One content block as it streams in.
#[derive(Debug)]
enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        input: String,
        /// Position among the reply's tool calls.
        call: usize,
    },
    Other,
}

/// Accumulates the events of one streamed reply.
#[derive(Debug, Default)]
pub struct EventAccumulator {
    content: String,
    blocks: Vec<(u64, Block)>,
    calls: usize,
    stop_reason: Option<String>,
    usage: TokenUsage,
    saw_usage: bool,
    stopped: bool,
    /// Content deltas so far (text, arguments, thinking): pieces of the reply.
    tokens: u64,
    /// Bytes kept for the blocks besides `content` (see `limits::PER_PART_BYTES`).
    parts_bytes: usize,
}

/// What one event added, for the live view.
pub enum Added {
    Nothing,
    Text(String),
    Arguments {
        call: usize,
        name: String,
        fragment: String,
    },
}

impl Added {
    /// Report this piece to the sink.
    pub fn report(&self, sink: &mut (dyn FnMut(StreamDelta<'_>) + Send)) {
        match self {
            Added::Nothing => {}
            Added::Text(text) => sink(StreamDelta::Text(text)),
            Added::Arguments {
                call,
                name,
                fragment,
            } => sink(StreamDelta::ToolArguments {
                index: *call,
                name,
                fragment,
            }),
        }
    }
}

impl EventAccumulator {
    /// Feed the `data:` of one event (its `type` names the event).
    pub fn push(&mut self, data: &str) -> Result<Added, LlmError> {
        let event: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::Decode(format!("{e} in event {}", clip(data))))?;
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        match event.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => self.add_usage(event.pointer("/message/usage")),
            "content_block_start" => self.start_block(index, event.get("content_block")),
            "content_block_delta" => {
                let added = self.delta(index, event.get("delta"));
                self.within_limits(index)?;
                return Ok(added);
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                self.add_usage(event.get("usage"));
            }
            "message_stop" => self.stopped = true,
            "error" => return Err(stream_error(event.get("error"))),
            // ping, content_block_stop, and events added later.
            _ => {}
        }
        self.within_limits(index)?;
        Ok(Added::Nothing)
    }

    /// The reply's size, and its largest call's arguments, held to the caps.
    /// (Only the call at `index` can have grown.)
    fn within_limits(&self, index: u64) -> Result<(), LlmError> {
        let call = self.blocks.iter().rev().find(|(i, _)| *i == index);
        let call = match call {
            Some((_, Block::ToolUse { name, input, .. })) => Some((name.as_str(), input.len())),
            _ => None,
        };
        crate::llm::limits::check(self.content.len() + self.parts_bytes, call)
    }

    fn start_block(&mut self, index: u64, block: Option<&Value>) {
        let kind = block.and_then(|b| b.get("type")).and_then(Value::as_str);
        let text = |key| {
            block
                .and_then(|b| b.get(key))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let block = match kind {
            Some("text") => {
                self.content.push_str(&text("text"));
                Block::Text
            }
            Some("tool_use") => {
                self.calls += 1;
                self.parts_bytes += text("id").len() + text("name").len();
                Block::ToolUse {
                    id: text("id"),
                    name: text("name"),
                    input: String::new(),
                    call: self.calls - 1,
                }
            }
            _ => Block::Other,
        };
        self.parts_bytes += crate::llm::limits::PER_PART_BYTES;
        self.blocks.push((index, block));
    }

    fn delta(&mut self, index: u64, delta: Option<&Value>) -> Added {
        self.tokens += 1;
        let piece = |key| delta.and_then(|d| d.get(key)).and_then(Value::as_str);
        let Some((_, block)) = self.blocks.iter_mut().rev().find(|(i, _)| *i == index) else {
            return Added::Nothing;
        };
        match block {
            Block::Text => match piece("text").filter(|t| !t.is_empty()) {
                Some(text) => {
                    self.content.push_str(text);
                    Added::Text(text.to_string())
                }
                None => Added::Nothing,
            },
            Block::ToolUse {
                name, input, call, ..
            } => match piece("partial_json").filter(|t| !t.is_empty()) {
                Some(fragment) => {
                    self.parts_bytes += fragment.len();
                    input.push_str(fragment);
                    Added::Arguments {
                        call: *call,
                        name: name.clone(),
                        fragment: fragment.to_string(),
                    }
                }
                None => Added::Nothing,
            },
            Block::Other => Added::Nothing,
        }
    }

    /// `message_start` carries the input side, `message_delta` the output
    /// count so far (cumulative): the last value of each field wins.
    fn add_usage(&mut self, usage: Option<&Value>) {
        let Some(usage) = usage else { return };
        let field = |key| usage.get(key).and_then(Value::as_u64);
        let (input, created, read) = (
            field("input_tokens"),
            field("cache_creation_input_tokens"),
            field("cache_read_input_tokens"),
        );
        if input.is_some() || created.is_some() || read.is_some() {
            // The API counts cached tokens apart; the accounting wants them in the prompt.
            self.usage.prompt_tokens =
                input.unwrap_or(0) + created.unwrap_or(0) + read.unwrap_or(0);
            self.usage.cached_tokens = read.unwrap_or(0);
            self.usage.cache_write_tokens = created.unwrap_or(0);
            self.saw_usage = true;
        }
        if let Some(output) = field("output_tokens") {
            self.usage.completion_tokens = output;
            self.saw_usage = true;
        }
    }

    /// How many pieces of the reply (content deltas of any block) came so far.
    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    /// True once `message_stop` (or a stop reason) arrived.
    pub fn finished(&self) -> bool {
        self.stopped || self.stop_reason.is_some()
    }

    /// The assembled reply, its stop reason in chat-completions words.
    pub fn into_reply(self) -> ModelReply {
        let tool_calls = self
            .blocks
            .into_iter()
            .filter_map(|(_, block)| match block {
                Block::ToolUse {
                    id, name, input, ..
                } => {
                    let arguments = if input.trim().is_empty() {
                        "{}".to_string()
                    } else {
                        input
                    };
                    Some(ToolCallMsg::new(id, name, arguments))
                }
                _ => None,
            })
            .collect();
        let finish_reason = self.stop_reason.map(|r| {
            match r.as_str() {
                // Both are truncations: the reply stopped because it met a limit.
                "max_tokens" | "model_context_window_exceeded" => "length",
                "tool_use" => "tool_calls",
                "end_turn" | "stop_sequence" => "stop",
                other => other,
            }
            .to_string()
        });
        ModelReply {
            content: self.content,
            tool_calls,
            finish_reason,
            usage: self.saw_usage.then_some(self.usage),
            reasoning: serde_json::Map::new(),
        }
    }
}

/// An `error` event: `{"type":"error","error":{"type":"overloaded_error","message":...}}`.
fn stream_error(error: Option<&Value>) -> LlmError {
    let error = error.cloned().unwrap_or(Value::Null);
    match inline_error(&error) {
        Some(e) if e.overflow => LlmError::ContextOverflow { message: e.message },
        Some(e) => LlmError::Server {
            message: e.message,
            transient: e.transient,
        },
        None => LlmError::Server {
            message: "the server sent an error event without details".into(),
            transient: false,
        },
    }
}

fn clip(s: &str) -> String {
    s.chars().take(200).collect()
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
