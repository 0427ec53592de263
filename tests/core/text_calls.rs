//! A tool call written as text under native tool calling, as models behind
//! servers that do not parse calls write them: never the final answer. A
//! plain call of a known tool runs; a broken one is asked again once with a
//! hint, and a second one stops the task pointing at `--protocol json`.

use crate::network_faults::{run_with, session_at};
use crate::support::*;
use serde_json::Value;
use std::time::Duration;
use stepwise::agent::FinishReason;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread")]
async fn a_call_in_tool_call_tags_runs_as_that_call() {
    // Qwen/Hermes style, as llama.cpp streams it without a tool-call parser.
    let written = text(
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"calculator.py\"}}\n</tool_call>",
    );
    let model = MockModel::start(vec![written, text("It defines add and subtract.")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, events) = run_with(
        &mut s,
        Some("what is in calculator.py?"),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(reason, FinishReason::Answered);
    let finals: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "final_answer")
        .collect();
    assert_eq!(finals.len(), 1);
    assert_eq!(finals[0]["text"], "It defines add and subtract.");
    let requests = model.requests().await;
    let messages = requests[1]["messages"].as_array().unwrap();
    let call = messages.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(call["tool_calls"][0]["function"]["name"], "read_file");
    assert!(
        call["content"].is_null(),
        "the text became the call: {call}"
    );
    let results = tool_messages(&requests[1]);
    assert_eq!(results[0]["tool_call_id"], call["tool_calls"][0]["id"]);
    assert!(results[0]["content"].as_str().unwrap().contains("def add"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_call_as_text_is_asked_again_and_a_second_one_stops_with_a_hint() {
    let unknown = || text(r#"{"name": "open_file", "arguments": {"path": "calculator.py"}}"#);
    let model = MockModel::start(vec![unknown(), unknown(), text("never")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("read it"), CancellationToken::new()).await;
    let FinishReason::Error(message) = reason else {
        panic!("{reason:?}")
    };
    assert!(
        message.contains("wrote its tool calls as text 2 times")
            && message.contains("--protocol json"),
        "{message}"
    );
    assert!(!events.iter().any(|e| e["event"] == "final_answer"));
    let requests = model.requests().await;
    assert_eq!(requests.len(), 2);
    let last = requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let hint = last["content"].as_str().unwrap();
    assert!(
        hint.contains("no such tool") && hint.contains("tools interface"),
        "{hint}"
    );

    // Asked again once, a model that then answers properly is fine.
    let model = MockModel::start(vec![unknown(), text("Nothing to change.")]).await;
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, _) = run_with(&mut s, Some("read it"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
}
