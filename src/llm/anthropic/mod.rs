//! The native client of Anthropic's Messages API (`POST /v1/messages`,
//! streaming), behind the same `ChatModel` trait as the OpenAI-compatible
//! client: the agent's conversation goes out in Anthropic's shapes
//! ([`body`]) and the event stream comes back as the same `ModelReply`
//! ([`events`]). Errors take the shared classification (`llm::errors`):
//! `overloaded_error`/529 and `rate_limit_error`/429 are transient with the
//! server's `retry-after`, "prompt is too long" is a context overflow, an
//! `error` event in a 200 stream keeps the server's message, a 200 that is
//! not an event stream (a proxy's page, an error body) says what it is.
//! Liveness is the shared one (`transport::Liveness`): `ping` events and
//! any other bytes keep the stream alive, content deltas count as tokens.
//!
//! What must stay true: the key travels only in `x-api-key` to the chosen
//! base URL, is hidden from all output from the moment the client exists,
//! and every error leaves scrubbed; `[headers]` cannot replace `x-api-key`
//! or `anthropic-version` (the config refuses the first; the second is set
//! after them).

mod body;
mod events;

use super::errors;
use super::limits::{self, BodyError};
use super::transport::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_TOKEN_TIMEOUT, Liveness, error_chain, header_map, http_client,
    response_error, stream_failure,
};
use super::{ChatModel, ChatRequest, LlmError, ModelReply, StreamSink};
use crate::config::ApiKey;
use events::EventAccumulator;
use eventsource_stream::Eventsource;
use futures_util::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use std::sync::Arc;
use std::time::Duration;

/// The API version every request names.
pub const API_VERSION: &str = "2023-06-01";

/// A Claude model behind Anthropic's Messages API.
#[derive(Clone)]
pub struct AnthropicModel {
    http: reqwest::Client,
    /// Ends in `/v1`.
    api_root: String,
    model: String,
    api_key: Option<ApiKey>,
    key_var: &'static str,
    headers: HeaderMap,
    idle_timeout: Duration,
    token_timeout: Duration,
}

impl AnthropicModel {
    /// A client for `base_url` (`https://api.anthropic.com`, with or without `/v1`).
    pub fn new(base_url: &str, model: &str, api_key: Option<ApiKey>) -> Result<Self, LlmError> {
        let http = http_client(base_url)?;
        if let Some(key) = &api_key {
            crate::tools::scrub::hide(key.expose());
        }
        let base = base_url.trim_end_matches('/');
        let api_root = if base.ends_with("/v1") {
            base.to_string()
        } else {
            format!("{base}/v1")
        };
        Ok(AnthropicModel {
            http,
            api_root,
            model: model.to_string(),
            api_key,
            key_var: "ANTHROPIC_API_KEY",
            headers: HeaderMap::new(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            token_timeout: DEFAULT_TOKEN_TIMEOUT,
        })
    }

    /// Send these extra headers (from `[headers]`) with every request.
    pub fn with_headers(mut self, headers: &[(String, String)]) -> Result<Self, LlmError> {
        self.headers = header_map(headers)?;
        Ok(self)
    }

    /// Set how long the server may send nothing (before the headers or between events).
    pub fn with_idle_timeout(mut self, idle_timeout: Duration) -> Self {
        self.idle_timeout = idle_timeout;
        self
    }

    /// Set how long a stream kept alive (`ping` events, comments) may go
    /// without a token of the reply; never shorter than the idle limit.
    pub fn with_token_timeout(mut self, token_timeout: Duration) -> Self {
        self.token_timeout = token_timeout;
        self
    }

    fn idle_error(&self) -> LlmError {
        LlmError::IdleTimeout(self.idle_timeout.as_secs())
    }

    /// The request headers: `[headers]`, then the API's own (which win).
    fn request_headers(&self) -> Result<HeaderMap, LlmError> {
        let mut headers = self.headers.clone();
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        if let Some(key) = &self.api_key {
            let mut value = HeaderValue::from_str(key.expose()).map_err(|_| LlmError::Connect {
                url: self.api_root.clone(),
                detail: format!("{} holds characters a header cannot carry", self.key_var),
            })?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        Ok(headers)
    }

    async fn send(&self, builder: reqwest::RequestBuilder) -> Result<reqwest::Response, LlmError> {
        let builder = builder.headers(self.request_headers()?);
        let response = tokio::time::timeout(self.idle_timeout, builder.send())
            .await
            .map_err(|_| self.idle_error())?
            .map_err(|e| LlmError::Connect {
                url: self.api_root.clone(),
                detail: error_chain(&e),
            })?;
        if !response.status().is_success() {
            return Err(response_error(response, self.idle_timeout, self.key_var).await);
        }
        Ok(response)
    }

    async fn run(
        &self,
        request: ChatRequest<'_>,
        sink: StreamSink<'_>,
    ) -> Result<ModelReply, LlmError> {
        let url = format!("{}/messages", self.api_root);
        let post = self.http.post(url).json(&body::body(&self.model, &request));
        let response = self.send(post).await?;
        let is_sse = (response.headers().get(reqwest::header::CONTENT_TYPE))
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            return Err(self.not_a_stream(response).await);
        }
        let mut live = Liveness::new(self.idle_timeout, self.token_timeout);
        let mut stream = live.watch(response).eventsource();
        let mut acc = EventAccumulator::default();
        let mut any_data = false;
        while let Some(event) = live.next(&mut stream).await? {
            if live.cut() {
                break;
            }
            let event = event.map_err(stream_failure)?;
            let data = event.data.trim();
            if data.is_empty() {
                continue;
            }
            any_data = true;
            acc.push(data)?.report(sink);
            live.tokens_so_far(acc.tokens());
        }
        if live.cut() {
            return Err(limits::event_too_large());
        }
        if !any_data {
            return Err(LlmError::EmptyReply);
        }
        if !acc.finished() {
            return Err(LlmError::Stream(
                "the stream ended before the reply was complete (no stop reason, no message_stop)"
                    .into(),
            ));
        }
        Ok(acc.into_reply())
    }

    /// A 200 that is not an event stream: a proxy's HTML page, an error
    /// body, or something else, said in those words.
    async fn not_a_stream(&self, response: reqwest::Response) -> LlmError {
        let status = response.status().as_u16();
        let cap = limits::MAX_ERROR_BODY_BYTES;
        let body = match limits::body_text(response, self.idle_timeout, cap).await {
            Err(BodyError::Idle) => return self.idle_error(),
            Err(BodyError::Transport(e)) => return LlmError::Stream(error_chain(&e)),
            Ok(Ok(body) | Err(body)) => body,
        };
        if body.trim().is_empty() {
            return LlmError::EmptyReply;
        }
        if errors::is_html(&body) {
            return errors::html_page(status, &body);
        }
        let value: Option<serde_json::Value> = serde_json::from_str(&body).ok();
        match value
            .as_ref()
            .and_then(errors::error_object)
            .and_then(errors::inline_error)
        {
            Some(e) if e.overflow => LlmError::ContextOverflow { message: e.message },
            Some(e) => LlmError::Server {
                message: e.message,
                transient: e.transient,
            },
            None => LlmError::Decode(format!(
                "the server answered HTTP {status} without an event stream: {}",
                body.chars().take(200).collect::<String>()
            )),
        }
    }

    async fn models(&self) -> Result<Vec<String>, LlmError> {
        let get = self
            .http
            .get(format!("{}/models?limit=1000", self.api_root))
            .headers(self.request_headers()?);
        super::models::fetch(get, self.idle_timeout, self.key_var).await
    }
}

impl ChatModel for AnthropicModel {
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
