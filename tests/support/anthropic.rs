//! A mock of Anthropic's Messages API on 127.0.0.1 (wiremock), playing
//! replies in its wire format: typed SSE events (`event: NAME` + `data:`),
//! `tool_use` arguments streamed as `input_json_delta` pieces split inside
//! tokens, usage with cache tokens, error bodies and `error` events. Also
//! `GET /v1/models` in the shape both OpenAI and Anthropic use
//! (`{"data":[{"id":...}]}`), for `stepwise models`.

use super::{Reply, SUMMARIZE_MARKER};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::Mutex;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Cache tokens every scripted reply reports (read, created).
pub const CACHE_READ: u64 = 300;
pub const CACHE_CREATED: u64 = 20;

/// An SSE body of `(event, data)` pairs, as Anthropic sends it.
pub fn events(events: &[(&str, Value)]) -> Reply {
    let mut body = String::new();
    for (name, data) in events {
        body.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    Reply::Custom(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
}

fn start() -> (&'static str, Value) {
    (
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message", "role": "assistant", "content": [], "model": "claude-mock", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 50, "cache_creation_input_tokens": CACHE_CREATED, "cache_read_input_tokens": CACHE_READ, "output_tokens": 1}}}),
    )
}

fn end(stop_reason: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 25}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

fn text_block(index: u64, text: &str) -> Vec<(&'static str, Value)> {
    let mut out = vec![(
        "content_block_start",
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
    )];
    out.push(("ping", json!({"type": "ping"})));
    for piece in pieces(text, 4) {
        out.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
        ));
    }
    out.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    ));
    out
}

/// A plain text reply ending the turn.
pub fn text(answer: &str) -> Reply {
    let mut all = vec![start()];
    all.extend(text_block(0, answer));
    all.extend(end("end_turn"));
    events(&all)
}

/// A text reply cut at the output limit (`stop_reason: max_tokens`).
pub fn cut_at_max_tokens(partial: &str) -> Reply {
    text_stopped(partial, "max_tokens")
}

/// A text reply ending with this stop reason (`refusal`,
/// `model_context_window_exceeded`, ...).
pub fn text_stopped(text: &str, stop_reason: &str) -> Reply {
    let mut all = vec![start()];
    all.extend(text_block(0, text));
    all.extend(end(stop_reason));
    events(&all)
}

/// A short text, then one tool call whose input streams in pieces of 5
/// characters (inside keys, values and escapes).
pub fn tool_use(id: &str, name: &str, input: Value) -> Reply {
    let mut all = vec![start()];
    all.extend(text_block(0, "Let me look."));
    all.push((
        "content_block_start",
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
    ));
    all.push((
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
    ));
    let text = input.to_string();
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(5) {
        let piece: String = piece.iter().collect();
        all.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": piece}}),
        ));
    }
    all.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 1}),
    ));
    all.extend(end("tool_use"));
    events(&all)
}

/// A 200 stream that starts, then reports an error event of this type.
pub fn error_event(kind: &str, message: &str) -> Reply {
    events(&[
        start(),
        ("ping", json!({"type": "ping"})),
        (
            "error",
            json!({"type": "error", "error": {"type": kind, "message": message}}),
        ),
    ])
}

/// An error status with Anthropic's error body.
pub fn error(status: u16, kind: &str, message: &str) -> Reply {
    Reply::Error {
        status,
        body: json!({"type": "error", "error": {"type": kind, "message": message}}).to_string(),
    }
}

/// An error status with Anthropic's body and a `retry-after` header.
pub fn error_retry_after(status: u16, kind: &str, message: &str, seconds: u64) -> Reply {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    Reply::Custom(
        ResponseTemplate::new(status)
            .insert_header("retry-after", seconds.to_string().as_str())
            .set_body_raw(body.to_string(), "application/json"),
    )
}

fn pieces(text: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(parts).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

struct Queue(Mutex<VecDeque<Reply>>);

impl Respond for Queue {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        if String::from_utf8_lossy(&request.body).contains(SUMMARIZE_MARKER) {
            return text("Summary: files were read.").template();
        }
        match self.0.lock().ok().and_then(|mut q| q.pop_front()) {
            Some(reply) => reply.template(),
            None => error(400, "invalid_request_error", "mock: no scripted reply left").template(),
        }
    }
}

/// A running mock server.
pub struct MockApi {
    pub server: MockServer,
}

impl MockApi {
    /// Answer `POST /v1/messages` with `replies` in order.
    pub async fn messages(replies: Vec<Reply>) -> MockApi {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(Queue(Mutex::new(replies.into())))
            .mount(&server)
            .await;
        MockApi { server }
    }

    /// Answer `GET /v1/models` with these ids (in this order), or with `reply`.
    pub async fn models(ids: &[&str], reply: Option<Reply>) -> MockApi {
        let server = MockServer::start().await;
        let data: Vec<Value> = ids
            .iter()
            .map(|id| json!({"id": id, "type": "model", "object": "model", "display_name": id}))
            .collect();
        let body = json!({"object": "list", "data": data, "has_more": false, "first_id": ids.first(), "last_id": ids.last()});
        let reply = reply.unwrap_or(Reply::Json(body));
        Mock::given(method("GET"))
            .and(path("/v1/models"))
            .respond_with(reply.template())
            .mount(&server)
            .await;
        MockApi { server }
    }

    /// The base URL, as `--base-url` takes it (Anthropic's has no `/v1`).
    pub fn uri(&self) -> String {
        self.server.uri()
    }

    pub async fn requests(&self) -> Vec<Request> {
        self.server.received_requests().await.unwrap_or_default()
    }

    /// The JSON bodies of the requests received.
    pub async fn bodies(&self) -> Vec<Value> {
        self.requests()
            .await
            .iter()
            .map(|r| serde_json::from_slice(&r.body).unwrap_or(Value::Null))
            .collect()
    }
}

/// A header of a request, as text.
pub fn header(request: &Request, name: &str) -> Option<String> {
    request
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}
