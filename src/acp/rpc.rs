//! JSON-RPC 2.0 over lines: what one line from the client is (a request, a
//! notification, a response to one of ours, or something to answer with an
//! error), and the outbox every message to the client goes through, which
//! also matches the client's responses to the requests stepwise sent.
//!
//! What must stay true: stdout carries one JSON-RPC message per line and
//! nothing else (everything is written by `write_lines`, one task, in the
//! order it was sent); every line is scrubbed of the key's value and made
//! terminal-safe (`present::json_safe`, which keeps the data); a line that is
//! not a message is answered with an error, never a crash.

use crate::present::json_safe;
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// An error answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
        }
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }

    fn to_json(&self) -> Value {
        json!({"code": self.code, "message": crate::present::sanitize(&self.message)})
    }
}

/// One line read from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// The client's answer to a request stepwise sent (`Err`: its `error`).
    Response {
        id: Value,
        outcome: Result<Value, Value>,
    },
    /// Not a message: answer `id` (null when unknown) with this error.
    Invalid {
        id: Value,
        error: RpcError,
    },
}

/// What one line holds.
pub fn parse(line: &str) -> Incoming {
    let invalid = |id: Option<&Value>, why: &str| Incoming::Invalid {
        id: id.cloned().unwrap_or(Value::Null),
        error: RpcError::new(INVALID_REQUEST, format!("invalid request: {why}")),
    };
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => {
            return Incoming::Invalid {
                id: Value::Null,
                error: RpcError::new(PARSE_ERROR, format!("parse error: {e}")),
            };
        }
    };
    let Value::Object(map) = value else {
        return invalid(
            None,
            "a message is one JSON object (batches are not supported)",
        );
    };
    let id = map.get("id");
    if id.is_some_and(|id| !(id.is_string() || id.is_number() || id.is_null())) {
        return invalid(None, "an id is a string or a number");
    }
    if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(id, "\"jsonrpc\" must be \"2.0\"");
    }
    let params = map.get("params").cloned().unwrap_or(Value::Null);
    match (map.get("method"), id) {
        (Some(Value::String(method)), Some(id)) => Incoming::Request {
            id: id.clone(),
            method: method.clone(),
            params,
        },
        (Some(Value::String(method)), None) => Incoming::Notification {
            method: method.clone(),
            params,
        },
        (Some(_), _) => invalid(id, "\"method\" must be a string"),
        (None, Some(id)) => match (map.get("result"), map.get("error")) {
            (_, Some(error)) => Incoming::Response {
                id: id.clone(),
                outcome: Err(error.clone()),
            },
            (Some(result), None) => Incoming::Response {
                id: id.clone(),
                outcome: Ok(result.clone()),
            },
            (None, None) => invalid(Some(id), "neither a method nor a result"),
        },
        (None, None) => invalid(None, "no \"method\""),
    }
}

/// What the writer task is handed.
pub enum Out {
    Line(String),
    /// Answered once every line sent before it is written and flushed.
    Flush(oneshot::Sender<()>),
}

type Waiting = oneshot::Sender<Result<Value, Value>>;

/// Every message to the client, and the requests waiting for its answer.
pub struct Outbox {
    lines: mpsc::UnboundedSender<Out>,
    waiting: Mutex<HashMap<u64, Waiting>>,
    next: AtomicU64,
}

/// Forgets a request whose caller stopped waiting (a late answer is ignored).
struct Forget<'a> {
    outbox: &'a Outbox,
    id: u64,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.outbox.waiting().remove(&self.id);
    }
}

impl Outbox {
    /// The outbox and what the writer task reads.
    pub fn new() -> (Arc<Outbox>, mpsc::UnboundedReceiver<Out>) {
        let (lines, rx) = mpsc::unbounded_channel();
        let outbox = Outbox {
            lines,
            waiting: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
        };
        (Arc::new(outbox), rx)
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Waiting>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn send(&self, message: Value) {
        let text = message.to_string();
        let text = crate::tools::scrub::text(&text);
        let _ = self.lines.send(Out::Line(json_safe(&text).into_owned()));
    }

    /// A notification (no answer expected).
    pub fn notify(&self, method: &str, params: impl Serialize) {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The answer to the client's request `id`.
    pub fn respond(&self, id: Value, result: Result<Value, RpcError>) {
        let mut message = Map::new();
        message.insert("jsonrpc".into(), json!("2.0"));
        message.insert("id".into(), id);
        match result {
            Ok(value) => message.insert("result".into(), value),
            Err(error) => message.insert("error".into(), error.to_json()),
        };
        self.send(Value::Object(message));
    }

    /// Ask the client and wait for its answer (`Err`: its error object, or
    /// a note that the connection closed first).
    pub async fn request(&self, method: &str, params: impl Serialize) -> Result<Value, Value> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiting().insert(id, tx);
        let _forget = Forget { outbox: self, id };
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx.await
            .unwrap_or_else(|_| Err(json!({"message": "the connection closed"})))
    }

    /// Hand the client's answer to whoever asked; false when no one waits for `id`.
    pub fn resolve(&self, id: &Value, outcome: Result<Value, Value>) -> bool {
        let Some(id) = id.as_u64() else {
            return false;
        };
        match self.waiting().remove(&id) {
            Some(waiter) => waiter.send(outcome).is_ok(),
            None => false,
        }
    }

    /// The client is gone: every request still waiting gets an error.
    pub fn fail_waiting(&self) {
        self.waiting().clear();
    }

    /// Wait until everything sent so far is written.
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.lines.send(Out::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

/// The writer task: each message on its own line, flushed at once.
pub async fn write_lines(mut lines: mpsc::UnboundedReceiver<Out>, mut to: impl AsyncWrite + Unpin) {
    while let Some(out) = lines.recv().await {
        match out {
            Out::Line(mut line) => {
                line.push('\n');
                if to.write_all(line.as_bytes()).await.is_err() || to.flush().await.is_err() {
                    // The client is gone; nothing more can be said.
                    return;
                }
            }
            Out::Flush(done) => {
                let _ = to.flush().await;
                let _ = done.send(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_told_apart() {
        let request = parse(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
        assert_eq!(
            request,
            Incoming::Request {
                id: json!(1),
                method: "initialize".into(),
                params: json!({})
            }
        );
        let note =
            parse(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#);
        assert!(
            matches!(note, Incoming::Notification { method, .. } if method == "session/cancel")
        );
        let answer =
            parse(r#"{"jsonrpc":"2.0","id":7,"result":{"outcome":{"outcome":"cancelled"}}}"#);
        assert!(matches!(answer, Incoming::Response { outcome: Ok(_), .. }));
        let failed = parse(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}"#);
        assert!(matches!(
            failed,
            Incoming::Response {
                outcome: Err(_),
                ..
            }
        ));
    }

    #[test]
    fn what_is_no_message_gets_the_right_error() {
        let code = |line: &str| match parse(line) {
            Incoming::Invalid { error, .. } => error.code,
            other => panic!("{other:?}"),
        };
        assert_eq!(code("{not json"), PARSE_ERROR);
        assert_eq!(code("[1,2]"), INVALID_REQUEST);
        assert_eq!(code(r#"{"id":1,"method":"x"}"#), INVALID_REQUEST);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":3}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#),
            INVALID_REQUEST
        );
        match parse(r#"{"jsonrpc":"2.0","id":"a","method":5}"#) {
            Incoming::Invalid { id, .. } => assert_eq!(id, json!("a"), "the id is kept"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn an_answer_reaches_the_request_that_waits_for_it() {
        let (outbox, mut lines) = Outbox::new();
        let asking = {
            let outbox = outbox.clone();
            tokio::spawn(async move { outbox.request("x/y", json!({"a": 1})).await })
        };
        let Some(Out::Line(line)) = lines.recv().await else {
            panic!("a line")
        };
        let sent: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(sent["method"], "x/y");
        assert!(
            !outbox.resolve(&json!(999), Ok(json!(null))),
            "no one waits"
        );
        assert!(outbox.resolve(&sent["id"], Ok(json!({"ok": true}))));
        assert_eq!(asking.await.unwrap(), Ok(json!({"ok": true})));
    }
}
