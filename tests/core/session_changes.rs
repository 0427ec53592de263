//! The session's record of its changes: the receipt of an accepted answer,
//! the cumulative diff, and undo (last or all), which is approved like a
//! write, told to the model, and refused when someone else changed the file.

use crate::support::*;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use stepwise::agent::{AgentEvent, ApprovalAction, Decision, EventSender, LoopSettings, Session};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn session(model: &MockModel, dir: &std::path::Path) -> Session {
    session_on(model, dir, LoopSettings::default())
}

/// A channel whose approvals are answered with `decision`; returns the sender and the collected events.
type Answering = (
    EventSender,
    tokio::task::JoinHandle<Vec<Value>>,
    Arc<std::sync::Mutex<Vec<ApprovalAction>>>,
);

fn answering(decision: Decision) -> Answering {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen_asked = asked.clone();
    let handle = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(event) = rx.recv().await {
            seen.push(serde_json::to_value(&event).unwrap());
            if let AgentEvent::ApprovalRequested(r) = event {
                seen_asked.lock().unwrap().push(r.action.clone());
                let _ = r.reply.send(decision.clone());
            }
        }
        seen
    });
    (tx, handle, asked)
}

async fn seeded(ws: &std::path::Path, extra: Vec<Reply>) -> (MockModel, Session, Vec<Value>) {
    let mut script = seed_script("unittest");
    script.extend(extra);
    let model = MockModel::start(script).await;
    let mut s = session(&model, ws);
    let (tx, handle, _) = answering(Decision::Approve);
    s.run_task("add divide", &tx, CancellationToken::new())
        .await;
    drop(tx);
    let events = handle.await.unwrap();
    (model, s, events)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_accepted_answer_carries_a_receipt_computed_by_stepwise() {
    let ws = copy_workspace();
    let (_, s, events) = seeded(ws.path(), vec![]).await;
    let answer = events
        .iter()
        .find(|e| e["event"] == "final_answer")
        .unwrap();
    let receipt = &answer["receipt"];
    assert!(
        receipt["tests"]["command"]
            .as_str()
            .unwrap()
            .ends_with("-m unittest discover -v")
    );
    assert_eq!(receipt["tests"]["exit_code"], 0);
    assert_eq!(receipt["tests"]["summary"], "6 tests OK");
    let files: Vec<(String, u64, u64)> = receipt["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["added"].as_u64().unwrap(),
                f["removed"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        files,
        [
            ("calculator.py".to_string(), 6, 0),
            ("test_calculator.py".to_string(), 9, 1)
        ]
    );
    let hash = receipt["diff_hash"].as_str().unwrap();
    assert_eq!(hash.len(), 12);
    assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));
    // The hash is of the session diff: it matches a recomputation.
    assert_eq!(s.session_diffs().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_session_diff_names_the_changed_files() {
    let ws = copy_workspace();
    let (_, s, _) = seeded(ws.path(), vec![]).await;
    let (tx, handle, _) = answering(Decision::Approve);
    s.show_diff(&tx).await;
    drop(tx);
    let events = handle.await.unwrap();
    let diff = events
        .iter()
        .find(|e| e["event"] == "session_diff")
        .unwrap();
    let paths: Vec<&str> = diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["calculator.py", "test_calculator.py"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn undo_last_reverts_one_change_after_approval_and_tells_the_model() {
    let ws = copy_workspace();
    // Before the last edit, the tests only had the new import.
    let tests_before_last_edit = std::fs::read_to_string(ws.path().join("test_calculator.py"))
        .unwrap()
        .replace(
            "from calculator import add, subtract",
            "from calculator import add, divide, subtract",
        );
    let (model, mut s, _) = seeded(ws.path(), vec![text("ok")]).await;
    let (tx, handle, asked) = answering(Decision::Approve);
    s.undo(false, &tx, CancellationToken::new()).await;
    drop(tx);
    let events = handle.await.unwrap();
    assert!(
        matches!(asked.lock().unwrap()[0], ApprovalAction::Undo { .. }),
        "the undo was asked as a diff"
    );
    let done = events
        .iter()
        .find(|e| e["event"] == "undo_finished")
        .unwrap();
    assert_eq!(done["reverted"], json!(["test_calculator.py"]));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("test_calculator.py")).unwrap(),
        tests_before_last_edit
    );
    assert!(
        std::fs::read_to_string(ws.path().join("calculator.py"))
            .unwrap()
            .contains("def divide")
    );
    // The next request tells the model what was reverted.
    let (tx, handle, _) = answering(Decision::Approve);
    s.run_task("go on", &tx, CancellationToken::new()).await;
    drop(tx);
    handle.await.unwrap();
    let last = model.requests().await.last().unwrap().to_string();
    assert!(
        last.contains("The user reverted your changes to: test_calculator.py"),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn undo_all_restores_bytes_and_permissions_and_deletes_created_files() {
    let ws = copy_workspace();
    let calc = ws.path().join("calculator.py");
    std::fs::set_permissions(&calc, std::fs::Permissions::from_mode(0o754)).unwrap();
    let original_calc = std::fs::read(&calc).unwrap();
    let original_tests = std::fs::read(ws.path().join("test_calculator.py")).unwrap();
    let extra = vec![
        tool_call(
            "write_file",
            json!({"path": "notes/todo.md", "content": "- more\n"}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("done too"),
    ];
    let mut script = seed_script("unittest");
    script.pop();
    script.extend(extra);
    let model = MockModel::start(script).await;
    let mut s = session(&model, ws.path());
    let (tx, handle, _) = answering(Decision::Approve);
    s.run_task("t", &tx, CancellationToken::new()).await;
    drop(tx);
    handle.await.unwrap();
    assert!(ws.path().join("notes/todo.md").exists());

    let (tx, handle, _) = answering(Decision::Approve);
    s.undo(true, &tx, CancellationToken::new()).await;
    drop(tx);
    let events = handle.await.unwrap();
    let done = events
        .iter()
        .find(|e| e["event"] == "undo_finished")
        .unwrap();
    assert_eq!(done["error"], Value::Null, "{done}");
    assert_eq!(std::fs::read(&calc).unwrap(), original_calc);
    assert_eq!(
        std::fs::read(ws.path().join("test_calculator.py")).unwrap(),
        original_tests
    );
    assert_eq!(
        std::fs::metadata(&calc).unwrap().permissions().mode() & 0o777,
        0o754
    );
    assert!(
        !ws.path().join("notes/todo.md").exists(),
        "the created file is deleted again"
    );
    assert!(s.session_diffs().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn undo_is_refused_when_someone_changed_the_file_and_declining_reverts_nothing() {
    let ws = copy_workspace();
    let (_, mut s, _) = seeded(ws.path(), vec![]).await;
    let tests = ws.path().join("test_calculator.py");
    let users = format!(
        "{}# the user's note\n",
        std::fs::read_to_string(&tests).unwrap()
    );
    std::fs::write(&tests, &users).unwrap();
    let (tx, handle, asked) = answering(Decision::Approve);
    s.undo(false, &tx, CancellationToken::new()).await;
    drop(tx);
    let events = handle.await.unwrap();
    let done = events
        .iter()
        .find(|e| e["event"] == "undo_finished")
        .unwrap();
    assert!(
        done["error"].as_str().unwrap().contains("changed on disk"),
        "{done}"
    );
    assert!(asked.lock().unwrap().is_empty(), "nothing to approve");
    assert_eq!(std::fs::read_to_string(&tests).unwrap(), users);

    let calc_now = std::fs::read(ws.path().join("calculator.py")).unwrap();
    let (tx, handle, _) = answering(Decision::Decline { reason: None });
    s.undo(true, &tx, CancellationToken::new()).await;
    drop(tx);
    let events = handle.await.unwrap();
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "undo_finished" && e["error"].is_string())
    );
    assert_eq!(
        std::fs::read(ws.path().join("calculator.py")).unwrap(),
        calc_now
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_to_undo_says_so() {
    let ws = copy_workspace();
    let model = MockModel::start(vec![]).await;
    let mut s = session(&model, ws.path());
    let (tx, handle, _) = answering(Decision::Approve);
    s.undo(false, &tx, CancellationToken::new()).await;
    drop(tx);
    let events = handle.await.unwrap();
    assert!(
        events[0]["error"]
            .as_str()
            .unwrap()
            .contains("nothing to undo")
    );
}
