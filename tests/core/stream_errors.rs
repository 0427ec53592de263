//! What servers put inside a reply: errors inside a 200 stream, retry hints,
//! repeated 500s, empty replies, replies cut at the token limit, and wire
//! details servers rely on (tool-call fields, User-Agent), in each provider's
//! documented shape.

use crate::network_faults::{retries, run_with, session_at};
use crate::support::*;
use serde_json::{Value, json};
use std::time::Duration;
use stepwise::agent::FinishReason;
use tokio_util::sync::CancellationToken;
use wiremock::ResponseTemplate;

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
    assert!(
        repairs.iter().all(|r| r["cut_at_limit"] == true),
        "a cut reply is told apart from a misunderstood one: {repairs:?}"
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
