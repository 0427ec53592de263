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

use super::LlmError;
use super::errors;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::time::{Duration, SystemTime};

/// Default for how long a response may stay silent before it counts as broken.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
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
    let body = tokio::time::timeout(idle_timeout, response.text())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let (message, overflow) = errors::http_error_for(status, &body, key_var);
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
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
