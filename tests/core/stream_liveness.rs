//! Liveness of a stream and errors named for what they are, against servers
//! on 127.0.0.1 that speak the real wire: SSE comment lines (`: keep-alive`,
//! as vLLM, OpenRouter and proxies send while a model thinks) keep a
//! request alive, a stream kept alive without a token hits the longer token
//! limit; an HTML page, an error in a 200 JSON body, a quota or spend limit
//! and a connection reset each read as one plain sentence.

use crate::network_faults::{retries, run_with, session_at};
use crate::support::anthropic::{self as api, MockApi};
use crate::support::*;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use stepwise::agent::{FinishReason, LoopSettings, RetryPolicy, Session};
use stepwise::config::Protocol;
use stepwise::llm::{AnthropicModel, ChatModel, HttpModel};
use stepwise::tools::Workspace;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use wiremock::ResponseTemplate;

fn session_with(model: Arc<dyn ChatModel>, dir: &std::path::Path, max_retries: u32) -> Session {
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
        model,
        Workspace::open(dir).unwrap(),
    )
}

/// A raw HTTP/1.1 server answering every request with a chunked SSE body:
/// `keep_alives` comment lines 100 ms apart, then `tail` (if any), then the end.
async fn keep_alive_server(keep_alives: usize, tail: Option<String>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let tail = tail.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = socket.read(&mut buf).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
                let _ = socket.write_all(head.as_bytes()).await;
                let send = |text: String| format!("{:x}\r\n{text}\r\n", text.len());
                for _ in 0..keep_alives {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if socket
                        .write_all(send(": keep-alive\n\n".into()).as_bytes())
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
                if let Some(tail) = tail {
                    let _ = socket.write_all(send(tail).as_bytes()).await;
                    let _ = socket.write_all(b"0\r\n\r\n").await;
                }
            });
        }
    });
    format!("http://{addr}/v1")
}

fn text_events(answer: &str) -> String {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        format!(
            "data: {}\n\n",
            json!({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
        )
    };
    chunk(json!({"role":"assistant","content":answer}), None)
        + &chunk(json!({}), Some("stop"))
        + "data: [DONE]\n\n"
}

#[tokio::test(flavor = "multi_thread")]
async fn keep_alive_comments_reset_the_idle_timer() {
    // 1.5 s of keep-alives before the first token, with an idle limit of 0.5 s.
    let base = keep_alive_server(15, Some(text_events("thought it over"))).await;
    let ws = copy_workspace();
    let mut s = session_at(&base, ws.path(), 0, Duration::from_millis(500));
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered, "{events:?}");
    assert!(retries(&events).is_empty());
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "final_answer" && e["text"] == "thought it over")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_kept_alive_without_a_token_hits_the_token_limit() {
    let base = keep_alive_server(200, None).await;
    let ws = copy_workspace();
    let http = HttpModel::new(&base, "mock-model", None)
        .unwrap()
        .with_idle_timeout(Duration::from_millis(400))
        .with_token_timeout(Duration::from_secs(1));
    let mut s = session_with(Arc::new(http), ws.path(), 1);
    let started = Instant::now();
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    let FinishReason::Error(message) = reason else {
        panic!("{reason:?}")
    };
    assert!(
        message.contains("kept the connection alive but sent no token of the reply for 1s"),
        "{message}"
    );
    assert_eq!(retries(&events).len(), 1, "a stuck stream is retried");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_html_page_is_one_line_with_its_status_and_title() {
    let page = "<!DOCTYPE html>\n<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx/1.24.0</center>\n</body>\n</html>\n";
    let proxy_login = "<html><head>\n<title>Sign in - Corporate Proxy</title></head><body><form>...</form></body></html>";
    let model = MockModel::start(vec![
        Reply::Custom(ResponseTemplate::new(502).set_body_raw(page, "text/html")),
        Reply::Custom(
            ResponseTemplate::new(200).set_body_raw(proxy_login, "text/html; charset=utf-8"),
        ),
        text("never"),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 1, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    let r = retries(&events);
    assert_eq!(r.len(), 1, "a gateway's 502 page may pass: it is retried");
    assert_eq!(
        r[0]["error"],
        r#"the server answered an HTML page (HTTP 502, title "502 Bad Gateway"), not the API"#
    );
    let FinishReason::Error(message) = reason else {
        panic!("{reason:?}")
    };
    assert_eq!(
        message,
        r#"the server answered an HTML page (HTTP 200, title "Sign in - Corporate Proxy"), not the API (gave up after 1 retries)"#
    );
    assert!(!message.contains("<form>"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_in_a_200_json_body_shows_the_servers_message() {
    for body in [
        json!({"object":"error","message":"llama3 does not support tools","type":"BadRequestError","param":null,"code":400}),
        json!({"detail":"Model not loaded"}),
    ] {
        let model = MockModel::start(vec![Reply::Json(body.clone()), text("never")]).await;
        let ws = copy_workspace();
        let mut s = session_at(&model.base_url(), ws.path(), 2, Duration::from_secs(10));
        let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
        let FinishReason::Error(message) = reason else {
            panic!("{reason:?}")
        };
        let expected = body
            .get("message")
            .or(body.get("detail"))
            .and_then(|m| m.as_str())
            .unwrap();
        assert!(
            message.contains(expected) && !message.contains("not valid chat-completions JSON"),
            "{message}"
        );
        assert!(retries(&events).is_empty(), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_openai_quota_429_is_not_retried_and_says_it_is_a_quota() {
    let model = MockModel::start(vec![
        Reply::Custom(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_raw(
                    json!({"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}).to_string(),
                    "application/json",
                ),
        ),
        text("never"),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 4, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    let FinishReason::Error(message) = reason else {
        panic!("{reason:?}")
    };
    assert!(
        message.contains("quota or spend limit is reached (HTTP 429)")
            && message.contains("You exceeded your current quota")
            && !message.contains("rate limited"),
        "{message}"
    );
    assert!(retries(&events).is_empty());
    assert_eq!(model.requests().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_anthropic_spend_limit_429_is_not_retried_and_says_it_is_a_limit() {
    let mock = MockApi::messages(vec![
        api::error_retry_after(
            429,
            "rate_limit_error",
            "You have reached your specified API usage limits. You will regain access on 2027-01-01 at 00:00 UTC.",
            30,
        ),
        api::text("never"),
    ])
    .await;
    let ws = copy_workspace();
    let model = AnthropicModel::new(&mock.uri(), "claude-mock", None).unwrap();
    let mut s = session_with(Arc::new(model), ws.path(), 4);
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    let FinishReason::Error(message) = reason else {
        panic!("{reason:?}")
    };
    assert!(
        message.contains("quota or spend limit") && message.contains("regain access on 2027-01-01"),
        "{message}"
    );
    assert!(retries(&events).is_empty());
    assert_eq!(mock.requests().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_reset_mid_stream_reads_as_a_reset_by_the_server() {
    // A server that starts the reply, then resets the connection (RST, not FIN).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = vec![0u8; 65536];
            let _ = socket.read(&mut buf).await;
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
            let body = format!(
                "data: {}\n\n",
                json!({"choices":[{"index":0,"delta":{"content":"partial"}}]})
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket
                .write_all(format!("{:x}\r\n{body}\r\n", body.len()).as_bytes())
                .await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            let _ = socket.set_zero_linger();
            drop(socket);
        }
    });
    let ws = copy_workspace();
    let mut s = session_at(
        &format!("http://{addr}/v1"),
        ws.path(),
        1,
        Duration::from_secs(5),
    );
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    let FinishReason::Error(message) = reason else {
        panic!("{reason:?}")
    };
    assert!(
        message.contains("the model stream broke: the connection was reset by the server"),
        "{message}"
    );
    assert_eq!(retries(&events).len(), 1, "a reset is retried");
}
