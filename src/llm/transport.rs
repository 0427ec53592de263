//! What both model clients share about HTTP: the client for a base URL
//! (stepwise's `User-Agent`, no proxy for a server on this machine), the
//! `[headers]` as a header map, a non-success answer as an `LlmError`, and
//! the readable chain of a `reqwest` error.
//!
//! What must stay true: a loopback base URL never goes through a proxy; a
//! secret-looking header value is hidden from all output before it is sent;
//! redirects are never followed (reqwest drops only `Authorization` on a
//! redirect to another host, so `x-api-key` and `[headers]` would go along):
//! a 3xx is an error naming where it pointed.
//!
//! Liveness of a stream ([`Liveness`]): any byte resets the idle timer (SSE
//! comments such as `: keep-alive` and `ping` events included, which vLLM,
//! OpenRouter and proxies send while a model thinks); a connection kept
//! alive without a single token of the reply for the token limit, a longer
//! one, is a separate error.

use super::LlmError;
use super::errors;
use futures_util::{Stream, StreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::time::Instant;

/// Default for how long a response may stay silent before it counts as broken.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Default for how long a stream that is kept alive may go without a token
/// of the reply (text, reasoning or arguments) before it counts as stuck.
pub const DEFAULT_TOKEN_TIMEOUT: Duration = Duration::from_secs(600);
/// Sent with every request, so server logs can tell stepwise's requests apart.
pub const USER_AGENT: &str = concat!("stepwise/", env!("CARGO_PKG_VERSION"));

/// The HTTP client for a base URL: stepwise's `User-Agent`, and no proxy for
/// a server on this machine (a proxy from the environment would otherwise
/// see every request and the key).
pub(super) fn http_client(base_url: &str) -> Result<reqwest::Client, LlmError> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(USER_AGENT);
    if crate::config::is_local_url(base_url).unwrap_or(false) {
        builder = builder.no_proxy();
    }
    builder.build().map_err(|e| LlmError::Connect {
        url: base_url.to_string(),
        detail: e.to_string(),
    })
}

/// The `[headers]` of the configuration as a header map; a value that looks
/// secret is hidden from all output from now on, like the key.
pub(super) fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, LlmError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let bad = |what: &str| LlmError::Decode(format!("header {name}: {what}"));
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad("bad name"))?;
        let text = HeaderValue::from_str(value).map_err(|_| bad("bad value"))?;
        if crate::config::headers::looks_secret(name, value) {
            crate::tools::scrub::hide(value);
        }
        map.insert(header, text);
    }
    Ok(map)
}

/// A non-success answer as an error: the server's message, its retry hint,
/// and whether it says the request did not fit the context.
pub(super) async fn response_error(
    response: reqwest::Response,
    idle_timeout: Duration,
    key_var: &str,
) -> LlmError {
    let status = response.status().as_u16();
    let retry_after = errors::retry_after(response.headers(), SystemTime::now());
    if response.status().is_redirection() {
        let location: String = (response.headers().get(reqwest::header::LOCATION))
            .and_then(|l| l.to_str().ok())
            .map(|l| l.chars().filter(|c| !c.is_control()).take(200).collect())
            .unwrap_or_default();
        return LlmError::Http {
            status,
            message: format!(
                "the server redirected to {location:?}; stepwise does not follow redirects, so the key never goes to another address: set the base URL to the address that answers"
            ),
            retry_after: None,
        };
    }
    let cap = super::limits::MAX_ERROR_BODY_BYTES;
    let body = match super::limits::body_text(response, idle_timeout, cap).await {
        Ok(Ok(body) | Err(body)) => body,
        Err(_) => String::new(),
    };
    if errors::is_html(&body) {
        return errors::html_page(status, &body);
    }
    let (message, overflow) = errors::http_error_for(status, &body, key_var);
    if errors::is_quota(&body) && matches!(status, 400 | 402 | 403 | 429) {
        return LlmError::Quota { status, message };
    }
    // Keys, models and rate limits are never about the context, whatever the wording.
    if overflow && !matches!(status, 401 | 403 | 404 | 429) {
        return LlmError::ContextOverflow { message };
    }
    LlmError::Http {
        status,
        message,
        retry_after,
    }
}

/// `reqwest` hides the useful part (refused, DNS, TLS) in the source chain.
/// A reset by the server (a TCP reset, an HTTP/2 `RST_STREAM` or `GOAWAY`
/// with an error) reads as that, the transport's words in parentheses.
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    reset_in_words(text)
}

/// What a transport error says, in the words of [`error_chain`].
pub(super) fn stream_failure(e: eventsource_stream::EventStreamError<reqwest::Error>) -> LlmError {
    LlmError::Stream(match e {
        eventsource_stream::EventStreamError::Transport(e) => error_chain(&e),
        other => other.to_string(),
    })
}

/// Markers of a reset in a transport error's text: h2's remote `RST_STREAM`
/// and `GOAWAY`, and the OS's TCP reset.
const RESET_MARKERS: [&str; 3] = [
    "stream error received",
    "connection error received",
    "connection reset",
];

fn reset_in_words(text: String) -> String {
    let lower = text.to_ascii_lowercase();
    let Some(at) = RESET_MARKERS.iter().find_map(|m| lower.find(m)) else {
        return text;
    };
    // Keep the part that names the reset (h2's reason or the OS error), not the wrapping.
    let detail = text.get(at..).unwrap_or_default();
    format!("the connection was reset by the server ({detail})")
}

/// The two limits of a streaming reply and the clocks they run on: bytes
/// (any, keep-alives included) for the idle limit, tokens of the reply for
/// the token limit.
pub(super) struct Liveness {
    idle: Duration,
    tokens: Duration,
    last_byte: Arc<Mutex<Instant>>,
    last_token: Instant,
    token_count: u64,
    /// Set when the stream was cut at an event past its cap.
    cut: Arc<AtomicBool>,
}

impl Liveness {
    /// Clocks started now; the token limit is never shorter than the idle one.
    pub(super) fn new(idle: Duration, tokens: Duration) -> Self {
        Liveness {
            idle,
            tokens: tokens.max(idle),
            last_byte: Arc::new(Mutex::new(Instant::now())),
            last_token: Instant::now(),
            token_count: 0,
            cut: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The bytes of a response in whole lines, each chunk resetting the
    /// idle clock; the stream ends early (see [`Liveness::cut`]) where one
    /// event passes [`MAX_EVENT_BYTES`](super::limits::MAX_EVENT_BYTES).
    pub(super) fn watch(
        &self,
        response: reqwest::Response,
    ) -> impl Stream<Item = Result<impl AsRef<[u8]> + use<>, reqwest::Error>> + Unpin + use<> {
        let last_byte = Arc::clone(&self.last_byte);
        let bytes = response.bytes_stream().inspect(move |_| {
            if let Ok(mut last) = last_byte.lock() {
                *last = Instant::now();
            }
        });
        super::limits::WholeLines::new(bytes, Arc::clone(&self.cut))
    }

    /// Whether the stream was cut at an event past its cap: what came
    /// after is not the reply (its last event is cut short).
    pub(super) fn cut(&self) -> bool {
        self.cut.load(Ordering::Relaxed)
    }

    /// Tell how many pieces of the reply came so far; more than before resets the token clock.
    pub(super) fn tokens_so_far(&mut self, count: u64) {
        if count > self.token_count {
            self.token_count = count;
            self.last_token = Instant::now();
        }
    }

    fn last_byte(&self) -> Instant {
        self.last_byte
            .lock()
            .map_or_else(|_| Instant::now(), |l| *l)
    }

    /// The next item of `stream`, or the error of whichever limit ran out first.
    pub(super) async fn next<S: Stream + Unpin>(
        &self,
        stream: &mut S,
    ) -> Result<Option<S::Item>, LlmError> {
        let mut next = stream.next();
        loop {
            let deadline = (self.last_byte() + self.idle).min(self.last_token + self.tokens);
            match tokio::time::timeout_at(deadline, &mut next).await {
                Ok(item) => return Ok(item),
                Err(_) => {
                    let now = Instant::now();
                    if now >= self.last_token + self.tokens {
                        return Err(LlmError::NoTokens(self.tokens.as_secs()));
                    }
                    if now >= self.last_byte() + self.idle {
                        return Err(LlmError::IdleTimeout(self.idle.as_secs()));
                    }
                    // Bytes came meanwhile (a keep-alive): wait on.
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resets_read_as_resets_whatever_the_transport_says() {
        // h2's remote RST_STREAM and GOAWAY, as reqwest chains them, and a TCP reset.
        for (chain, detail) in [
            (
                "error decoding response body: request or response body error: error reading a body from connection: stream error received: unexpected internal error encountered",
                "(stream error received: unexpected internal error encountered)",
            ),
            (
                "error sending request: client error (SendRequest): http2 error: connection error received: not a result of an error",
                "(connection error received: not a result of an error)",
            ),
            (
                "error decoding response body: Connection reset by peer (os error 104)",
                "(Connection reset by peer (os error 104))",
            ),
        ] {
            assert_eq!(
                reset_in_words(chain.to_string()),
                format!("the connection was reset by the server {detail}")
            );
        }
        let other = "error sending request: connection refused";
        assert_eq!(reset_in_words(other.to_string()), other);
    }
}
