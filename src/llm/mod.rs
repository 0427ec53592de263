//! The model side: OpenAI chat-completions wire types, the `ChatModel` trait the
//! agent talks to, the HTTP/SSE client for any OpenAI-compatible server, and
//! the native client of Anthropic's Messages API (`anthropic/`), which turns
//! the same conversation into its wire shapes and back.
//! Every failure is an `LlmError` that says whether retrying the same request
//! may help (`is_retryable`) and how long the server asked to wait.

pub mod anthropic;
mod client;
mod errors;
pub mod limits;
mod models;
pub mod scripted;
mod stream;
mod transport;
mod wire;

pub use anthropic::AnthropicModel;
pub use client::HttpModel;
pub use scripted::{Script, ScriptedModel};
pub use stream::StreamAccumulator;
pub use wire::{ChatMessage, FunctionCall, Role, ToolCallMsg};

use crate::config::models::TokenCounts;
use futures_util::future::BoxFuture;
use serde::Serialize;
use std::sync::Arc;

/// Token counts reported by the server for one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TokenUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens served from the server's cache (billed cheaper), when reported.
    pub cached_tokens: u64,
    /// Prompt tokens written to the server's cache (Anthropic's
    /// `cache_creation_input_tokens`, billed dearer), when reported.
    pub cache_write_tokens: u64,
}

impl From<&TokenUsage> for TokenCounts {
    fn from(u: &TokenUsage) -> Self {
        TokenCounts {
            prompt: u.prompt_tokens,
            completion: u.completion_tokens,
            cached: u.cached_tokens,
            cache_write: u.cache_write_tokens,
        }
    }
}

impl TokenUsage {
    pub fn add(&mut self, other: &TokenUsage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }

    /// The share of the prompt tokens read from the cache, in percent.
    pub fn cached_percent(&self) -> Option<u64> {
        (self.prompt_tokens > 0 && self.cached_tokens > 0)
            .then(|| self.cached_tokens.min(self.prompt_tokens) * 100 / self.prompt_tokens)
    }
}

/// One complete model reply, assembled from a stream or a JSON body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelReply {
    pub content: String,
    pub tool_calls: Vec<ToolCallMsg>,
    pub finish_reason: Option<String>,
    pub usage: Option<TokenUsage>,
    /// Reasoning to send back with this turn if it called tools (see `wire`).
    pub reasoning: serde_json::Map<String, serde_json::Value>,
}

/// What the agent sends for one model turn.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub messages: &'a [ChatMessage],
    /// OpenAI `tools` array (native tool calling), or `None` for the JSON text protocol.
    pub tools: Option<&'a serde_json::Value>,
}

/// Errors of a model request. Messages never contain the API key.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cannot reach the model server at {url}: {detail}")]
    Connect { url: String, detail: String },
    #[error("the model server answered HTTP {status}: {message}")]
    Http {
        status: u16,
        message: String,
        /// The server's `Retry-After`, when it sent one.
        retry_after: Option<std::time::Duration>,
    },
    /// A page for people (a proxy's or gateway's error page, a login page)
    /// where the API's answer should be.
    #[error("the server answered an HTML page (HTTP {status}{}), not the API", title.as_ref().map(|t| format!(", title {t:?}")).unwrap_or_default())]
    HtmlPage { status: u16, title: Option<String> },
    /// The account's quota or spend limit is reached (OpenAI
    /// `insufficient_quota`, Anthropic's spend limits): it does not come
    /// back in seconds, so it is never retried.
    #[error(
        "the account's quota or spend limit is reached (HTTP {status}): {message} — retrying will not help until the limit is raised or resets"
    )]
    Quota { status: u16, message: String },
    #[error("the model stream broke: {0}")]
    Stream(String),
    #[error("the model server sent nothing for {0}s")]
    IdleTimeout(u64),
    /// The connection stayed alive (keep-alives, pings) but no piece of the
    /// reply came for this long.
    #[error("the model server kept the connection alive but sent no token of the reply for {0}s")]
    NoTokens(u64),
    #[error("the model server sent a reply that is not valid chat-completions JSON: {0}")]
    Decode(String),
    /// An error the server reported inside a reply it began with HTTP 200
    /// (`data: {"error": ...}` or `finish_reason: "error"`).
    #[error("the model server reported an error in its reply: {message}")]
    Server { message: String, transient: bool },
    /// The request does not fit the model's context window, whatever the
    /// status the server used to say so; retrying it unchanged cannot help.
    #[error("the request does not fit the model's context window: {message}")]
    ContextOverflow { message: String },
    /// HTTP 200 without a single event or byte of content (llama.cpp does
    /// this when the prompt exceeds its context size).
    #[error(
        "the server returned an empty reply: check the server's log and its context size (a prompt larger than the context, e.g. llama.cpp --ctx-size, gives this)"
    )]
    EmptyReply,
    /// A scripted model (`--demo`, `--script`) was asked for a turn past its
    /// last one; not a server's answer, so no HTTP status.
    #[error("the scripted model has no more turns (it cannot improvise)")]
    ScriptEnded,
    /// The reply went past one of the caps of `limits` (far above any real
    /// reply): a broken or hostile server; trying again would not help.
    #[error("the model server's reply was stopped: {0}, far above any real reply")]
    TooLarge(String),
}

impl LlmError {
    /// Whether trying the same request again may succeed: connection problems,
    /// timeouts, broken streams, 429 and 5xx, and errors in a stream that say
    /// they are temporary. Bad keys, models and URLs, context overflows and
    /// empty replies are not.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Connect { .. }
            | LlmError::Stream(_)
            | LlmError::IdleTimeout(_)
            | LlmError::NoTokens(_) => true,
            LlmError::Http { status, .. } | LlmError::HtmlPage { status, .. } => {
                *status == 429 || *status >= 500
            }
            LlmError::Server { transient, .. } => *transient,
            LlmError::Decode(_)
            | LlmError::Quota { .. }
            | LlmError::ContextOverflow { .. }
            | LlmError::EmptyReply
            | LlmError::ScriptEnded
            | LlmError::TooLarge(_) => false,
        }
    }

    /// The wait the server asked for, if any.
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            LlmError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// A piece of a reply as it streams in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamDelta<'a> {
    /// Assistant text.
    Text(&'a str),
    /// More of the arguments (JSON text) of the reply's tool call number `index`.
    ToolArguments {
        index: usize,
        name: &'a str,
        fragment: &'a str,
    },
}

/// Receives the pieces of a reply as they stream in.
pub type StreamSink<'a> = &'a mut (dyn FnMut(StreamDelta<'_>) + Send);

/// Anything that can play the model's side of a conversation.
pub trait ChatModel: Send + Sync {
    /// A short label for the header and logs (model name).
    fn label(&self) -> String;

    /// Run one chat-completions turn, reporting what streams in to `sink`.
    fn complete<'a>(
        &'a self,
        request: ChatRequest<'a>,
        sink: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<ModelReply, LlmError>>;

    /// The same model client asking for another model (`/model NAME`), or
    /// `None` when this model cannot switch (a scripted one).
    fn with_model(&self, _model: &str) -> Option<Arc<dyn ChatModel>> {
        None
    }

    /// The server's model names, sorted (`stepwise models`).
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        Box::pin(async {
            Err(LlmError::Decode(
                "this model has no server to list models from".into(),
            ))
        })
    }
}
