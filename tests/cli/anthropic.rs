//! `--provider anthropic` end to end: the real binary against a mock of
//! Anthropic's Messages API (its wire format, see `support/anthropic.rs`):
//! the request's headers and body, text and streamed tool calls, the
//! `max_tokens` stop, errors in a 200 stream and as statuses (529 with
//! `retry-after`, 401, "prompt is too long"), and usage with cache tokens.

use crate::support::anthropic::{self as api, MockApi, header};
use crate::support::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

pub const ANT_KEY: &str = "sk-ant-test-7f3a9c1d2e-secret";
pub const OPENAI_KEY: &str = "sk-openai-other-4b8e2d-secret";

/// `stepwise exec --json --provider anthropic` against `base`, both keys in
/// the environment, a private config folder.
pub async fn exec(base: &str, ws: &Path, extra: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("ANTHROPIC_API_KEY", ANT_KEY)
        .env("OPENAI_API_KEY", OPENAI_KEY)
        .args(["exec", "--json", "--yes", "--provider", "anthropic"])
        .args(["--model", "claude-mock", "--base-url", base, "--workspace"])
        .arg(ws)
        .args(extra);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    drop(home);
    out
}

fn all_output(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test]
async fn a_text_reply_arrives_with_anthropics_headers_and_body_and_cache_usage() {
    let mock = MockApi::messages(vec![api::text("Nothing to change: all good.")]).await;
    let ws = copy_workspace();
    let out = exec(&mock.uri(), ws.path(), &["check the project"]).await;
    let shown = all_output(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let requests = mock.requests().await;
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(header(r, "x-api-key").as_deref(), Some(ANT_KEY));
    assert_eq!(
        header(r, "anthropic-version").as_deref(),
        Some("2023-06-01")
    );
    assert!(
        header(r, "content-type")
            .unwrap()
            .starts_with("application/json")
    );
    assert!(header(r, "user-agent").unwrap().starts_with("stepwise/"));
    assert_eq!(header(r, "authorization"), None, "no bearer header");
    let raw = format!("{:?}{}", r.headers, String::from_utf8_lossy(&r.body));
    assert!(!raw.contains(OPENAI_KEY), "another provider's key was sent");
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(body["model"], "claude-mock");
    assert_eq!(body["stream"], true);
    assert!(body["max_tokens"].as_u64().unwrap() > 0);
    assert!(
        body["system"][0]["text"].as_str().unwrap().len() > 100,
        "system is separate"
    );
    let roles: Vec<_> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].clone())
        .collect();
    assert_eq!(roles, [json!("user")]);
    assert!(
        body["tools"][0]["input_schema"].is_object(),
        "{}",
        body["tools"]
    );
    let events = json_events(&out);
    let finished = events
        .iter()
        .find(|e| e["event"] == "task_finished")
        .unwrap();
    assert_eq!(finished["usage"]["cached_tokens"], api::CACHE_READ);
    assert_eq!(finished["usage"]["cache_write_tokens"], api::CACHE_CREATED);
    assert_eq!(
        finished["usage"]["prompt_tokens"],
        50 + api::CACHE_READ + api::CACHE_CREATED
    );
    assert_eq!(finished["usage"]["completion_tokens"], 25);
    assert!(!shown.contains(ANT_KEY) && !shown.contains(OPENAI_KEY));
}

#[tokio::test]
async fn a_tool_call_streamed_in_pieces_runs_and_its_result_goes_back_with_its_id() {
    let input = json!({"path": "calculator.py"});
    let mock = MockApi::messages(vec![
        api::tool_use("toolu_01abc", "read_file", input),
        api::text("calculator.py defines add and subtract."),
    ])
    .await;
    let ws = copy_workspace();
    let out = exec(&mock.uri(), ws.path(), &["what is in calculator.py?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    let events = json_events(&out);
    let finished = events
        .iter()
        .find(|e| e["event"] == "tool_finished")
        .unwrap();
    assert_eq!(finished["tool"], "read_file");
    assert_eq!(finished["status"], "ok");
    let bodies = mock.bodies().await;
    assert_eq!(bodies.len(), 2);
    let turns = bodies[1]["messages"].as_array().unwrap();
    let assistant = &turns[1];
    assert_eq!(assistant["role"], "assistant");
    let call = assistant["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_use")
        .unwrap();
    assert_eq!(call["id"], "toolu_01abc");
    assert_eq!(call["input"], json!({"path": "calculator.py"}));
    let result = &turns[2]["content"][0];
    assert_eq!(turns[2]["role"], "user");
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_01abc");
    assert!(result["content"].as_str().unwrap().contains("def add"));
}

#[tokio::test]
async fn a_reply_cut_at_max_tokens_is_not_carried_out_and_the_model_is_told() {
    let mock = MockApi::messages(vec![
        api::cut_at_max_tokens("{\"type\": \"tool_call\", \"too"),
        api::text("Done: nothing needed changing."),
    ])
    .await;
    let ws = copy_workspace();
    let out = exec(&mock.uri(), ws.path(), &["look"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    let bodies = mock.bodies().await;
    assert_eq!(bodies.len(), 2);
    assert!(
        bodies[1]
            .to_string()
            .contains("cut off at the output token limit"),
        "{}",
        bodies[1]
    );
}

#[tokio::test]
async fn an_overloaded_error_inside_a_200_stream_is_retried_and_then_succeeds() {
    let mock = MockApi::messages(vec![
        api::error_event("overloaded_error", "Overloaded"),
        api::text("All good."),
    ])
    .await;
    let ws = copy_workspace();
    let out = exec(&mock.uri(), ws.path(), &["check"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    let events = json_events(&out);
    let retry = events.iter().find(|e| e["event"] == "retrying").unwrap();
    assert!(
        retry["error"].as_str().unwrap().contains("Overloaded"),
        "{retry}"
    );
    assert_eq!(mock.requests().await.len(), 2);
}

#[tokio::test]
async fn a_529_waits_as_long_as_retry_after_says() {
    let mock = MockApi::messages(vec![
        api::error_retry_after(529, "overloaded_error", "Overloaded", 2),
        api::text("All good."),
    ])
    .await;
    let ws = copy_workspace();
    let out = exec(&mock.uri(), ws.path(), &["check"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    let events = json_events(&out);
    let retry = events.iter().find(|e| e["event"] == "retrying").unwrap();
    assert_eq!(retry["delay_ms"], 2000, "{retry}");
}

#[tokio::test]
async fn a_bad_key_is_not_retried_and_names_anthropics_variable() {
    let mock = MockApi::messages(vec![api::error(
        401,
        "authentication_error",
        "invalid x-api-key",
    )])
    .await;
    let ws = copy_workspace();
    let out = exec(&mock.uri(), ws.path(), &["check"]).await;
    let shown = all_output(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("invalid x-api-key") && shown.contains("ANTHROPIC_API_KEY"),
        "{shown}"
    );
    assert_eq!(mock.requests().await.len(), 1, "a 401 is not retried");
    assert!(!shown.contains(ANT_KEY));
}

#[tokio::test]
async fn prompt_is_too_long_is_a_context_overflow_not_a_retry() {
    let too_long = || {
        api::error(
            400,
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
        )
    };
    let mock = MockApi::messages(vec![too_long(), too_long(), too_long()]).await;
    let ws = copy_workspace();
    let out = exec(&mock.uri(), ws.path(), &["check"]).await;
    let shown = all_output(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("context window") && shown.contains("prompt is too long"),
        "{shown}"
    );
    let events = json_events(&out);
    assert!(!events.iter().any(|e| e["event"] == "retrying"), "{shown}");
}

#[tokio::test]
async fn the_json_protocol_works_over_the_messages_api() {
    let answer = json!({"type": "final", "answer": "Nothing to change."}).to_string();
    let mock = MockApi::messages(vec![api::text(&answer)]).await;
    let ws = copy_workspace();
    let out = exec(&mock.uri(), ws.path(), &["--protocol", "json", "check"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    let body = &mock.bodies().await[0];
    assert!(
        body.get("tools").is_none(),
        "no native tools under --protocol json"
    );
    let events = json_events(&out);
    let answer = events
        .iter()
        .find(|e| e["event"] == "final_answer")
        .unwrap();
    assert_eq!(answer["text"], "Nothing to change.");
}

#[tokio::test]
async fn a_redirect_is_never_followed_so_the_key_stays_with_the_chosen_server() {
    // A gateway that answers 302 to another host: reqwest would resend
    // `x-api-key` there (it drops only `Authorization`).
    let elsewhere = MockApi::messages(vec![api::text("should never be asked")]).await;
    let to = format!("{}/v1/messages", elsewhere.uri());
    let gateway = MockApi::messages(vec![Reply::Custom(
        wiremock::ResponseTemplate::new(302).insert_header("location", to.as_str()),
    )])
    .await;
    let ws = copy_workspace();
    let out = exec(&gateway.uri(), ws.path(), &["--max-retries", "0", "hi"]).await;
    let shown = all_output(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(shown.contains("redirected"), "{shown}");
    assert!(
        elsewhere.requests().await.is_empty(),
        "the redirect target saw a request"
    );
    assert!(!shown.contains(ANT_KEY));
}

#[tokio::test]
async fn a_reply_stopped_at_the_context_window_is_a_truncation_not_an_answer() {
    let mock = MockApi::messages(vec![
        api::text_stopped("Here is the plan: first I", "model_context_window_exceeded"),
        api::text("Done: nothing needed changing."),
    ])
    .await;
    let ws = copy_workspace();
    let out = exec(&mock.uri(), ws.path(), &["look"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    let answers: Vec<Value> = json_events(&out)
        .into_iter()
        .filter(|e| e["event"] == "final_answer")
        .collect();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["text"], "Done: nothing needed changing.");
    let bodies = mock.bodies().await;
    assert!(
        bodies[1]
            .to_string()
            .contains("cut off at the output token limit"),
        "{}",
        bodies[1]
    );
}

#[tokio::test]
async fn a_refusal_is_shown_and_recorded_as_a_refusal_not_as_the_answer() {
    let refusal = "I can't help with that request.";
    let mock = MockApi::messages(vec![api::text_stopped(refusal, "refusal")]).await;
    let ws = copy_workspace();
    let out = exec(&mock.uri(), ws.path(), &["do something"]).await;
    let shown = all_output(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    let events = json_events(&out);
    assert!(
        !events.iter().any(|e| e["event"] == "final_answer"),
        "{shown}"
    );
    let finished = events
        .iter()
        .find(|e| e["event"] == "task_finished")
        .unwrap();
    assert_eq!(finished["reason"]["reason"], "refused", "{finished}");
    assert_eq!(finished["reason"]["detail"], refusal, "{finished}");
}
