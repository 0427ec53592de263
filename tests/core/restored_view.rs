//! A restored session's entries read like the live session did: each call
//! with how it ended (declined with the user's reason, the user's own
//! version, failed and why), gate refusals and stepwise's notes apart, and
//! none of stepwise's messages to the model as a user's turn.

use crate::support::*;
use serde_json::{Value, json};
use stepwise::agent::{ApprovalAction, Decision, LoopSettings};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread")]
async fn restored_entries_carry_decisions_failures_and_gate_refusals() {
    let ws = copy_workspace();
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calculator.py"})),
        tool_call("write_file", json!({"path": "a.txt", "content": "model\n"})),
        tool_call("write_file", json!({"path": "b.txt", "content": "model\n"})),
        tool_call("read_file", json!({"path": "../outside.txt"})),
        tool_call(
            "write_file",
            json!({"path": "test_zz.py", "content": "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_fails(self):\n        self.assertEqual(1, 2)\n"}),
        ),
        tool_call("run_tests", json!({})),
        text("done"),
        text("done, really"),
    ])
    .await;
    let settings = LoopSettings {
        max_steps: 9,
        ..LoopSettings::default()
    };
    let mut s = session_on(&model, ws.path(), settings.clone());
    drive(
        &mut s,
        Some("the task"),
        CancellationToken::new(),
        |r| match &r.action {
            ApprovalAction::Edit { path, .. } if path == "a.txt" => Decision::Decline {
                reason: Some("not that file".into()),
            },
            ApprovalAction::Edit { path, .. } if path == "b.txt" => Decision::ApproveEdited {
                content: "mine\n".into(),
            },
            _ => Decision::Approve,
        },
    )
    .await;
    let state = s.saved_state();
    let mut back = session_on(&model, ws.path(), settings);
    back.restore(state, "s1").unwrap();
    let event = serde_json::to_value(back.restored_events().remove(0)).unwrap();
    let entries = event["entries"].as_array().unwrap();
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    let users: Vec<&Value> = entries.iter().filter(|e| e["kind"] == "user").collect();
    assert_eq!(
        users.len(),
        1,
        "only the user's task is theirs: {entries:#?}"
    );
    let tool = |path: &str| {
        entries
            .iter()
            .find(|e| e["kind"] == "tool" && e["target"] == path)
            .unwrap_or_else(|| panic!("no call on {path}: {entries:#?}"))
    };
    assert_eq!(tool("calculator.py")["status"], "ok");
    assert_eq!(tool("calculator.py")["call_kind"], "read");
    assert_eq!(tool("a.txt")["status"], "declined");
    assert_eq!(tool("a.txt")["detail"], "not that file");
    assert_eq!(tool("b.txt")["status"], "ok");
    assert_eq!(tool("b.txt")["edited"], true);
    assert_eq!(tool("../outside.txt")["status"], "failed");
    assert!(
        !tool("../outside.txt")["detail"]
            .as_str()
            .unwrap()
            .is_empty(),
        "a failure says why"
    );
    let run = entries
        .iter()
        .find(|e| e["kind"] == "tool" && e["name"] == "run_tests")
        .unwrap();
    assert_eq!(run["status"], "failed", "{run}");
    assert!(
        run["output"]
            .as_str()
            .unwrap()
            .contains("AssertionError: 1 != 2"),
        "the end of the failing run's output: {run}"
    );
    let gate = entries.iter().find(|e| e["kind"] == "gate");
    assert!(
        gate.is_some_and(|g| g["text"]
            .as_str()
            .unwrap()
            .starts_with("Final answer refused")),
        "{kinds:?}"
    );
    let all = serde_json::to_string(entries).unwrap();
    assert!(!all.contains("[stepwise]"), "{all}");
}
