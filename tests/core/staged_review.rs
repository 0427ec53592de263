//! A staged task's changeset review in the core: the review comes once the
//! answer met the gate, its hunk choices cut it like a patch, and only the
//! chosen hunks reach the workspace; a declined review writes nothing and
//! keeps the stage.

use crate::support::*;
use serde_json::json;
use stepwise::agent::{ApprovalAction, Decision, FileHunks};
use stepwise::tools::stage::{Stage, Store};

const BEFORE: &str = "a = 1\n#\n#\n#\n#\n#\n#\n#\nb = 2\n#\n#\n#\n#\n#\n#\n#\nc = 3\n";
const AFTER: &str = "a = 10\n#\n#\n#\n#\n#\n#\n#\nb = 20\n#\n#\n#\n#\n#\n#\n#\nc = 30\n";

fn layered() -> bool {
    let state = stepwise::tools::sandbox::state(&Default::default());
    if !state.layer {
        eprintln!("skipped: this kernel lacks {}", state.missing().join(", "));
    }
    state.layer
}

/// A project with `values.py` and a test that passes either way; a staged
/// session on it; the model rewrites the three values and tests.
async fn staged_task(
    decide: impl Fn(&stepwise::agent::ApprovalRequest) -> Decision + Send + 'static,
) -> (tempfile::TempDir, tempfile::TempDir, Vec<serde_json::Value>) {
    let ws = tempfile::tempdir().unwrap();
    let stages = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("values.py"), BEFORE).unwrap();
    std::fs::write(
        ws.path().join("test_values.py"),
        "import unittest\nimport values\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertTrue(values.a)\n",
    )
    .unwrap();
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "values.py"})),
        tool_call("write_file", json!({"path": "values.py", "content": AFTER})),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Values raised; tests pass."),
    ])
    .await;
    let mut s = session_on(&model, ws.path(), Default::default());
    s.enter_stage_in(Store(stages.path().to_path_buf()), "raise values")
        .unwrap();
    let cancel = tokio_util::sync::CancellationToken::new();
    let (reason, events) = drive(&mut s, Some("raise values"), cancel, decide).await;
    assert_eq!(
        reason,
        stepwise::agent::FinishReason::Answered,
        "{events:?}"
    );
    (ws, stages, events)
}

#[tokio::test(flavor = "multi_thread")]
async fn accepting_two_of_three_hunks_writes_exactly_those() {
    if !layered() {
        return;
    }
    let decide = |r: &stepwise::agent::ApprovalRequest| match &r.action {
        ApprovalAction::ApplyStage { files, .. } => {
            assert_eq!(files.len(), 1);
            assert_eq!(files[0].hunks.len(), 3);
            Decision::ApprovePatchHunks {
                files: vec![FileHunks {
                    path: "values.py".into(),
                    accepted: vec![0, 2],
                }],
            }
        }
        other => panic!("a staged task asked for {other:?}"),
    };
    let (ws, stages, events) = staged_task(decide).await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("values.py")).unwrap(),
        BEFORE.replace("a = 1", "a = 10").replace("c = 3", "c = 30")
    );
    let reviewed = events
        .iter()
        .find(|e| e["event"] == "stage_reviewed")
        .expect("a stage_reviewed event");
    assert_eq!(reviewed["written"], json!(["values.py"]));
    let root = ws.path().canonicalize().unwrap();
    assert!(
        Stage::list(&Store(stages.path().to_path_buf()), &root)
            .unwrap()
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declined_review_writes_nothing_and_keeps_the_stage() {
    if !layered() {
        return;
    }
    let decide = |r: &stepwise::agent::ApprovalRequest| match &r.action {
        ApprovalAction::ApplyStage { .. } => Decision::Decline { reason: None },
        other => panic!("a staged task asked for {other:?}"),
    };
    let (ws, stages, events) = staged_task(decide).await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("values.py")).unwrap(),
        BEFORE
    );
    let reviewed = events
        .iter()
        .find(|e| e["event"] == "stage_reviewed")
        .expect("a stage_reviewed event");
    assert_eq!(reviewed["kept"], json!(true), "{reviewed}");
    let root = ws.path().canonicalize().unwrap();
    let left = Stage::list(&Store(stages.path().to_path_buf()), &root).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].state, "passed");
}

#[tokio::test(flavor = "multi_thread")]
async fn stage_off_keeps_the_stage_and_stage_on_goes_on_in_it() {
    if !layered() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let stages = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "a\n").unwrap();
    let model = MockModel::start(vec![]).await;
    let mut s = session_on(&model, ws.path(), Default::default());
    s.enter_stage_in(Store(stages.path().to_path_buf()), "t")
        .unwrap();
    let first = s.stage_name().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    s.set_staged(false, &tx);
    assert!(!s.is_staged());
    assert_eq!(s.stage_name(), None);
    s.set_staged(true, &tx);
    assert_eq!(s.stage_name().as_deref(), Some(first.as_str()));
    drop(tx);
    let mut said = Vec::new();
    while let Some(event) = rx.recv().await {
        said.push(serde_json::to_value(&event).unwrap());
    }
    assert_eq!(said[0]["event"], "stage_changed");
    assert_eq!(said[0]["stage"], serde_json::Value::Null);
    assert!(said[0]["message"].as_str().unwrap().contains(&first));
    assert_eq!(said[1]["stage"], json!(first));
}
