//! Network and model faults: retries with backoff for transient failures,
//! no retry for client errors, broken and silent streams, cancellation of the
//! wait, and a session that survives giving up; errors inside a 200 stream,
//! retry hints, repeated 500s, empty replies, replies cut at the token limit,
//! and wire details servers rely on (tool-call fields, User-Agent). The mock
//! replies are written in each provider's documented shape.
//! Longer than 400 lines on purpose: it is the one list of the faults real
//! servers produce, each a short test; split it by fault kind if it grows.

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

fn session_at(base_url: &str, dir: &std::path::Path, max_retries: u32, idle: Duration) -> Session {
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

async fn run_with(
    s: &mut Session,
    task: Option<&str>,
    cancel: CancellationToken,
) -> (FinishReason, Vec<Value>) {
    drive(s, task, cancel, |_| Decision::Approve).await
}

fn retries(events: &[Value]) -> Vec<&Value> {
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

#[tokio::test(flavor = "multi_thread")]
async fn requests_name_stepwise_and_its_version_as_user_agent() {
    let model = MockModel::start(vec![text("hello")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, _) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    let requests = model.raw_requests().await;
    let agent = requests[0]
        .headers
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert_eq!(agent, format!("stepwise/{}", env!("CARGO_PKG_VERSION")));
}

/// Chunks of one streamed reply in OpenAI's wire shape, ending with `finish`.
fn sse_reply(deltas: &[Value], finish: &str) -> Reply {
    let mut chunks: Vec<String> = deltas
        .iter()
        .map(|d| json!({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":d,"finish_reason":null}]}).to_string())
        .collect();
    chunks.push(json!({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":finish}]}).to_string());
    Reply::Sse { chunks, done: true }
}

#[tokio::test(flavor = "multi_thread")]
async fn unicode_whitespace_in_streamed_arguments_does_not_end_the_session() {
    let nbsp_call = sse_reply(
        &[
            json!({"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"write_file","arguments":"{\u{a0}\"path\"\u{a0}:"}}]}),
            json!({"tool_calls":[{"index":0,"function":{"arguments":"\u{a0}\"new.py\",\u{3000}\"content\": \"x\"}"}}]}),
        ],
        "tool_calls",
    );
    let model = MockModel::start(vec![nbsp_call, text("gave up on that file")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "tool_call_streaming" && e["tool"] == "write_file")
    );
    assert!(!ws.path().join("new.py").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_fields_of_a_tool_call_go_back_unchanged_in_the_history() {
    // Gemini's OpenAI-compatible shape: no `index`, a thought signature in `extra_content`.
    let signed = Reply::Sse {
        chunks: vec![json!({"choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"c2lnbmF0dXJl"}},"function":{"arguments":"{\"path\":\"calculator.py\"}","name":"read_file"},"id":"call_9","type":"function"}]},"index":0}],"model":"gemini","object":"chat.completion.chunk"}).to_string()],
        done: true,
    };
    let model = MockModel::start(vec![signed, text("read it")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, _) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    let requests = model.requests().await;
    let call = requests[1]["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["tool_calls"].is_array()))
        .map(|m| m["tool_calls"][0].clone())
        .unwrap_or_default();
    assert_eq!(
        call["extra_content"],
        json!({"google":{"thought_signature":"c2lnbmF0dXJl"}})
    );
    assert_eq!(
        (call["id"].as_str(), call["type"].as_str()),
        (Some("call_9"), Some("function"))
    );
}

fn final_answers(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e["event"] == "final_answer")
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transient_error_inside_a_200_stream_is_retried_with_the_servers_message() {
    // OpenAI's shape: text chunks, then `data: {"error": ...}` and the end of the body.
    let broken = Reply::Sse {
        chunks: vec![
            json!({"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"The answer"},"finish_reason":null}]}).to_string(),
            json!({"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}).to_string(),
        ],
        done: false,
    };
    let model = MockModel::start(vec![broken, text("complete answer")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 4, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    let r = retries(&events);
    assert_eq!(r.len(), 1);
    let error = r[0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("The server had an error while processing your request"),
        "{error}"
    );
    assert_eq!(final_answers(&events)[0]["text"], "complete answer");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lasting_error_inside_a_200_stream_stops_and_its_partial_text_is_not_the_answer() {
    // OpenRouter's shape: a chunk with a top-level `error` and `finish_reason: "error"`, then [DONE].
    let refused = Reply::Sse {
        chunks: vec![
            json!({"id":"gen-1","object":"chat.completion.chunk","provider":"OpenAI","choices":[{"index":0,"delta":{"role":"assistant","content":"Partial"},"finish_reason":null}]}).to_string(),
            json!({"id":"gen-1","object":"chat.completion.chunk","provider":"OpenAI","error":{"code":403,"message":"Your input was flagged by moderation"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}).to_string(),
        ],
        done: true,
    };
    let model = MockModel::start(vec![refused, text("never")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 4, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    let FinishReason::Error(message) = reason else {
        panic!("{reason:?}")
    };
    assert!(message.contains("flagged by moderation"), "{message}");
    assert!(retries(&events).is_empty());
    assert!(final_answers(&events).is_empty());
    assert_eq!(model.requests().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_hints_in_milliseconds_and_as_an_http_date_are_honoured() {
    let in_three_seconds =
        httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(3));
    let model = MockModel::start(vec![
        Reply::Custom(
            ResponseTemplate::new(429)
                .insert_header("retry-after-ms", "350")
                .set_body_raw(r#"{"error":{"message":"Requests to the ChatCompletions_Create Operation have exceeded the rate limit."}}"#, "application/json"),
        ),
        Reply::Custom(
            ResponseTemplate::new(503)
                .insert_header("retry-after", in_three_seconds.as_str())
                .set_body_raw(r#"{"error":{"message":"busy"}}"#, "application/json"),
        ),
        text("hello"),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 4, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    let r = retries(&events);
    assert_eq!(r[0]["delay_ms"], 350, "retry-after-ms is honoured");
    let date_wait = r[1]["delay_ms"].as_u64().unwrap_or_default();
    assert!((1_000..=3_000).contains(&date_wait), "{date_wait}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_500_that_repeats_unchanged_stops_at_the_second_answer_with_a_hint() {
    let model = MockModel::start(vec![
        error(500, "Cannot use tools with stream"),
        error(500, "Cannot use tools with stream"),
        error(500, "Cannot use tools with stream"),
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
        message.contains("Cannot use tools with stream") && message.contains("--protocol json"),
        "{message}"
    );
    assert_eq!(retries(&events).len(), 1);
    assert_eq!(model.requests().await.len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_200_with_an_empty_body_is_an_empty_reply_and_not_retried() {
    for content_type in ["text/event-stream", "application/json"] {
        let empty = Reply::Custom(ResponseTemplate::new(200).set_body_raw("", content_type));
        let model = MockModel::start(vec![empty, text("never")]).await;
        let ws = copy_workspace();
        let mut s = session_at(&model.base_url(), ws.path(), 4, Duration::from_secs(10));
        let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
        let FinishReason::Error(message) = reason else {
            panic!("{content_type}: {reason:?}")
        };
        assert!(
            message.contains("the server returned an empty reply")
                && message.contains("context size")
                && message.contains("log"),
            "{message}"
        );
        assert!(retries(&events).is_empty(), "{content_type}");
        assert_eq!(model.requests().await.len(), 1, "{content_type}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_cut_at_the_token_limit_is_never_acted_on_and_the_model_is_asked_to_go_on() {
    // DeepSeek's shape: text chunks, then `finish_reason: "length"`.
    let cut_text = sse_reply(
        &[
            json!({"role":"assistant","content":""}),
            json!({"content":"## Plan\n1. Rea"}),
        ],
        "length",
    );
    let cut_call = sse_reply(
        &[
            json!({"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"cut.py\",\"content\":\"de"}}]}),
        ],
        "length",
    );
    let model = MockModel::start(vec![cut_text, cut_call, text("short answer")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    let answers = final_answers(&events);
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["text"], "short answer");
    let repairs: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "protocol_repair")
        .collect();
    assert_eq!(repairs.len(), 2);
    assert!(
        repairs[0]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("cut off at the output token limit")
    );
    assert!(!events.iter().any(|e| e["event"] == "tool_call_proposed"));
    assert!(!ws.path().join("cut.py").exists());
    // The next request is valid: no unanswered tool call, and the model is told why.
    let requests = model.requests().await;
    let messages = requests[2]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(!messages.iter().any(|m| m["tool_calls"].is_array()));
    let last = messages
        .last()
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    assert!(last.contains("cut off"), "{last}");

    // Cut again and again: it stops after MAX_REPAIRS repair requests.
    let cut = || sse_reply(&[json!({"content":"and so"})], "length");
    let model = MockModel::start(vec![cut(), cut(), cut(), text("never")]).await;
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    let FinishReason::Error(message) = reason else {
        panic!("{reason:?}")
    };
    assert!(message.contains("token limit"), "{message}");
    assert!(final_answers(&events).is_empty());
}
