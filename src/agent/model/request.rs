//! Asking the model for one decision. What must stay true: the partial text
//! of a failed attempt is discarded, never executed; only failures that may
//! go away are retried (with backoff or the server's hint), and a 500 whose
//! body repeats unchanged stops at the second identical answer; a context
//! overflow compacts the conversation once and tries again, then stops; a
//! reply cut at the output token limit (`finish_reason: "length"`) is never
//! taken as a final answer nor executed, and the model is asked to go on
//! shorter (a repair request, counted against `MAX_REPAIRS`); a reply that
//! ended as a refusal ends the task as one, its text shown, never as the
//! answer; a reply whose text is plainly a tool call runs as that call
//! when it names a tool with object arguments, is asked again once with a
//! hint otherwise, and a second such reply stops the task pointing at
//! `--protocol json`; so does a task stopped by empty replies while tools
//! were offered (a server streaming without tool support drops the calls).

use crate::agent::contract::{AgentEvent, FinishReason};
use crate::agent::model::live::LiveCalls;
use crate::agent::model::protocol::{self, Action};
use crate::agent::session::{MAX_REPAIRS, Session, Task};
use crate::config::Protocol;
use crate::llm::{ChatMessage, ChatRequest, LlmError, ModelReply, StreamDelta, ToolCallMsg};

/// Replies with a malformed call written as text after which a task stops.
pub const MAX_TEXT_CALLS: u32 = 2;

/// The finish reason of a refusal (Anthropic's stop reason, kept as it came).
pub const REFUSAL: &str = "refusal";

/// Told to the model (and shown) when its reply was cut at the token limit.
pub const CUT_AT_LIMIT: &str = "your last reply was cut off at the output token limit (finish_reason \"length\"), so nothing in it was carried out. Continue with a shorter reply: one tool call at a time, and large edits in smaller pieces (replace_text) rather than one long write_file.";

/// Added to the message of a task stopped by empty replies while tools
/// were offered: the calls were most likely dropped by the server.
pub const EMPTY_WITH_TOOLS: &str = "tools were offered and every reply was empty: the server may not stream tool calls (Ollama streaming without tool support drops them): try --protocol json";

/// Why a request did not produce a reply.
enum Failure {
    /// The task ends so.
    Stop(FinishReason),
    /// The request does not fit the context window (the error says so).
    Overflow(LlmError),
}

impl Session {
    /// Ask the model until its reply can be acted on (with at most
    /// `MAX_REPAIRS` repair requests).
    pub(in crate::agent) async fn next_reply(
        &mut self,
        t: &mut Task<'_>,
    ) -> Result<(ModelReply, Vec<Action>), FinishReason> {
        let protocol_kind = self.settings.protocol;
        let streams_text = protocol_kind == Protocol::Tools;
        let mut attempt = 0;
        let mut text_calls = 0;
        // Whether every reply that needed a repair was empty.
        let mut only_empty = true;
        loop {
            let mut reply = self.request_with_recovery(t).await?;
            if streams_text
                && reply.tool_calls.is_empty()
                && reply.finish_reason.as_deref() != Some("length")
            {
                match protocol::text_call(&reply.content, &self.tool_names()) {
                    None => {}
                    // Taken as the call it plainly is, recorded as a native one.
                    Some(Ok((name, arguments))) => {
                        self.json_ids += 1;
                        let id = format!("call_text_{}", self.json_ids);
                        reply.tool_calls = vec![ToolCallMsg::new(id, name, arguments)];
                        reply.content.clear();
                    }
                    Some(Err(problem)) => {
                        text_calls += 1;
                        if let Some(usage) = reply.usage {
                            self.record_usage(t, usage);
                        }
                        if text_calls >= MAX_TEXT_CALLS {
                            let message = format!(
                                "the model wrote its tool calls as text {MAX_TEXT_CALLS} times instead of calling them: {problem}. Some servers drop tool calls when streaming (Ollama with some models, llama.cpp without --jinja): try --protocol json"
                            );
                            t.emit(AgentEvent::Error {
                                message: message.clone(),
                            });
                            return Err(FinishReason::Error(message));
                        }
                        self.history
                            .push(ChatMessage::assistant(reply.content.clone()));
                        t.emit(AgentEvent::ProtocolRepair {
                            attempt: text_calls,
                            error: problem.clone(),
                            cut_at_limit: false,
                        });
                        protocol::record_feedback(&mut self.history, &problem);
                        continue;
                    }
                }
            }
            if streams_text && !reply.content.trim().is_empty() {
                t.emit(AgentEvent::AssistantMessage {
                    text: reply.content.clone(),
                });
            }
            if reply.finish_reason.as_deref() == Some(REFUSAL) {
                return Err(self.refused(t, &reply));
            }
            let cut_at_limit = reply.finish_reason.as_deref() == Some("length");
            let parsed = if cut_at_limit {
                // Its tool calls are not kept: they would need answers, and
                // their arguments are cut. Its text is, for the model to go on from.
                if !reply.content.trim().is_empty() {
                    self.history
                        .push(ChatMessage::assistant(reply.content.clone()));
                }
                Err(CUT_AT_LIMIT.to_string())
            } else {
                protocol::record_reply(protocol_kind, &mut self.history, &reply);
                protocol::parse_reply(protocol_kind, &reply, &mut self.json_ids)
            };
            if let Some(usage) = reply.usage {
                self.record_usage(t, usage);
            }
            match parsed {
                Ok(actions) => return Ok((reply, actions)),
                Err(problem) => {
                    attempt += 1;
                    only_empty &= reply.tool_calls.is_empty() && reply.content.trim().is_empty();
                    if attempt > MAX_REPAIRS {
                        let hint = if only_empty && streams_text && !self.tool_names().is_empty() {
                            format!(". {EMPTY_WITH_TOOLS}")
                        } else {
                            String::new()
                        };
                        let message = format!(
                            "the model's reply could not be understood after {MAX_REPAIRS} repair requests: {problem}{hint}"
                        );
                        t.emit(AgentEvent::Error {
                            message: message.clone(),
                        });
                        return Err(FinishReason::Error(message));
                    }
                    t.emit(AgentEvent::ProtocolRepair {
                        attempt,
                        error: problem.clone(),
                        cut_at_limit,
                    });
                    protocol::record_feedback(&mut self.history, &problem);
                }
            }
        }
    }

    /// The names of the built-in tools offered (none under the JSON protocol).
    fn tool_names(&self) -> Vec<String> {
        let tools = self.tools.as_ref().and_then(serde_json::Value::as_array);
        tools
            .into_iter()
            .flatten()
            .filter_map(|t| t.pointer("/function/name")?.as_str().map(str::to_string))
            .collect()
    }

    /// A reply the model ended as a refusal (Anthropic's `stop_reason:
    /// "refusal"`): kept in the history as what the model said, reported and
    /// finished as a refusal, never taken as the task's answer.
    fn refused(&mut self, t: &mut Task<'_>, reply: &ModelReply) -> FinishReason {
        if let Some(usage) = reply.usage {
            self.record_usage(t, usage);
        }
        let text = reply.content.trim();
        if !text.is_empty() {
            self.history.push(ChatMessage::assistant(text));
        }
        let message = if text.is_empty() {
            "the model refused the request (stop reason \"refusal\")".to_string()
        } else {
            format!("the model refused the request (stop reason \"refusal\"): {text}")
        };
        t.emit(AgentEvent::Error { message });
        FinishReason::Refused(text.to_string())
    }

    /// A request, compacting the conversation once when the server says it
    /// does not fit its context window.
    async fn request_with_recovery(&mut self, t: &Task<'_>) -> Result<ModelReply, FinishReason> {
        let mut compacted = false;
        loop {
            let error = match self.request_with_retries(t).await {
                Ok(reply) => return Ok(reply),
                Err(Failure::Stop(reason)) => return Err(reason),
                Err(Failure::Overflow(error)) => error,
            };
            if !compacted && self.compact_after_overflow(t).await {
                compacted = true;
                continue;
            }
            let what = if compacted {
                "it still did not fit after compacting the conversation"
            } else {
                "compacting the conversation freed nothing"
            };
            let message = format!(
                "{error}; {what}. Give the server a larger context size, or lower --context-window so that stepwise compacts earlier."
            );
            t.emit(AgentEvent::Error {
                message: message.clone(),
            });
            return Err(FinishReason::Error(message));
        }
    }

    /// One model request; transient failures are retried with backoff.
    async fn request_with_retries(&self, t: &Task<'_>) -> Result<ModelReply, Failure> {
        let policy = self.settings.retry;
        let streams_text = self.settings.protocol == Protocol::Tools;
        let mut retries = 0;
        let mut last_500: Option<String> = None;
        loop {
            t.emit(AgentEvent::ModelRequest { steps_done: t.step });
            let events = t.events;
            let mut live = LiveCalls::new(events, &self.workspace, &self.registry);
            let mut on_delta = |delta: StreamDelta<'_>| match delta {
                StreamDelta::Text(text) if streams_text => {
                    let _ = events.send(AgentEvent::AssistantDelta {
                        text: text.to_string(),
                    });
                }
                StreamDelta::ToolArguments {
                    index,
                    name,
                    fragment,
                } => live.on_fragment(index, name, fragment),
                StreamDelta::Text(_) => {}
            };
            let tools = self.offered_tools(t).await;
            let request = ChatRequest {
                messages: &self.history,
                tools: tools.as_ref(),
            };
            let result = tokio::select! {
                r = self.model.complete(request, &mut on_delta) => r,
                _ = t.cancel.cancelled() => return Err(Failure::Stop(FinishReason::Cancelled)),
            };
            let error = match result {
                Ok(reply) => return Ok(reply),
                Err(e @ LlmError::ContextOverflow { .. }) => return Err(Failure::Overflow(e)),
                Err(e) => e,
            };
            let repeated = match &error {
                LlmError::Http {
                    status: 500,
                    message,
                    ..
                } => last_500.replace(message.clone()).as_ref() == Some(message),
                _ => false,
            };
            if repeated || !error.is_retryable() || retries >= policy.max_retries {
                let mut message = error.to_string();
                if repeated {
                    message.push_str(&repeated_hint(&message, streams_text));
                } else if retries > 0 {
                    message.push_str(&format!(" (gave up after {retries} retries)"));
                }
                t.emit(AgentEvent::Error {
                    message: message.clone(),
                });
                return Err(Failure::Stop(FinishReason::Error(message)));
            }
            retries += 1;
            let delay = policy.delay(retries, error.retry_after());
            t.emit(AgentEvent::Retrying {
                retry: retries,
                max_retries: policy.max_retries,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                error: error.to_string(),
            });
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = t.cancel.cancelled() => return Err(Failure::Stop(FinishReason::Cancelled)),
            }
        }
    }
}

/// What to say when a server gave the same 500 twice.
fn repeated_hint(message: &str, native_tools: bool) -> String {
    let about_tools = message.to_ascii_lowercase().contains("tool");
    let what = if native_tools && about_tools {
        "this server cannot do native tool calls here: try --protocol json"
    } else {
        "check the server's log (a server that cannot do native tool calls works with --protocol json)"
    };
    format!(" — the server gave the same answer twice, so retrying will not help; {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repeated_500_hint_points_at_the_json_protocol() {
        let tools = repeated_hint("Cannot use tools with stream", true);
        assert!(tools.contains("try --protocol json"), "{tools}");
        let other = repeated_hint("boom", true);
        assert!(other.contains("server's log") && other.contains("--protocol json"));
    }
}
