//! HTTP client for OpenAI-compatible `/chat/completions`, streaming with SSE.
//! The request changes between steps only by what the conversation gained,
//! so a server's prompt cache keeps every earlier step; with OpenAI a
//! `prompt_cache_key` per session keeps the session's requests on one cache.
//! A response ends as a complete reply or as an `LlmError` in the server's own
//! words (see `errors.rs`): an error status, an error inside a 200 stream, a
//! stream cut short, or a 200 with nothing in it. Every request names
//! stepwise in its `User-Agent` and carries the `[headers]` of the
//! configuration; a loopback base URL never goes through a
//! proxy. Every error leaves scrubbed (`errors::scrubbed`): a server that
//! echoes the `Authorization` header does not put the key on the screen.

use super::errors;
use super::limits::{self, BodyError};
use super::stream::{StreamAccumulator, parse_completion_body};
use super::transport::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_TOKEN_TIMEOUT, Liveness, error_chain, header_map, http_client,
    response_error, stream_failure,
};
use super::{ChatModel, ChatRequest, LlmError, ModelReply, StreamDelta, StreamSink};
use crate::config::ApiKey;
use eventsource_stream::Eventsource;
use futures_util::future::BoxFuture;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// A model behind an OpenAI-compatible HTTP endpoint.
#[derive(Clone)]
pub struct HttpModel {
    http: reqwest::Client,
    base_url: String,
    endpoint: String,
    model: String,
    api_key: Option<ApiKey>,
    /// The variable the key came from, named in a 401's hint.
    key_var: &'static str,
    /// Extra headers from `[headers]`.
    headers: HeaderMap,
    idle_timeout: Duration,
    /// How long a stream kept alive may go without a token of the reply.
    token_timeout: Duration,
    /// OpenAI's `prompt_cache_key`, one per session, sent where accepted.
    prompt_cache_key: Option<String>,
}

impl HttpModel {
    pub fn new(base_url: &str, model: &str, api_key: Option<ApiKey>) -> Result<Self, LlmError> {
        let http = http_client(base_url)?;
        if let Some(key) = &api_key {
            // Whatever may be sent may be echoed back: hide it from all output.
            crate::tools::scrub::hide(key.expose());
        }
        let base_url = base_url.trim_end_matches('/').to_string();
        Ok(HttpModel {
            http,
            endpoint: format!("{base_url}/chat/completions"),
            base_url,
            model: model.to_string(),
            api_key,
            key_var: crate::config::API_KEY_VAR,
            headers: HeaderMap::new(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            token_timeout: DEFAULT_TOKEN_TIMEOUT,
            prompt_cache_key: None,
        })
    }

    /// Name this variable (the provider's) when the server refuses the key.
    pub fn with_key_var(mut self, key_var: &'static str) -> Self {
        self.key_var = key_var;
        self
    }

    /// Send these extra headers (from `[headers]`) with every request.
    pub fn with_headers(mut self, headers: &[(String, String)]) -> Result<Self, LlmError> {
        self.headers = header_map(headers)?;
        Ok(self)
    }

    /// Set how long the server may send nothing (before the headers or between chunks).
    pub fn with_idle_timeout(mut self, idle_timeout: Duration) -> Self {
        self.idle_timeout = idle_timeout;
        self
    }

    /// Set how long a stream kept alive (SSE comments) may go without a
    /// token of the reply; never shorter than the idle limit.
    pub fn with_token_timeout(mut self, token_timeout: Duration) -> Self {
        self.token_timeout = token_timeout;
        self
    }

    /// Send this `prompt_cache_key` with every request (OpenAI routes
    /// requests with one key to the same cache; other servers may refuse
    /// the field, so only the OpenAI preset sets it).
    pub fn with_prompt_cache_key(mut self, key: impl Into<String>) -> Self {
        self.prompt_cache_key = Some(key.into());
        self
    }

    fn idle_error(&self) -> LlmError {
        LlmError::IdleTimeout(self.idle_timeout.as_secs())
    }

    fn body(&self, request: &ChatRequest<'_>) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": request.messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if let Some(tools) = request.tools {
            body["tools"] = tools.clone();
        }
        if let Some(key) = &self.prompt_cache_key {
            body["prompt_cache_key"] = Value::String(key.clone());
        }
        body
    }

    /// The server's model names (`GET /models`), sorted.
    async fn models(&self) -> Result<Vec<String>, LlmError> {
        let mut builder = self
            .http
            .get(format!("{}/models", self.base_url))
            .headers(self.headers.clone());
        if let Some(key) = &self.api_key {
            builder = builder.bearer_auth(key.expose());
        }
        super::models::fetch(builder, self.idle_timeout, self.key_var).await
    }

    async fn run(
        &self,
        request: ChatRequest<'_>,
        sink: StreamSink<'_>,
    ) -> Result<ModelReply, LlmError> {
        let mut builder = self
            .http
            .post(&self.endpoint)
            .headers(self.headers.clone())
            .json(&self.body(&request));
        if let Some(key) = &self.api_key {
            builder = builder.bearer_auth(key.expose());
        }
        let response = tokio::time::timeout(self.idle_timeout, builder.send())
            .await
            .map_err(|_| self.idle_error())?
            .map_err(|e| LlmError::Connect {
                url: self.endpoint.clone(),
                detail: error_chain(&e),
            })?;
        let status = response.status();
        if !status.is_success() {
            return Err(response_error(response, self.idle_timeout, self.key_var).await);
        }
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            let body = match limits::body_text(response, self.idle_timeout, limits::MAX_EVENT_BYTES)
                .await
            {
                Ok(Ok(body)) => body,
                Ok(Err(_)) => return Err(limits::body_too_large()),
                Err(BodyError::Idle) => return Err(self.idle_error()),
                Err(BodyError::Transport(e)) => return Err(LlmError::Stream(error_chain(&e))),
            };
            if errors::is_html(&body) {
                return Err(errors::html_page(status.as_u16(), &body));
            }
            let reply = parse_completion_body(&body)?;
            if !reply.content.is_empty() {
                sink(StreamDelta::Text(&reply.content));
            }
            return Ok(reply);
        }

        let mut live = Liveness::new(self.idle_timeout, self.token_timeout);
        let mut events = live.watch(response).eventsource();
        let mut acc = StreamAccumulator::default();
        let mut done = false;
        // Events with data: none at all is an empty reply, not a broken stream.
        let mut any_data = false;
        while let Some(event) = live.next(&mut events).await? {
            if live.cut() {
                break;
            }
            let event = event.map_err(stream_failure)?;
            let data = event.data.trim();
            any_data |= !data.is_empty();
            if data == "[DONE]" {
                done = true;
                break;
            }
            if data.is_empty() {
                continue;
            }
            if let Some(text) = acc.push_data(data)? {
                sink(StreamDelta::Text(&text));
            }
            live.tokens_so_far(acc.tokens());
            for (index, name, fragment) in acc.take_argument_fragments() {
                sink(StreamDelta::ToolArguments {
                    index,
                    name: &name,
                    fragment: &fragment,
                });
            }
        }
        if live.cut() {
            return Err(limits::event_too_large());
        }
        if !any_data {
            return Err(LlmError::EmptyReply);
        }
        if !done && !acc.finished() {
            return Err(LlmError::Stream(
                "the stream ended before the reply was complete (no finish reason, no [DONE])"
                    .into(),
            ));
        }
        Ok(acc.into_reply())
    }
}

impl ChatModel for HttpModel {
    fn label(&self) -> String {
        self.model.clone()
    }

    fn complete<'a>(
        &'a self,
        request: ChatRequest<'a>,
        sink: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<ModelReply, LlmError>> {
        Box::pin(async move { self.run(request, sink).await.map_err(errors::scrubbed) })
    }

    fn with_model(&self, model: &str) -> Option<Arc<dyn ChatModel>> {
        let mut next = self.clone();
        next.model = model.to_string();
        Some(Arc::new(next))
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        Box::pin(async move { self.models().await.map_err(errors::scrubbed) })
    }
}
