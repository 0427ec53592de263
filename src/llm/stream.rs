//! Assembling a reply from streamed chat-completion chunks (or one JSON body),
//! tolerant of what real OpenAI-compatible servers send: tool-call deltas
//! without `index`, arguments split anywhere, `finish_reason: ""`, usage in a
//! final chunk without choices, `usage: {}`, unknown extra fields (ignored,
//! except on a tool call, where they are kept to be sent back).

use super::errors::inline_error;
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
    index: Option<usize>,
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
            return Err(if error.overflow {
                LlmError::ContextOverflow {
                    message: error.message,
                }
            } else {
                LlmError::Server {
                    message: error.message,
                    transient: error.transient,
                }
            });
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
                self.content.push_str(&content);
                text.get_or_insert_with(String::new).push_str(&content);
            }
            for call in delta.tool_calls.unwrap_or_default() {
                self.push_call_delta(call);
            }
        }
        Ok(text)
    }

    fn push_call_delta(&mut self, delta: ToolCallDelta) {
        let id = delta.id.filter(|id| !id.is_empty());
        let position = match delta.index {
            Some(index) => self.calls.iter().position(|c| c.index == Some(index)),
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
            self.calls.push(PartialCall {
                index: delta.index,
                ..PartialCall::default()
            });
            self.calls.len() - 1
        });
        let call = &mut self.calls[position];
        if let Some(id) = id {
            call.id = id;
        }
        // Later deltas may repeat or complete a field; the last value wins.
        call.extra
            .extend(delta.extra.into_iter().filter(|(_, v)| !v.is_null()));
        if let Some(function) = delta.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                // Some servers repeat the whole name in every delta; others split it.
                if call.name != name {
                    call.name.push_str(&name);
                }
            }
            let fragment = match function.arguments {
                Some(Value::String(part)) => part,
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            if !fragment.is_empty() {
                call.arguments.push_str(&fragment);
                self.fragments.push((position, fragment));
            }
        }
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
        ModelReply {
            content: self.content,
            tool_calls,
            finish_reason: self.finish_reason,
            usage: self.usage,
        }
    }
}

/// Parse a complete (non-streaming) chat-completions JSON body.
pub fn parse_completion_body(body: &str) -> Result<ModelReply, LlmError> {
    if body.trim().is_empty() {
        return Err(LlmError::EmptyReply);
    }
    let chunk: Chunk = serde_json::from_str(body)
        .map_err(|e| LlmError::Decode(format!("{e} in body {}", clip(body))))?;
    let has_error = chunk.error.as_ref().is_some_and(|e| !e.is_null());
    if !has_error && chunk.choices.as_ref().is_none_or(|c| c.is_empty()) {
        return Err(LlmError::Decode(format!(
            "no choices in body {}",
            clip(body)
        )));
    }
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
mod tests {
    use super::*;

    fn feed(chunks: &[&str]) -> ModelReply {
        let mut acc = StreamAccumulator::default();
        for c in chunks {
            acc.push_data(c).expect("chunk parses");
        }
        acc.into_reply()
    }

    #[test]
    fn text_deltas_concatenate_and_report_each_piece() {
        let mut acc = StreamAccumulator::default();
        let a = acc
            .push_data(r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}"#)
            .unwrap();
        let b = acc
            .push_data(r#"{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":""}]}"#)
            .unwrap();
        assert_eq!((a.as_deref(), b.as_deref()), (Some("Hel"), Some("lo")));
        assert!(!acc.finished(), "empty finish_reason is not a finish");
        acc.push_data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#)
            .unwrap();
        assert!(acc.finished());
        assert_eq!(acc.into_reply().content, "Hello");
    }

    #[test]
    fn tool_call_arguments_split_inside_an_escape_are_joined_by_index() {
        let reply = feed(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"write_file","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a.py\",\"content\":\"x\\"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ny\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]);
        assert_eq!(reply.tool_calls.len(), 1);
        let call = &reply.tool_calls[0];
        assert_eq!(
            (call.id.as_str(), call.function.name.as_str()),
            ("call_a", "write_file")
        );
        let args: Value = serde_json::from_str(&call.function.arguments).unwrap();
        assert_eq!(args["content"], "x\ny");
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn argument_fragments_are_reported_with_their_call() {
        let mut acc = StreamAccumulator::default();
        acc.push_data(r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"write_file","arguments":"{\"pa"}}]}}]}"#).unwrap();
        acc.push_data(r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":"}}]}}]}"#).unwrap();
        let got = acc.take_argument_fragments();
        assert_eq!(
            got,
            [
                (0, "write_file".to_string(), "{\"pa".to_string()),
                (0, "write_file".to_string(), "th\":".to_string())
            ]
        );
        assert!(acc.take_argument_fragments().is_empty());
    }

    #[test]
    fn calls_without_index_are_split_by_id() {
        let reply = feed(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"c1","function":{"name":"read_file","arguments":"{\"path\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"\"a.py\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"c2","function":{"name":"read_file","arguments":"{\"path\":\"b.py\"}"}}]}}]}"#,
        ]);
        let got: Vec<_> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.function.arguments.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![("c1", r#"{"path":"a.py"}"#), ("c2", r#"{"path":"b.py"}"#)]
        );
    }

    #[test]
    fn two_calls_interleaved_by_index_stay_apart() {
        let reply = feed(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read_file","arguments":"{\"pa"}},{"index":1,"id":"b","function":{"name":"list_files","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"x.py\"}"}}]}}]}"#,
        ]);
        assert_eq!(reply.tool_calls[0].function.arguments, r#"{"path":"x.py"}"#);
        assert_eq!(reply.tool_calls[1].function.name, "list_files");
    }

    #[test]
    fn usage_only_chunk_and_empty_usage_and_extra_fields() {
        let reply = feed(&[
            r#"{"id":"x","system_fingerprint":"fp","service_tier":"default","choices":[{"delta":{"reasoning_content":"hmm","content":"ok"},"logprobs":null}],"usage":{}}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":8}}}"#,
            r#"{"choices":[],"usage":{}}"#,
        ]);
        assert_eq!(reply.content, "ok");
        assert_eq!(
            reply.usage,
            Some(TokenUsage {
                prompt_tokens: 12,
                completion_tokens: 3,
                cached_tokens: 8,
            })
        );
    }

    #[test]
    fn whole_call_in_one_chunk_with_object_arguments_and_no_id() {
        let reply = feed(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"list_files","arguments":{"path":"."}}}]},"finish_reason":"tool_calls"}]}"#,
        ]);
        assert_eq!(reply.tool_calls[0].id, "call_0");
        assert_eq!(reply.tool_calls[0].function.arguments, r#"{"path":"."}"#);
    }

    #[test]
    fn unknown_fields_of_a_tool_call_are_kept_and_type_is_not_duplicated() {
        let reply = feed(&[
            r#"{"choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"sig=="}},"function":{"arguments":"{}","name":"list_files"},"id":"call_1","type":"function"}]},"index":0}]}"#,
        ]);
        let sent = serde_json::to_value(&reply.tool_calls[0]).unwrap();
        assert_eq!(
            sent,
            serde_json::json!({"id":"call_1","type":"function","function":{"name":"list_files","arguments":"{}"},"extra_content":{"google":{"thought_signature":"sig=="}}})
        );
    }

    #[test]
    fn malformed_chunk_is_a_decode_error() {
        let mut acc = StreamAccumulator::default();
        assert!(matches!(
            acc.push_data("{not json"),
            Err(LlmError::Decode(_))
        ));
    }

    #[test]
    fn complete_body_is_parsed() {
        let reply = parse_completion_body(
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1}}"#,
        )
        .unwrap();
        assert_eq!(reply.content, "done");
        assert_eq!(reply.usage.map(|u| u.prompt_tokens), Some(5));
        assert!(parse_completion_body(r#"{"error":"x"}"#).is_err());
    }
}
