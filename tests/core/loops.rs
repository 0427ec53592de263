//! Loop detection against the mock server: a model that runs the same
//! tests with the same result again and again (as gemma-3-270m under
//! llama.cpp did until the step budget ended) is told at the third time and
//! stopped at `max_repeats`; 0 turns it off.

use crate::support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use stepwise::agent::{Decision, FinishReason, LoopSettings, Session};
use stepwise::llm::HttpModel;
use stepwise::tools::Workspace;
use tokio_util::sync::CancellationToken;

async fn run(
    model: &MockModel,
    dir: &std::path::Path,
    max_repeats: u32,
) -> (FinishReason, Vec<Value>) {
    let http = HttpModel::new(&model.base_url(), "small-model", None).unwrap();
    let mut s = Session::new(
        LoopSettings {
            max_steps: 12,
            test_timeout: Duration::from_secs(30),
            max_repeats,
            ..LoopSettings::default()
        },
        Arc::new(http),
        Workspace::open(dir).unwrap(),
    );
    drive(
        &mut s,
        Some("run the tests"),
        CancellationToken::new(),
        |_| Decision::Approve,
    )
    .await
}

fn same_calls(n: usize) -> Vec<Reply> {
    (0..n)
        .map(|_| tool_call("run_tests", json!({"command": "unittest"})))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_call_with_the_same_result_is_noted_at_three_and_stopped_at_five() {
    let model = MockModel::start(same_calls(12)).await;
    let ws = copy_workspace();
    let (reason, events) = run(&model, ws.path(), 5).await;
    let FinishReason::Error(message) = reason else {
        panic!("{reason:?}")
    };
    assert!(
        message.starts_with("the model repeats itself")
            && message.contains("run_tests")
            && message.contains("5 times in a row"),
        "{message}"
    );
    let runs = events
        .iter()
        .filter(|e| e["event"] == "tool_call_proposed")
        .count();
    assert_eq!(runs, 5, "stopped at the fifth, not at the step budget");
    let requests = model.requests().await;
    assert_eq!(requests.len(), 5);
    let results = tool_messages(&requests[4]);
    let noted: Vec<bool> = results
        .iter()
        .map(|r| {
            r["content"]
                .as_str()
                .unwrap()
                .contains("returned the same result three times")
        })
        .collect();
    assert_eq!(
        noted,
        [false, false, true, false],
        "the note comes once, with the third result"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn max_repeats_zero_turns_loop_detection_off() {
    let model = MockModel::start(same_calls(12)).await;
    let ws = copy_workspace();
    let (reason, _) = run(&model, ws.path(), 0).await;
    assert_eq!(reason, FinishReason::BudgetExhausted);
    let requests = model.requests().await;
    assert!(
        !requests
            .last()
            .unwrap()
            .to_string()
            .contains("returned the same result"),
        "no note when off"
    );
}
