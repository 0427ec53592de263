//! End to end through a pseudo-terminal: a two-file `apply_patch` reviewed
//! hunk by hunk (`j`, Space, `]` to the next file), and `y` writing exactly
//! the accepted hunks of each file.

use crate::support::pty::{Tui, read};
use serde_json::json;
use stepwise::diff::FileDiff;

fn forty() -> String {
    (1..=40).map(|i| format!("line {i}\n")).collect()
}

fn changed(tag: &str) -> String {
    forty()
        .replace("line 2\n", &format!("line 2 {tag}\n"))
        .replace("line 30\n", &format!("line 30 {tag}\n"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_file_patch_with_one_hunk_rejected_in_each_writes_exactly_the_others() {
    let ws = crate::support::copy_workspace();
    for f in ["a.txt", "b.txt"] {
        std::fs::write(ws.path().join(f), forty()).expect("write");
    }
    let patch = format!(
        "{}{}",
        FileDiff::compute("a.txt", Some(&forty()), &changed("alpha")).to_unified(),
        FileDiff::compute("b.txt", Some(&forty()), &changed("beta")).to_unified()
    );
    let mock = crate::support::MockModel::start(vec![
        crate::support::tool_call("read_file", json!({"path": "a.txt"})),
        crate::support::tool_call("read_file", json!({"path": "b.txt"})),
        crate::support::tool_call("apply_patch", json!({"patch": patch})),
        crate::support::text("Patched."),
    ])
    .await;
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send("Patch both\r");
    tui.wait_for("file 1/2 · hunk 1/2 · 4 of 4 accepted").await;
    // a.txt: reject its second hunk.
    tui.send("j");
    tui.wait_for("file 1/2 · hunk 2/2").await;
    tui.send(" ");
    tui.wait_for("3 of 4 accepted").await;
    // b.txt: reject its first hunk.
    tui.send("]");
    tui.wait_for("file 2/2 · hunk 1/2 · 3 of 4 accepted").await;
    tui.send(" ");
    tui.wait_for("2 of 4 accepted").await;
    tui.send("y");
    tui.wait_for("Stopped by an error").await;
    let text = |f| String::from_utf8(read(ws.path(), f)).expect("utf-8");
    assert_eq!(text("a.txt"), forty().replace("line 2\n", "line 2 alpha\n"));
    assert_eq!(
        text("b.txt"),
        forty().replace("line 30\n", "line 30 beta\n")
    );
    let requests = mock.requests().await;
    let told = crate::support::tool_messages(&requests[3])
        .last()
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(
        told.contains("rejected_hunks")
            && told.contains("line 30 alpha")
            && told.contains("line 2 beta"),
        "the model is told which hunks of which files were rejected: {told}"
    );
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}
