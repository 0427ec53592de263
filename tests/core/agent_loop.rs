//! The step loop driven through the library, against the mock model server:
//! approvals, the completion gate, the budget, interrupts (malformed replies
//! are in `agent_protocol`, what a front end sees of a session in `agent_session`).

use crate::support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use stepwise::agent::{
    AgentEvent, ApprovalRequest, Decision, FinishReason, LoopSettings, RetryPolicy, Session,
};
use stepwise::config::Protocol;
use stepwise::llm::HttpModel;
use stepwise::tools::Workspace;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub(crate) fn session(
    model: &MockModel,
    dir: &std::path::Path,
    max_steps: u32,
    protocol: Protocol,
) -> Session {
    let http = HttpModel::new(&model.base_url(), "mock-model", None).unwrap();
    Session::new(
        LoopSettings {
            max_steps,
            test_timeout: Duration::from_secs(60),
            protocol,
            retry: RetryPolicy::default(),
            ..LoopSettings::default()
        },
        Arc::new(http),
        Workspace::open(dir).unwrap(),
    )
}

/// Run a task, answering approvals with `decide`; returns the reason and every event.
pub(crate) async fn run(
    session: &mut Session,
    task: &str,
    decide: impl Fn(&ApprovalRequest) -> Decision + Send + 'static,
) -> (FinishReason, Vec<Value>) {
    drive(session, Some(task), CancellationToken::new(), decide).await
}

pub(crate) fn approve(_: &ApprovalRequest) -> Decision {
    Decision::Approve
}

pub(crate) fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["event"].as_str().unwrap().to_string())
        .collect()
}

pub(crate) fn last_user_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn final_answer_is_refused_until_tests_pass_after_the_last_change() {
    let model = MockModel::start(vec![
        tool_call(
            "write_file",
            json!({"path": "notes.md", "content": "# notes\n"}),
        ),
        text("Done, trust me."),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done: tests pass."),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session(&model, ws.path(), 20, Protocol::Tools);
    let (reason, events) = run(&mut s, "write notes", approve).await;
    assert_eq!(reason, FinishReason::Answered);
    let k = kinds(&events);
    let refused = k
        .iter()
        .position(|e| e == "gate_refused")
        .expect("gate refused once");
    let answered = k.iter().position(|e| e == "final_answer").unwrap();
    assert!(refused < answered);
    assert_eq!(k.iter().filter(|e| *e == "gate_refused").count(), 1);
    let requests = model.requests().await;
    assert!(
        last_user_text(&requests[2]).contains("Final answer refused"),
        "{}",
        last_user_text(&requests[2])
    );
    let final_event = events
        .iter()
        .find(|e| e["event"] == "final_answer")
        .unwrap();
    assert_eq!(final_event["text"], "Done: tests pass.");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_test_run_does_not_open_the_gate() {
    let model = MockModel::start(vec![
        tool_call("write_file", json!({"path": "test_bad.py", "content": "import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.fail('no')\n"})),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("All good."),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session(&model, ws.path(), 20, Protocol::Tools);
    let (reason, events) = run(&mut s, "t", approve).await;
    // The script ran out after the refusal: the mock answers 400 and the task ends in an error.
    assert!(matches!(reason, FinishReason::Error(_)), "{reason:?}");
    assert!(kinds(&events).contains(&"gate_refused".to_string()));
    assert!(!kinds(&events).contains(&"final_answer".to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_that_changed_nothing_may_finish_without_tests() {
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calculator.py"})),
        text("It adds and subtracts."),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session(&model, ws.path(), 20, Protocol::Tools);
    let (reason, events) = run(&mut s, "explain", approve).await;
    assert_eq!(reason, FinishReason::Answered);
    assert!(!kinds(&events).contains(&"gate_refused".to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declined_write_changes_nothing_and_the_model_hears_the_reason() {
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calculator.py"})),
        tool_call(
            "replace_text",
            json!({"path": "calculator.py", "old": "return a + b", "new": "return a * b"}),
        ),
        text("OK, I left it."),
    ])
    .await;
    let ws = copy_workspace();
    let before = std::fs::read(ws.path().join("calculator.py")).unwrap();
    let mut s = session(&model, ws.path(), 20, Protocol::Tools);
    let (reason, events) = run(&mut s, "break add", |_| Decision::Decline {
        reason: Some("add must stay addition".into()),
    })
    .await;
    assert_eq!(
        reason,
        FinishReason::Answered,
        "nothing changed, so no gate"
    );
    assert_eq!(
        std::fs::read(ws.path().join("calculator.py")).unwrap(),
        before
    );
    let approval = events
        .iter()
        .find(|e| e["event"] == "approval_requested")
        .unwrap();
    assert_eq!(approval["action"]["kind"], "edit");
    assert_eq!(approval["action"]["diff"]["removed"], 1);
    let finished = events
        .iter()
        .rev()
        .find(|e| e["event"] == "tool_finished")
        .unwrap();
    assert_eq!(finished["status"], "declined");
    let requests = model.requests().await;
    let result = tool_messages(&requests[2])[1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        result.contains("declined") && result.contains("add must stay addition"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_for_task_covers_later_calls_of_that_tool_only_in_this_task() {
    let model = MockModel::start(vec![
        tool_call("write_file", json!({"path": "a.md", "content": "a\n"})),
        tool_call("write_file", json!({"path": "b.md", "content": "b\n"})),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("done"),
        tool_call("write_file", json!({"path": "c.md", "content": "c\n"})),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("done again"),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session(&model, ws.path(), 20, Protocol::Tools);
    let (reason, events) = run(&mut s, "two files", |r| match r.tool.to_string().as_str() {
        "write_file" => Decision::ApproveToolForTask,
        _ => Decision::Approve,
    })
    .await;
    assert_eq!(reason, FinishReason::Answered);
    let asked: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "approval_requested")
        .collect();
    assert_eq!(asked.len(), 2, "first write and the test run: {asked:?}");
    let auto: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "tool_running" && e["auto_approved"] == true)
        .collect();
    assert_eq!(auto.len(), 1);
    assert!(ws.path().join("b.md").exists());

    // A new task asks again.
    let (_, events) = run(&mut s, "third file", approve).await;
    assert_eq!(
        events
            .iter()
            .filter(|e| e["event"] == "approval_requested")
            .count(),
        2
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_budget_stops_the_task_and_every_call_id_is_answered() {
    let model = MockModel::start(vec![
        tool_call("list_files", json!({})),
        tool_calls(&[
            ("read_file", json!({"path": "calculator.py"})),
            ("read_file", json!({"path": "test_calculator.py"})),
        ]),
        text("next task answer"),
    ])
    .await;
    let ws = copy_workspace();
    let mut s = session(&model, ws.path(), 2, Protocol::Tools);
    let (reason, events) = run(&mut s, "look around", approve).await;
    assert_eq!(reason, FinishReason::BudgetExhausted);
    let done = events
        .iter()
        .filter(|e| e["event"] == "tool_finished")
        .count();
    assert_eq!(done, 2);
    assert!(
        events.iter().any(
            |e| e["event"] == "error" && e["message"].as_str().unwrap().contains("step budget")
        )
    );
    assert_eq!(model.requests().await.len(), 2);

    // The next task's request is valid: every tool call of the history has its answer.
    let (reason, _) = run(&mut s, "go on", approve).await;
    assert_eq!(reason, FinishReason::Answered);
    let requests = model.requests().await;
    let messages = requests[2]["messages"].as_array().unwrap();
    let call_ids: Vec<Value> = messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| c["id"].clone())
        .collect();
    let answered: Vec<Value> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].clone())
        .collect();
    assert_eq!(call_ids, answered);
    let skipped = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    assert!(skipped["content"].as_str().unwrap().contains("budget"));
    // The conversation persisted across tasks.
    assert!(messages.iter().any(|m| m["content"] == "look around"));
}

#[tokio::test(flavor = "multi_thread")]
async fn interrupting_during_an_approval_declines_and_writes_nothing() {
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calculator.py"})),
        tool_call(
            "write_file",
            json!({"path": "calculator.py", "content": "oops\n"}),
        ),
    ])
    .await;
    let ws = copy_workspace();
    let before = std::fs::read(ws.path().join("calculator.py")).unwrap();
    let mut s = session(&model, ws.path(), 20, Protocol::Tools);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let holder = tokio::spawn(async move {
        let mut pending = Vec::new();
        while let Some(event) = rx.recv().await {
            if let AgentEvent::ApprovalRequested(request) = event {
                // The user presses Ctrl+C instead of answering.
                pending.push(request);
                trigger.cancel();
            }
        }
        pending.len()
    });
    let reason = s.run_task("t", &tx, cancel).await;
    drop(tx);
    assert_eq!(reason, FinishReason::Cancelled);
    assert_eq!(holder.await.unwrap(), 1);
    assert_eq!(
        std::fs::read(ws.path().join("calculator.py")).unwrap(),
        before
    );
    let last_tool = s
        .history()
        .iter()
        .rev()
        .find(|m| m.tool_call_id.is_some())
        .unwrap();
    assert!(
        last_tool
            .content
            .as_deref()
            .unwrap()
            .contains("interrupted")
    );
}
