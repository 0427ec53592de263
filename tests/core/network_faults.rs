//! Network faults: retries with backoff for transient failures, no retry for
//! client errors, broken and silent streams, cancellation of the wait, and a
//! session that survives giving up. What servers put inside a reply is in
//! `stream_errors`. The mock replies are written in each provider's
//! documented shape.

use crate::support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use stepwise::agent::{Decision, FinishReason, LoopSettings, RetryPolicy, Session};
use stepwise::config::Protocol;
use stepwise::llm::HttpModel;
use stepwise::tools::Workspace;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use wiremock::ResponseTemplate;

pub(crate) fn session_at(
    base_url: &str,
    dir: &std::path::Path,
    max_retries: u32,
    idle: Duration,
) -> Session {
    let http = HttpModel::new(base_url, "mock-model", None)
        .unwrap()
        .with_idle_timeout(idle);
    Session::new(
        LoopSettings {
            max_steps: 10,
            test_timeout: Duration::from_secs(30),
            protocol: Protocol::Tools,
            retry: RetryPolicy {
                max_retries,
                base_delay: Duration::from_millis(10),
                max_delay: Duration::from_millis(50),
            },
            ..LoopSettings::default()
        },
        Arc::new(http),
        Workspace::open(dir).unwrap(),
    )
}

pub(crate) async fn run_with(
    s: &mut Session,
    task: Option<&str>,
    cancel: CancellationToken,
) -> (FinishReason, Vec<Value>) {
    drive(s, task, cancel, |_| Decision::Approve).await
}

pub(crate) fn retries(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|e| e["event"] == "retrying").collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn server_errors_and_rate_limits_are_retried_honouring_retry_after() {
    let model = MockModel::start(vec![
        error(500, "internal error"),
        Reply::Custom(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_raw(r#"{"error":{"message":"slow down"}}"#, "application/json"),
        ),
        text("hello"),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 4, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    let r = retries(&events);
    assert_eq!(r.len(), 2);
    assert_eq!(
        (r[0]["retry"].as_u64(), r[0]["max_retries"].as_u64()),
        (Some(1), Some(4))
    );
    assert!(r[0]["error"].as_str().unwrap().contains("HTTP 500"));
    assert_eq!(r[1]["delay_ms"], 1000, "Retry-After: 1 is honoured");
    assert_eq!(model.requests().await.len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn client_errors_are_not_retried_and_say_what_is_wrong() {
    for (status, hint) in [
        (400, "bad request"),
        (401, "OPENAI_API_KEY"),
        (403, "access"),
        (404, "--model"),
    ] {
        let model = MockModel::start(vec![error(status, "bad request"), text("never")]).await;
        let ws = copy_workspace();
        let mut s = session_at(&model.base_url(), ws.path(), 4, Duration::from_secs(10));
        let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
        let FinishReason::Error(message) = reason else {
            panic!("{status}: {reason:?}")
        };
        assert!(
            message.contains(&format!("HTTP {status}")) && message.contains(hint),
            "{message}"
        );
        assert!(retries(&events).is_empty());
        assert_eq!(model.requests().await.len(), 1, "{status}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_cut_short_is_retried_and_its_partial_call_never_runs() {
    // The first attempt streams half a write_file call and stops: no finish reason, no [DONE].
    let cut = Reply::Sse {
        chunks: vec![
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"write_file","arguments":"{\"path\":\"calculator.py\",\"content\":\"bro"}}]}}]}).to_string(),
        ],
        done: false,
    };
    let model = MockModel::start(vec![cut, text("nothing to do")]).await;
    let ws = copy_workspace();
    let before = std::fs::read(ws.path().join("calculator.py")).unwrap();
    let mut s = session_at(&model.base_url(), ws.path(), 4, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    assert_eq!(retries(&events).len(), 1);
    assert!(
        retries(&events)[0]["error"]
            .as_str()
            .unwrap()
            .contains("ended before the reply was complete")
    );
    assert!(!events.iter().any(|e| e["event"] == "tool_call_proposed"));
    assert_eq!(
        std::fs::read(ws.path().join("calculator.py")).unwrap(),
        before
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_server_times_out_and_is_retried() {
    let model = MockModel::start(vec![
        Reply::Custom(ResponseTemplate::new(200).set_delay(Duration::from_secs(5))),
        text("back"),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 4, Duration::from_millis(300));
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    assert!(
        retries(&events)[0]["error"]
            .as_str()
            .unwrap()
            .contains("sent nothing")
    );
}

/// A raw server that sends headers and one chunk, then stays silent.
async fn stalling_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = socket.read(&mut buf).await;
                let chunk =
                    json!({"choices":[{"index":0,"delta":{"content":"partial"}}]}).to_string();
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                let body = format!("data: {chunk}\n\n");
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket
                    .write_all(format!("{:x}\r\n{body}\r\n", body.len()).as_bytes())
                    .await;
                tokio::time::sleep(Duration::from_secs(30)).await;
            });
        }
    });
    format!("http://{addr}/v1")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_that_stalls_mid_way_hits_the_idle_timeout_and_the_session_survives() {
    let base = stalling_server().await;
    let ws = copy_workspace();
    let mut s = session_at(&base, ws.path(), 1, Duration::from_millis(300));
    let started = Instant::now();
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    assert!(started.elapsed() < Duration::from_secs(20));
    let FinishReason::Error(message) = reason else {
        panic!("{reason:?}")
    };
    assert!(
        message.contains("sent nothing") && message.contains("gave up after 1 retries"),
        "{message}"
    );
    assert_eq!(retries(&events).len(), 1);
    // The conversation is kept: the task message is still there for "continue".
    assert!(
        s.history()
            .iter()
            .any(|m| m.content.as_deref() == Some("hi"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn after_giving_up_the_session_resumes_without_losing_the_conversation() {
    let model = MockModel::start(vec![
        error(503, "overloaded"),
        error(503, "overloaded"),
        error(503, "overloaded"),
        text("resumed fine"),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 2, Duration::from_secs(10));
    let (reason, _) = run_with(&mut s, Some("the task"), CancellationToken::new()).await;
    let FinishReason::Error(message) = reason else {
        panic!("{reason:?}")
    };
    assert!(message.contains("gave up after 2 retries"), "{message}");
    let (reason, events) = run_with(&mut s, None, CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "final_answer" && e["text"] == "resumed fine")
    );
    let requests = model.requests().await;
    let last_messages = requests[3]["messages"].as_array().unwrap();
    let users: Vec<&str> = last_messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(users, ["the task"], "resume adds no user message");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_user_can_cancel_a_retry_wait() {
    let model = MockModel::start(vec![Reply::Custom(
        ResponseTemplate::new(429).insert_header("retry-after", "60"),
    )])
    .await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 4, Duration::from_secs(10));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let (reason, events) = run_with(&mut s, Some("hi"), cancel).await;
    assert_eq!(reason, FinishReason::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(retries(&events)[0]["delay_ms"], 60_000);
}
