//! Live previews in the core: streamed edit arguments arrive as events with
//! the file they edit as the base, and a preview never reads outside the workspace.

use crate::review::{run, session};
use crate::support::*;
use serde_json::json;
use stepwise::agent::{Decision, LoopSettings};

#[tokio::test(flavor = "multi_thread")]
async fn streaming_edit_arguments_arrive_as_events_with_the_file_base() {
    let ws = copy_workspace();
    let content = "def add(a, b):\n    return a + b\n";
    let args = json!({"path": "calculator.py", "content": content});
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calculator.py"})),
        tool_call("write_file", args.clone()),
        text("done"),
    ])
    .await;
    let mut s = session(&model, ws.path(), LoopSettings::default());
    let (_, events) = run(&mut s, |_| Decision::Decline { reason: None }).await;
    let fragments: String = events
        .iter()
        .filter(|e| e["event"] == "tool_call_streaming" && e["tool"] == "write_file")
        .map(|e| e["fragment"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(fragments, args.to_string());
    let base = events
        .iter()
        .find(|e| e["event"] == "live_edit_base")
        .expect("a base");
    assert_eq!(base["path"], "calculator.py");
    assert_eq!(
        base["old"].as_str().unwrap(),
        std::fs::read_to_string(ws.path().join("calculator.py")).unwrap()
    );
    // The live preview comes before the final proposal.
    let base_at = events
        .iter()
        .position(|e| e["event"] == "live_edit_base")
        .unwrap();
    let proposed_at = events
        .iter()
        .position(|e| e["event"] == "tool_call_proposed" && e["tool"] == "write_file")
        .unwrap();
    assert!(base_at < proposed_at);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_live_preview_never_reads_outside_the_workspace() {
    let ws = copy_workspace();
    let model = MockModel::start(vec![
        tool_call(
            "write_file",
            json!({"path": "../outside.py", "content": "x"}),
        ),
        text("done"),
    ])
    .await;
    let mut s = session(&model, ws.path(), LoopSettings::default());
    let (_, events) = run(&mut s, |_| Decision::Approve).await;
    assert!(!events.iter().any(|e| e["event"] == "live_edit_base"));
}
