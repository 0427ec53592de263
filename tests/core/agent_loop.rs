//! The step loop driven through the library, against the mock model server:
//! approvals, the completion gate, the budget, the JSON protocol, interrupts.

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

fn session(
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
async fn run(
    session: &mut Session,
    task: &str,
    decide: impl Fn(&ApprovalRequest) -> Decision + Send + 'static,
) -> (FinishReason, Vec<Value>) {
    drive(session, Some(task), CancellationToken::new(), decide).await
}

fn approve(_: &ApprovalRequest) -> Decision {
    Decision::Approve
}

fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["event"].as_str().unwrap().to_string())
        .collect()
}

fn last_user_text(request: &Value) -> String {
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
    let (reason, events) = run(&mut s, "two files", |r| match r.tool.as_str() {
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

#[tokio::test(flavor = "multi_thread")]
async fn the_api_key_goes_only_into_the_authorization_header() {
    let model = MockModel::start(vec![text("hi")]).await;
    let ws = copy_workspace();
    let key = stepwise::config::ApiKey::new("sk-header-only").unwrap();
    let http = HttpModel::new(&model.base_url(), "m", Some(key)).unwrap();
    let mut s = Session::new(
        LoopSettings {
            max_steps: 5,
            test_timeout: Duration::from_secs(5),
            protocol: Protocol::Tools,
            retry: RetryPolicy::default(),
            ..LoopSettings::default()
        },
        Arc::new(http),
        Workspace::open(ws.path()).unwrap(),
    );
    let (reason, events) = run(&mut s, "hello", approve).await;
    assert_eq!(reason, FinishReason::Answered);
    let raw = model.raw_requests().await;
    assert_eq!(
        raw[0].headers.get("authorization").unwrap(),
        "Bearer sk-header-only"
    );
    assert!(!String::from_utf8_lossy(&raw[0].body).contains("sk-header-only"));
    assert!(
        !serde_json::to_string(&events)
            .unwrap()
            .contains("sk-header-only")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn project_rules_reach_the_model_and_are_reread_per_task() {
    let model = MockModel::start(vec![text("ok"), text("ok again")]).await;
    let ws = copy_workspace();
    std::fs::write(ws.path().join("AGENTS.md"), "Always use type hints.\n").unwrap();
    let mut s = session(&model, ws.path(), 5, Protocol::Tools);
    let (_, events) = run(&mut s, "first", approve).await;
    assert_eq!(events[0]["rules"], json!(["AGENTS.md"]));
    std::fs::write(ws.path().join("AGENTS.md"), "Never use global state.\n").unwrap();
    run(&mut s, "second", approve).await;
    let requests = model.requests().await;
    let system = |i: usize| {
        requests[i]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        system(0).contains("Always use type hints.")
            && system(0).contains("Project rules (from AGENTS.md)")
    );
    assert!(system(1).contains("Never use global state.") && !system(1).contains("type hints"));
    assert_eq!(
        requests[1]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "system")
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_spawned_agent_reports_its_rule_files_first() {
    let model = MockModel::start(vec![]).await;
    let ws = copy_workspace();
    std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
    std::fs::write(ws.path().join("AGENTS.md"), "Always use type hints.\n").unwrap();
    std::fs::write(ws.path().join(".stepwise/rules.md"), "Be brief.\n").unwrap();
    let s = session(&model, ws.path(), 5, Protocol::Tools);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let agent = stepwise::agent::spawn_agent(s, tx);
    match rx.recv().await {
        Some(AgentEvent::SessionReady { rules, sandbox }) => {
            assert_eq!(rules, ["AGENTS.md", ".stepwise/rules.md"]);
            assert!(
                !sandbox.is_empty(),
                "the session says how tests are confined"
            );
        }
        other => panic!("expected SessionReady first, got {other:?}"),
    }
    drop(agent.commands);
    let _ = agent.task.await;
    assert!(model.requests().await.is_empty(), "no model request for it");
}

#[tokio::test(flavor = "multi_thread")]
async fn continuing_a_conversation_without_a_task_is_refused_by_the_core() {
    let model = MockModel::start(vec![text("first answer"), text("resumed")]).await;
    let ws = copy_workspace();
    let mut s = session(&model, ws.path(), 5, Protocol::Tools);
    let (reason, events) = drive(&mut s, None, CancellationToken::new(), approve).await;
    assert_eq!(kinds(&events), ["resume_refused"], "nothing else happens");
    assert_eq!(
        events[0]["message"],
        "nothing to continue: send a task first"
    );
    assert!(matches!(reason, FinishReason::Error(_)));
    assert!(model.requests().await.is_empty());
    // After a task there is something to continue; after /clear there is not.
    run(&mut s, "the task", approve).await;
    let (_, events) = drive(&mut s, None, CancellationToken::new(), approve).await;
    assert_eq!(events[0]["event"], "task_started");
    s.clear();
    let (_, events) = drive(&mut s, None, CancellationToken::new(), approve).await;
    assert_eq!(kinds(&events), ["resume_refused"]);
    assert_eq!(model.requests().await.len(), 2);
}
