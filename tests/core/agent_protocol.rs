//! The step loop against malformed model replies: bad tool calls become
//! error results, and the JSON protocol repairs a reply or gives up.

use crate::support::*;
use serde_json::{Value, json};
use stepwise::agent::FinishReason;
use stepwise::config::Protocol;

use crate::agent_loop::{approve, kinds, last_user_text, run, session};

#[tokio::test(flavor = "multi_thread")]
async fn malformed_calls_become_error_results_not_crashes() {
    let model = MockModel::start(vec![
        tool_calls(&[
            ("delete_everything", json!({})),
            ("read_file", json!({"path": 42})),
            ("run_tests", json!({"command": "bash -c 'rm -rf /'"})),
        ]),
        text("sorry"),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session(&model, ws.path(), 20, Protocol::Tools);
    let (reason, events) = run(&mut s, "t", approve).await;
    assert_eq!(reason, FinishReason::Answered);
    // The unknown tool's events are kept, named as the model named it.
    for kind in ["tool_call_proposed", "tool_finished"] {
        let first = events.iter().find(|e| e["event"] == kind).unwrap();
        assert_eq!(first["tool"], "delete_everything", "{first}");
    }
    let requests = model.requests().await;
    let results: Vec<Value> = tool_messages(&requests[1])
        .iter()
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|r| r["success"] == false));
    assert!(
        results[0]["error"]
            .as_str()
            .unwrap()
            .contains("unknown tool")
    );
    assert!(
        results[1]["error"]
            .as_str()
            .unwrap()
            .contains("must be a string")
    );
    assert!(
        results[2]["error"]
            .as_str()
            .unwrap()
            .contains("not allowed")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn json_protocol_repairs_a_malformed_reply() {
    let model = MockModel::start(vec![
        json_completion("Let me look at the files first."),
        json_completion(
            "```json\n{\"type\": \"tool_call\", \"tool\": \"list_files\", \"arguments\": {}}\n```",
        ),
        json_completion("{\"type\": \"final\", \"answer\": \"Two files.\"}"),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session(&model, ws.path(), 20, Protocol::Json);
    let (reason, events) = run(&mut s, "what is here?", approve).await;
    assert_eq!(reason, FinishReason::Answered);
    assert!(kinds(&events).contains(&"protocol_repair".to_string()));
    let requests = model.requests().await;
    assert!(
        requests[0].get("tools").is_none(),
        "the JSON protocol sends no tools"
    );
    assert!(
        requests[0]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("\"type\": \"tool_call\"")
    );
    assert!(last_user_text(&requests[1]).contains("no JSON object"));
    let result = last_user_text(&requests[2]);
    assert!(
        result.starts_with("Tool result for list_files:") && result.contains("calculator.py"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn json_protocol_gives_up_after_two_repairs() {
    let model = MockModel::start(vec![
        json_completion("hello"),
        json_completion("still prose"),
        json_completion("{\"type\": \"maybe\"}"),
        json_completion("{\"type\": \"final\", \"answer\": \"never read\"}"),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session(&model, ws.path(), 20, Protocol::Json);
    let (reason, _) = run(&mut s, "t", approve).await;
    let FinishReason::Error(message) = reason else {
        panic!("expected an error, got {reason:?}")
    };
    assert!(message.contains("2 repair requests"), "{message}");
    assert_eq!(model.requests().await.len(), 3);
}
