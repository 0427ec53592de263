//! Asking the model: one request with retries and backoff (the partial text
//! of a failed attempt is dropped, never executed), and the repair loop that
//! asks again until a reply follows the protocol.

use super::contract::{AgentEvent, FinishReason};
use super::live::LiveCalls;
use super::protocol::{self, Action};
use super::session::{MAX_REPAIRS, Session, Task};
use crate::config::Protocol;
use crate::llm::{ChatRequest, ModelReply, StreamDelta};

impl Session {
    /// Ask the model until its reply parses (with at most `MAX_REPAIRS` repair requests).
    pub(super) async fn next_reply(
        &mut self,
        t: &mut Task<'_>,
    ) -> Result<(ModelReply, Vec<Action>), FinishReason> {
        let protocol_kind = self.settings.protocol;
        let streams_text = protocol_kind == Protocol::Tools;
        let mut attempt = 0;
        loop {
            let reply = self.request_with_retries(t).await?;
            if streams_text && !reply.content.trim().is_empty() {
                t.emit(AgentEvent::AssistantMessage {
                    text: reply.content.clone(),
                });
            }
            protocol::record_reply(protocol_kind, &mut self.history, &reply);
            if let Some(usage) = reply.usage {
                self.record_usage(t, usage);
            }
            match protocol::parse_reply(protocol_kind, &reply, &mut self.json_ids) {
                Ok(actions) => return Ok((reply, actions)),
                Err(problem) => {
                    attempt += 1;
                    if attempt > MAX_REPAIRS {
                        let message = format!(
                            "the model's reply could not be understood after {MAX_REPAIRS} repair requests: {problem}"
                        );
                        t.emit(AgentEvent::Error {
                            message: message.clone(),
                        });
                        return Err(FinishReason::Error(message));
                    }
                    t.emit(AgentEvent::ProtocolRepair {
                        attempt,
                        error: problem.clone(),
                    });
                    protocol::record_feedback(&mut self.history, &problem);
                }
            }
        }
    }

    /// One model request; transient failures are retried with backoff (the
    /// partial text of a failed attempt is discarded, never executed).
    async fn request_with_retries(&self, t: &Task<'_>) -> Result<ModelReply, FinishReason> {
        let policy = self.settings.retry;
        let streams_text = self.settings.protocol == Protocol::Tools;
        let mut retries = 0;
        loop {
            t.emit(AgentEvent::ModelRequest { steps_done: t.step });
            let events = t.events;
            let mut live = LiveCalls::new(events, &self.workspace);
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
            let request = ChatRequest {
                messages: &self.history,
                tools: self.tools.as_ref(),
            };
            let result = tokio::select! {
                r = self.model.complete(request, &mut on_delta) => r,
                _ = t.cancel.cancelled() => return Err(FinishReason::Cancelled),
            };
            let error = match result {
                Ok(reply) => return Ok(reply),
                Err(e) => e,
            };
            if !error.is_retryable() || retries >= policy.max_retries {
                let mut message = error.to_string();
                if retries > 0 {
                    message.push_str(&format!(" (gave up after {retries} retries)"));
                }
                t.emit(AgentEvent::Error {
                    message: message.clone(),
                });
                return Err(FinishReason::Error(message));
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
                _ = t.cancel.cancelled() => return Err(FinishReason::Cancelled),
            }
        }
    }
}
