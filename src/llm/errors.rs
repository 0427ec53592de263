//! Reading what a server says went wrong: the message of an error body or of
//! an error inside a 200 stream, whether it is worth retrying, whether it is a
//! context-window overflow (which no retry of the same request can fix), and
//! how long the server asked to wait (`retry-after-ms`, `Retry-After` in
//! seconds or as an HTTP date). Messages are the server's own words, clipped;
//! they never contain the API key: a server may echo it, so every error
//! leaving the client passes [`scrubbed`].
//!
//! Two answers are named for what they are rather than quoted: an HTML page
//! (a proxy's 502, a login page) is one line with its status and title, and
//! a quota or spend limit (OpenAI `insufficient_quota`, Anthropic's "API
//! usage limits") is not a rate limit and is not retried.

use super::LlmError;
use crate::tools::scrub;
use reqwest::header::HeaderMap;
use serde_json::Value;
use std::time::{Duration, SystemTime};

/// Longest wait a server may ask for; longer hints are cut to this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// Characters of a raw (non-JSON) body kept in a message.
const RAW_BODY_CHARS: usize = 300;

/// Error types and codes that say "try again later" (OpenAI, OpenRouter,
/// Anthropic-style proxies, vLLM, llama.cpp).
const TRANSIENT_KINDS: [&str; 11] = [
    "server_error",
    "overloaded",
    "overloaded_error",
    "rate_limit_exceeded",
    "rate_limit_error",
    "rate_limited",
    "timeout",
    "internal_error",
    "service_unavailable",
    "unavailable",
    // Anthropic's "unexpected internal error".
    "api_error",
];

/// Words of context-overflow errors: OpenAI and vLLM `context_length_exceeded`
/// / "maximum context length", llama.cpp `exceed_context_size_error` /
/// "exceeds the available context size", and similar wordings.
const OVERFLOW_MARKERS: [&str; 7] = [
    "context_length_exceeded",
    "exceed_context_size",
    "maximum context length",
    "context size",
    "context window",
    "context length",
    // Anthropic: "prompt is too long: 210000 tokens > 200000 maximum".
    "prompt is too long",
];

/// Words of errors that say the account's quota or spend limit is reached:
/// OpenAI's `insufficient_quota` ("You exceeded your current quota"),
/// Anthropic's "You have reached your specified API usage limits" and
/// "Your credit balance is too low", OpenRouter's "Insufficient credits".
const QUOTA_MARKERS: [&str; 7] = [
    "insufficient_quota",
    "exceeded your current quota",
    "api usage limits",
    "spend limit",
    "credit balance is too low",
    "insufficient credits",
    "billing_hard_limit_reached",
];

/// Whether an error body says a quota or spend limit is reached (not a rate limit).
pub fn is_quota(body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    QUOTA_MARKERS.iter().any(|m| body.contains(m))
}

/// Whether a body is an HTML page rather than an API's answer.
pub fn is_html(body: &str) -> bool {
    let head: String = body.trim_start().chars().take(100).collect();
    let head = head.to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html") || head.starts_with("<head")
}

/// The `<title>` of an HTML page, whitespace collapsed, clipped to 80 characters.
pub fn html_title(body: &str) -> Option<String> {
    let lower = body.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower.get(open..)?.find('>')? + 1;
    let end = start + lower.get(start..)?.find("</title")?;
    let title = body.get(start..end)?;
    let title: String = title.split_whitespace().collect::<Vec<_>>().join(" ");
    let title: String = title.chars().filter(|c| !c.is_control()).take(80).collect();
    (!title.is_empty()).then_some(title)
}

/// An HTML body as the error that names it.
pub fn html_page(status: u16, body: &str) -> LlmError {
    LlmError::HtmlPage {
        status,
        title: html_title(body),
    }
}

/// The wait a response asked for: `retry-after-ms` (Azure, OpenAI) first,
/// then `Retry-After` as seconds or as an HTTP date (relative to `now`).
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let wait = if let Some(ms) = header("retry-after-ms").and_then(parse_seconds) {
        ms / 1000
    } else {
        let value = header("retry-after")?;
        match parse_seconds(value) {
            Some(secs) => secs,
            None => {
                let date = httpdate::parse_http_date(value).ok()?;
                // A date already past means "now".
                date.duration_since(now).unwrap_or_default()
            }
        }
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

/// A non-negative number of units (`"2"`, `"1.5"`), as a duration of that
/// many seconds; the caller divides for milliseconds.
fn parse_seconds(value: &str) -> Option<Duration> {
    let n: f64 = value.parse().ok()?;
    (n.is_finite() && n >= 0.0).then(|| Duration::from_secs_f64(n.min(1e9)))
}

/// The error object of a body: `{"error": {...}}`, `{"error": "text"}` or a
/// top-level `{"object": "error", "message": ...}` (vLLM).
pub fn error_object(body: &Value) -> Option<&Value> {
    match body.get("error") {
        Some(e) if !e.is_null() => Some(e),
        _ if body.get("object").and_then(Value::as_str) == Some("error") => Some(body),
        _ => None,
    }
}

/// The server's message in an error object (or the object itself, as text).
fn message_of(error: &Value) -> String {
    let text = match error {
        Value::String(s) => s.clone(),
        _ => match error.get("message").and_then(Value::as_str) {
            Some(m) => m.to_string(),
            None => error.to_string(),
        },
    };
    text.trim().to_string()
}

/// Whether an error object says the failure is temporary.
fn is_transient(error: &Value) -> bool {
    let names = ["type", "code", "status"]
        .iter()
        .filter_map(|k| error.get(k));
    names.into_iter().any(|v| match v {
        Value::String(s) => {
            let s = s.to_ascii_lowercase();
            TRANSIENT_KINDS.contains(&s.as_str()) || s.parse::<u16>().is_ok_and(transient_status)
        }
        Value::Number(n) => n
            .as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .is_some_and(transient_status),
        _ => false,
    })
}

fn transient_status(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// Whether an error's text or codes say the request does not fit the context window.
pub fn is_context_overflow(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    OVERFLOW_MARKERS.iter().any(|m| text.contains(m))
}

/// An error reported by the server inside a reply it started with HTTP 200.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineError {
    pub message: String,
    pub transient: bool,
    /// The error says the request does not fit the context window.
    pub overflow: bool,
}

impl InlineError {
    /// The reply's end: a context overflow, else a server error.
    pub fn into_llm_error(self) -> LlmError {
        if self.overflow {
            LlmError::ContextOverflow {
                message: self.message,
            }
        } else {
            LlmError::Server {
                message: self.message,
                transient: self.transient,
            }
        }
    }
}

/// What the `error` member of a chunk or body says, unless it is `null`.
pub fn inline_error(error: &Value) -> Option<InlineError> {
    if error.is_null() {
        return None;
    }
    let message = message_of(error);
    Some(InlineError {
        transient: is_transient(error),
        overflow: is_context_overflow(&error.to_string()),
        message: if message.is_empty() {
            "no error message".into()
        } else {
            message
        },
    })
}

/// The server's own error text for a non-2xx answer, with a hint, and
/// whether it reports a context overflow (naming `OPENAI_API_KEY`).
#[cfg(test)]
pub fn http_error(status: u16, body: &str) -> (String, bool) {
    http_error_for(status, body, crate::config::API_KEY_VAR)
}

/// `http_error`, naming `key_var` (the provider's key variable) in a 401's hint.
pub fn http_error_for(status: u16, body: &str, key_var: &str) -> (String, bool) {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(error_object);
    let message = match error {
        Some(e) => message_of(e),
        None => body.trim().chars().take(RAW_BODY_CHARS).collect(),
    };
    let overflow = is_context_overflow(&error.map_or_else(|| body.to_string(), Value::to_string));
    let hint = match status {
        401 => format!(" (check {key_var})"),
        403 => " (the key may lack access to this model)".into(),
        404 => " (check --base-url and --model)".into(),
        429 if !is_quota(body) => " (rate limited)".into(),
        _ => String::new(),
    };
    let text = if message.is_empty() {
        format!("no error message{hint}")
    } else {
        format!("{message}{hint}")
    };
    (text, overflow)
}

/// The error with the key and credential-looking values scrubbed from every text it carries.
pub fn scrubbed(error: LlmError) -> LlmError {
    match error {
        LlmError::Connect {
            mut url,
            mut detail,
        } => {
            scrub::string(&mut url);
            scrub::string(&mut detail);
            LlmError::Connect { url, detail }
        }
        LlmError::Http {
            status,
            mut message,
            retry_after,
        } => {
            scrub::string(&mut message);
            LlmError::Http {
                status,
                message,
                retry_after,
            }
        }
        LlmError::HtmlPage { status, mut title } => {
            if let Some(t) = title.as_mut() {
                scrub::string(t);
            }
            LlmError::HtmlPage { status, title }
        }
        LlmError::Quota {
            status,
            mut message,
        } => {
            scrub::string(&mut message);
            LlmError::Quota { status, message }
        }
        LlmError::Stream(mut m) => {
            scrub::string(&mut m);
            LlmError::Stream(m)
        }
        LlmError::Decode(mut m) => {
            scrub::string(&mut m);
            LlmError::Decode(m)
        }
        LlmError::Server {
            mut message,
            transient,
        } => {
            scrub::string(&mut message);
            LlmError::Server { message, transient }
        }
        LlmError::ContextOverflow { mut message } => {
            scrub::string(&mut message);
            LlmError::ContextOverflow { message }
        }
        e @ (LlmError::IdleTimeout(_)
        | LlmError::NoTokens(_)
        | LlmError::EmptyReply
        | LlmError::ScriptEnded
        | LlmError::TooLarge(_)) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn retry_hints_in_milliseconds_seconds_and_http_dates() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let wait = |pairs: &[(&'static str, &str)]| retry_after(&headers(pairs), now);
        assert_eq!(
            wait(&[("retry-after-ms", "1500")]),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            wait(&[("retry-after-ms", "250"), ("retry-after", "9")]),
            Some(Duration::from_millis(250)),
            "the finer hint wins"
        );
        assert_eq!(wait(&[("retry-after", "7")]), Some(Duration::from_secs(7)));
        assert_eq!(
            wait(&[("retry-after", "Sun, 06 Nov 1994 08:49:42 GMT")]),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            wait(&[("retry-after", "Sun, 06 Nov 1994 08:40:00 GMT")]),
            Some(Duration::ZERO),
            "a date in the past means now"
        );
        assert_eq!(wait(&[("retry-after", "3600")]), Some(MAX_RETRY_AFTER));
        assert_eq!(wait(&[("retry-after", "soon")]), None);
        assert_eq!(wait(&[("retry-after", "-3")]), None);
        assert_eq!(wait(&[]), None);
    }

    #[test]
    fn error_message_comes_from_the_openai_error_object() {
        let m = |status, body| http_error(status, body).0;
        assert_eq!(
            m(
                401,
                r#"{"error":{"message":"Incorrect API key","type":"x"}}"#
            ),
            "Incorrect API key (check OPENAI_API_KEY)"
        );
        assert_eq!(m(500, "  boom \n"), "boom");
        assert_eq!(
            m(404, r#"{"error":"model not found"}"#),
            "model not found (check --base-url and --model)"
        );
        assert_eq!(
            m(
                400,
                r#"{"object":"error","message":"bad","type":"BadRequestError","code":400}"#
            ),
            "bad"
        );
    }

    #[test]
    fn html_pages_are_told_apart_and_their_title_read() {
        let page = "\n<!DOCTYPE html>\n<html><head><TITLE>\n  502 Bad\n Gateway </TITLE></head><body>nginx</body></html>";
        assert!(is_html(page));
        assert_eq!(html_title(page).as_deref(), Some("502 Bad Gateway"));
        assert!(!is_html(r#"{"error":"<html>"}"#));
        assert_eq!(html_title("<html><body>no title</body></html>"), None);
        assert_eq!(
            html_page(502, "<html><title>Bad Gateway</title></html>").to_string(),
            r#"the server answered an HTML page (HTTP 502, title "Bad Gateway"), not the API"#
        );
        assert_eq!(
            html_page(200, "<html></html>").to_string(),
            "the server answered an HTML page (HTTP 200), not the API"
        );
    }

    #[test]
    fn quota_and_spend_limits_are_not_rate_limits() {
        assert!(is_quota(
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#
        ));
        assert!(is_quota(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2026-01-01 at 00:00 UTC."}}"#
        ));
        assert!(!is_quota(
            r#"{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","code":"rate_limit_exceeded"}}"#
        ));
    }

    #[test]
    fn context_overflows_are_recognised_in_every_known_wording() {
        let bodies = [
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":4096}}"#,
            r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 9000 tokens","type":"BadRequestError","code":400}"#,
        ];
        for body in bodies {
            assert!(http_error(400, body).1, "{body}");
        }
        assert!(
            !http_error(
                500,
                r#"{"error":{"message":"Cannot use tools with stream"}}"#
            )
            .1
        );
    }

    #[test]
    fn inline_errors_say_whether_they_are_transient() {
        let e = |v: Value| inline_error(&v).unwrap();
        assert!(e(serde_json::json!({"message":"sorry","type":"server_error"})).transient);
        assert!(e(serde_json::json!({"code":502,"message":"bad gateway"})).transient);
        assert!(e(serde_json::json!({"code":"429","message":"slow"})).transient);
        let refused = e(serde_json::json!({"code":"invalid_prompt","message":"no"}));
        assert_eq!((refused.message.as_str(), refused.transient), ("no", false));
        assert_eq!(e(serde_json::json!("plain")).message, "plain");
        assert!(e(serde_json::json!({"code":"context_length_exceeded","message":"x"})).overflow);
        assert!(inline_error(&Value::Null).is_none());
    }
}
