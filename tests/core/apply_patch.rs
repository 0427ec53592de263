//! The `apply_patch` tool end to end through the loop: several files, a
//! created and a deleted file (asked separately), exact context at shifted
//! lines, refusals that quote what did not match, and all-or-nothing writes.

use crate::support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use stepwise::agent::{AgentEvent, ApprovalAction, Decision, FinishReason, LoopSettings, Session};
use stepwise::llm::HttpModel;
use stepwise::tools::Workspace;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const PATCH: &str = "--- a/calculator.py
+++ b/calculator.py
@@ -9,3 +9,7 @@
 def subtract(a, b):
     \"\"\"Return a minus b.\"\"\"
     return a - b
+
+
+def double(a):
+    return 2 * a
--- /dev/null
+++ b/notes.md
@@ -0,0 +1,2 @@
+# Notes
+double() added
--- a/old.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-obsolete
-file
";

async fn run_patch(
    ws: &std::path::Path,
    patch: &str,
    decide: impl Fn(&ApprovalAction) -> Decision + Send + 'static,
) -> (FinishReason, Vec<Value>, Vec<String>, MockModel) {
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calculator.py"})),
        tool_call("read_file", json!({"path": "old.txt"})),
        tool_call("apply_patch", json!({"patch": patch})),
        text("done"),
    ])
    .await;
    let http = HttpModel::new(&model.base_url(), "m", None).unwrap();
    let mut s = Session::new(
        LoopSettings::default(),
        Arc::new(http),
        Workspace::open(ws).unwrap(),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let collector = tokio::spawn(async move {
        let (mut seen, mut prompts) = (Vec::new(), Vec::new());
        while let Some(event) = rx.recv().await {
            seen.push(serde_json::to_value(&event).unwrap());
            if let AgentEvent::ApprovalRequested(r) = event {
                prompts.push(r.action.prompt());
                let d = decide(&r.action);
                let _ = r.reply.send(d);
            }
        }
        (seen, prompts)
    });
    let reason = s.run_task("patch it", &tx, CancellationToken::new()).await;
    drop(tx);
    let (events, prompts) = collector.await.unwrap();
    (reason, events, prompts, model)
}

fn workspace_with_old_file() -> tempfile::TempDir {
    let ws = copy_workspace();
    std::fs::write(ws.path().join("old.txt"), "obsolete\nfile\n").unwrap();
    ws
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multi_file_patch_creates_changes_and_deletes_with_a_separate_delete_approval() {
    let ws = workspace_with_old_file();
    let (_, events, prompts, model) = run_patch(ws.path(), PATCH, |_| Decision::Approve).await;
    assert_eq!(prompts.len(), 2, "{prompts:?}");
    assert!(prompts[0].starts_with(
        "Apply patch to calculator.py (+4 \u{2212}0), notes.md (+2 \u{2212}0), old.txt"
    ));
    assert!(prompts[1].starts_with("DELETE old.txt"), "{prompts:?}");
    let calc = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    assert!(
        calc.ends_with("def double(a):\n    return 2 * a\n"),
        "{calc}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.md")).unwrap(),
        "# Notes\ndouble() added\n"
    );
    assert!(!ws.path().join("old.txt").exists());
    let result: Value = serde_json::from_str(
        tool_messages(&model.requests().await[3])[2]["content"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(result["success"], true);
    assert_eq!(result["deleted"], json!(["old.txt"]));
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "tool_finished" && e["summary"] == "3 files +6 \u{2212}2")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn declining_the_delete_applies_nothing() {
    let ws = workspace_with_old_file();
    let before = std::fs::read(ws.path().join("calculator.py")).unwrap();
    let (_, _, _, model) = run_patch(ws.path(), PATCH, |a| match a {
        ApprovalAction::Delete { .. } => Decision::Decline { reason: None },
        _ => Decision::Approve,
    })
    .await;
    assert_eq!(
        std::fs::read(ws.path().join("calculator.py")).unwrap(),
        before
    );
    assert!(!ws.path().join("notes.md").exists());
    assert!(ws.path().join("old.txt").exists());
    let result = tool_messages(&model.requests().await[3])[2]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(result.contains("declined deleting old.txt"), "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hunk_that_does_not_match_is_refused_before_approval_quoting_the_lines() {
    let ws = workspace_with_old_file();
    let bad = "--- a/calculator.py\n+++ b/calculator.py\n@@ -9,2 +9,2 @@\n def subtract(a, b):\n-    return a-b\n+    return b - a\n";
    let before = std::fs::read(ws.path().join("calculator.py")).unwrap();
    let (_, _, prompts, model) = run_patch(ws.path(), bad, |_| Decision::Approve).await;
    assert!(prompts.is_empty(), "nothing was asked");
    assert_eq!(
        std::fs::read(ws.path().join("calculator.py")).unwrap(),
        before
    );
    let result = tool_messages(&model.requests().await[3])[2]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        result.contains("does not match") && result.contains("return a-b"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn context_is_found_at_a_shifted_line() {
    let ws = workspace_with_old_file();
    // Claims line 2, but `return a - b` is at line 11.
    let shifted = "--- a/calculator.py\n+++ b/calculator.py\n@@ -2,1 +2,1 @@\n-    return a - b\n+    return a - b  # shifted\n";
    let (_, _, _, _) = run_patch(ws.path(), shifted, |_| Decision::Approve).await;
    let calc = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    assert!(calc.contains("return a - b  # shifted"), "{calc}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failure_half_way_restores_the_files_already_written() {
    let ws = workspace_with_old_file();
    let before = std::fs::read(ws.path().join("calculator.py")).unwrap();
    let patch = "--- a/calculator.py\n+++ b/calculator.py\n@@ -11 +11 @@\n-    return a - b\n+    return -(b - a)\n--- /dev/null\n+++ b/sub/x.py\n@@ -0,0 +1 @@\n+x = 1\n";
    // While the prompt is open, `sub` appears as a file, so creating `sub/x.py`
    // fails after calculator.py was written.
    let obstacle = ws.path().join("sub");
    let (_, events, _, _) = run_patch(ws.path(), patch, move |_| {
        std::fs::write(&obstacle, "a file, not a folder").unwrap();
        Decision::Approve
    })
    .await;
    let finished: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "tool_finished")
        .collect();
    let last = finished.last().unwrap();
    assert_eq!(last["status"], "failed", "{last}");
    assert!(
        last["result"]["error"]
            .as_str()
            .unwrap()
            .contains("all or nothing")
    );
    assert_eq!(
        std::fs::read(ws.path().join("calculator.py")).unwrap(),
        before
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn patching_a_file_the_model_never_read_is_refused() {
    let ws = copy_workspace();
    let model = MockModel::start(vec![
        tool_call("apply_patch", json!({"patch": "--- a/calculator.py\n+++ b/calculator.py\n@@ -11 +11 @@\n-    return a - b\n+    return 0\n"})),
        text("done"),
    ])
    .await;
    let http = HttpModel::new(&model.base_url(), "m", None).unwrap();
    let mut s = Session::new(
        LoopSettings::default(),
        Arc::new(http),
        Workspace::open(ws.path()).unwrap(),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    tokio::spawn(async move { while rx.recv().await.is_some() {} });
    s.run_task("t", &tx, CancellationToken::new()).await;
    let result = tool_messages(&model.requests().await[1])[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        result.contains("\"success\":false") && result.contains("read"),
        "{result}"
    );
}

/// The `apply_patch` result the model got back.
async fn patch_result(model: &MockModel) -> Value {
    let content = tool_messages(&model.requests().await[3])[2]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    serde_json::from_str(&content).unwrap_or(Value::String(content))
}

fn old_txt(ws: &tempfile::TempDir) -> String {
    std::fs::read_to_string(ws.path().join("old.txt")).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_final_newline_removal_is_made_and_shown_for_approval() {
    let ws = workspace_with_old_file();
    let patch = "--- a/old.txt\n+++ b/old.txt\n@@ -1,2 +1,2 @@\n obsolete\n-file\n+file\n\\ No newline at end of file\n";
    let (_, events, prompts, model) = run_patch(ws.path(), patch, |_| Decision::Approve).await;
    assert_eq!(prompts, ["Apply patch to old.txt (+1 \u{2212}1)"]);
    assert!(
        events
            .iter()
            .any(|e| e.to_string().contains("No newline at end of file")),
        "the approval diff shows the marker"
    );
    assert_eq!(old_txt(&ws), "obsolete\nfile");
    assert_eq!(patch_result(&model).await["success"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hunk_whose_counts_are_too_small_is_applied_whole_with_a_warning() {
    let ws = workspace_with_old_file();
    // The header counts 2 old and 2 new lines; the hunk has 3 and 3.
    let patch = "--- a/calculator.py\n+++ b/calculator.py\n@@ -9,2 +9,2 @@\n def subtract(a, b):\n-    \"\"\"Return a minus b.\"\"\"\n+    \"\"\"Return a - b.\"\"\"\n-    return a - b\n+    return -(b - a)\n";
    let (_, _, _, model) = run_patch(ws.path(), patch, |_| Decision::Approve).await;
    let calc = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    assert!(
        calc.ends_with("    \"\"\"Return a - b.\"\"\"\n    return -(b - a)\n"),
        "{calc}"
    );
    let result = patch_result(&model).await;
    assert_eq!(result["success"], true);
    let warning = result["warnings"][0].as_str().unwrap_or_default();
    assert!(warning.contains("3 old and 3 new lines"), "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bare_headers_hunks_out_of_order_and_split_sections_apply() {
    let ws = workspace_with_old_file();
    let patch = "--- a/calculator.py\n+++ b/calculator.py\n@@\n-    return a - b\n+    return -(b - a)\n--- a/calculator.py\n+++ b/calculator.py\n@@ ... @@\n def add(a, b):\n-    \"\"\"Return the sum of a and b.\"\"\"\n+    \"\"\"Return a plus b.\"\"\"\n";
    let (_, _, prompts, _) = run_patch(ws.path(), patch, |_| Decision::Approve).await;
    assert_eq!(prompts, ["Apply patch to calculator.py (+2 \u{2212}2)"]);
    let calc = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    assert!(calc.contains("Return a plus b.") && calc.ends_with("return -(b - a)\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_line_number_past_the_end_of_a_short_file_still_finds_the_hunk() {
    let ws = workspace_with_old_file();
    let patch = "--- a/old.txt\n+++ b/old.txt\n@@ -40,2 +40,2 @@\n obsolete\n-file\n+FILE\n";
    run_patch(ws.path(), patch, |_| Decision::Approve).await;
    assert_eq!(old_txt(&ws), "obsolete\nFILE\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn context_without_its_trailing_whitespace_matches_and_keeps_the_files_bytes() {
    let ws = workspace_with_old_file();
    std::fs::write(ws.path().join("old.txt"), "keep  \nchange\n").unwrap();
    let patch = "--- a/old.txt\n+++ b/old.txt\n@@ -1,2 +1,2 @@\n keep\n-change\n+changed\n";
    let (_, _, _, model) = run_patch(ws.path(), patch, |_| Decision::Approve).await;
    assert_eq!(old_txt(&ws), "keep  \nchanged\n");
    let result = patch_result(&model).await;
    assert!(
        result["warnings"][0]
            .as_str()
            .unwrap_or_default()
            .contains("trailing whitespace")
    );
    // Indentation is not trailing whitespace: refused.
    std::fs::write(ws.path().join("old.txt"), "\tkeep\nchange\n").unwrap();
    let patch = "--- a/old.txt\n+++ b/old.txt\n@@ -1,2 +1,2 @@\n     keep\n-change\n+changed\n";
    let (_, _, prompts, _) = run_patch(ws.path(), patch, |_| Decision::Approve).await;
    assert!(prompts.is_empty());
    assert_eq!(old_txt(&ws), "\tkeep\nchange\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hunk_matching_two_places_is_refused() {
    let ws = workspace_with_old_file();
    std::fs::write(ws.path().join("old.txt"), "x\nsame\ny\nsame\n").unwrap();
    let patch = "--- a/old.txt\n+++ b/old.txt\n@@\n-same\n+SAME\n";
    let (_, _, prompts, model) = run_patch(ws.path(), patch, |_| Decision::Approve).await;
    assert!(prompts.is_empty());
    assert_eq!(old_txt(&ws), "x\nsame\ny\nsame\n");
    let result = patch_result(&model).await.to_string();
    assert!(result.contains("2 places (lines 2, 4)"), "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_hunks_touching_a_hidden_value_are_refused() {
    let ws = workspace_with_old_file();
    let file = "class User:\n    def __init__(self, password):\n        self.password = password\n\n\n    def name(self):\n        return 'x'\n";
    std::fs::write(ws.path().join("old.txt"), file).unwrap();
    let elsewhere = "--- a/old.txt\n+++ b/old.txt\n@@ -6,2 +6,2 @@\n     def name(self):\n-        return 'x'\n+        return 'y'\n";
    let (_, _, prompts, _) = run_patch(ws.path(), elsewhere, |_| Decision::Approve).await;
    assert_eq!(prompts.len(), 1, "asked, not refused");
    let patched = file.replace("'x'", "'y'");
    assert_eq!(old_txt(&ws), patched);
    let touching = "--- a/old.txt\n+++ b/old.txt\n@@ -3 +3 @@\n-        self.password = [redacted by stepwise]\n+        self.password = None\n";
    let (_, _, prompts, model) = run_patch(ws.path(), touching, |_| Decision::Approve).await;
    assert!(prompts.is_empty());
    assert_eq!(old_txt(&ws), patched);
    let result = patch_result(&model).await.to_string();
    assert!(
        result.contains("hidden from you") && !result.contains("write_file"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_mixing_crlf_and_lf_keeps_the_endings_of_untouched_lines() {
    let ws = workspace_with_old_file();
    std::fs::write(ws.path().join("old.txt"), "one\r\ntwo\nthree\r\nfour\n").unwrap();
    let patch =
        "--- a/old.txt\n+++ b/old.txt\n@@ -1,4 +1,4 @@\n one\n two\n-three\n+THREE\n four\n";
    let (_, _, prompts, _) = run_patch(ws.path(), patch, |_| Decision::Approve).await;
    assert_eq!(prompts, ["Apply patch to old.txt (+1 \u{2212}1)"]);
    assert_eq!(old_txt(&ws), "one\r\ntwo\nTHREE\nfour\n");
}

/// The next event named `want` from a spawned session, answering every
/// approval with a plain approve on the way.
async fn next_answering(rx: &mut mpsc::UnboundedReceiver<AgentEvent>, want: &str) -> Value {
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv())
            .await
            .expect("an event in time")
            .expect("the session is alive");
        if let AgentEvent::ApprovalRequested(r) = event {
            let _ = r.reply.send(Decision::Approve);
            continue;
        }
        let value = serde_json::to_value(&event).unwrap();
        if value["event"] == want {
            return value;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sessions_files_come_from_the_change_log_patches_in_and_undone_files_out() {
    let ws = workspace_with_old_file();
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calculator.py"})),
        tool_call("read_file", json!({"path": "old.txt"})),
        tool_call("apply_patch", json!({"patch": PATCH})),
        text("done"),
    ])
    .await;
    let s = session_on(&model, ws.path(), LoopSettings::default());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let agent = stepwise::agent::spawn_agent(s, tx);
    let cancel = CancellationToken::new;
    agent
        .commands
        .send(stepwise::agent::AgentCommand::RunTask {
            task: "patch it".into(),
            cancel: cancel(),
        })
        .unwrap();
    let files = next_answering(&mut rx, "session_files").await;
    assert_eq!(
        files["files"],
        json!(["calculator.py", "notes.md", "old.txt"]),
        "every file the patch changed: {files}"
    );
    agent
        .commands
        .send(stepwise::agent::AgentCommand::Undo {
            all: true,
            cancel: cancel(),
        })
        .unwrap();
    let files = next_answering(&mut rx, "session_files").await;
    assert_eq!(files["files"], json!([]), "reverted files are not changed");
}
