//! End to end through a pseudo-terminal, for reviewing: editing a proposal
//! in a scripted `$EDITOR` (the terminal handed over and taken back),
//! applying only some hunks of an edit, the receipt, `/diff` and `/undo all`.
//! The real binary runs against the mock model on a temp copy of the sample
//! workspace.

use crate::support::pty::{TASK, Tui, read};
use serde_json::json;
use std::path::Path;

/// An "editor" that changes the error message in the file it is given, and
/// notes the name of that file and the terminal's mode next to itself.
fn scripted_editor(dir: &Path) -> std::path::PathBuf {
    let script = dir.join("editor.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         basename \"$1\" > \"$(dirname \"$0\")/seen\"\n\
         stty -a > \"$(dirname \"$0\")/stty\" 2>&1\n\
         sed 's/cannot divide by zero/division by zero is not allowed/' \"$1\" > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"\n",
    )
    .expect("write the editor script");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .expect("make it executable");
    }
    script
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e_opens_the_editor_and_the_users_version_is_written() {
    let mock = crate::support::MockModel::start(crate::support::seed_script("unittest")).await;
    let ws = crate::support::copy_workspace();
    let tools = tempfile::tempdir().expect("temp dir");
    let editor = scripted_editor(tools.path());
    let workspace = ws.path().to_string_lossy().into_owned();
    let base_url = mock.base_url();
    let mut tui = Tui::start_with(
        &["--base-url", &base_url, "--workspace", &workspace],
        &[("VISUAL", &editor), ("EDITOR", &editor)],
    );
    tui.wait_for("Type a task").await;
    tui.send(TASK);
    tui.wait_for("Add a divide function").await;
    tui.send("\r");
    let screen = tui.wait_for("Step 4 · Write calculator.py").await;
    assert!(screen.contains("e edit in $EDITOR"), "{screen}");
    tui.send("e");
    // Wait for the whole redrawn prompt and diff, not just the first row of it.
    tui.wait_for("Write your edited version of calculator.py")
        .await;
    // (The diff pane wraps the long line: match its first part.)
    let screen = tui.wait_for("division by zero is").await;
    assert!(
        screen.contains("raise ValueError(\"division by zero is"),
        "the recomputed diff shows the user's change:\n{screen}"
    );
    assert!(
        screen.contains("Write your edited version of calculator.py"),
        "{screen}"
    );
    // The terminal was handed over (normal screen, mouse released) and taken back.
    let raw = String::from_utf8_lossy(&tui.raw.lock().expect("raw")).into_owned();
    let entered = raw.find("\x1b[?1049h").expect("full screen at start");
    let left = raw[entered..]
        .find("\x1b[?1049l")
        .expect("left for the editor")
        + entered;
    assert!(
        raw[entered..left].contains("\x1b[?1000l"),
        "mouse capture released for the editor"
    );
    assert!(
        raw[left..].contains("\x1b[?1049h"),
        "full screen again after the editor"
    );
    let stty = std::fs::read_to_string(tools.path().join("stty")).unwrap_or_default();
    assert!(
        stty.contains("icanon") && !stty.contains("-icanon"),
        "the editor got a terminal out of raw mode: {stty}"
    );
    let seen = std::fs::read_to_string(tools.path().join("seen")).expect("the editor ran");
    assert_eq!(seen.trim(), "calculator.py", "same name and extension");
    assert_eq!(
        read(ws.path(), "calculator.py"),
        read(&crate::support::sample_workspace(), "calculator.py"),
        "nothing written before y"
    );
    tui.send("y");
    tui.wait_for("Step 5 · Write test_calculator.py").await;
    let written = String::from_utf8(read(ws.path(), "calculator.py")).expect("utf-8");
    assert!(
        written.contains("raise ValueError(\"division by zero is not allowed\")"),
        "{written}"
    );
    assert!(!written.contains("cannot divide by zero"), "{written}");
    let requests = mock.requests().await;
    let results =
        crate::support::tool_messages(requests.last().expect("a request after the write"));
    let told = results
        .last()
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(told.contains("user_modified"), "the model is told: {told}");
    // A prompt is open: the first Ctrl+D asks, the second quits.
    tui.send("\x04");
    tui.wait_for("Ctrl+D again").await;
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejecting_the_middle_hunk_writes_exactly_the_others() {
    let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 2\n", "line two\n")
        .replace("line 20\n", "line 20\nline twenty-and-a-half\n")
        .replace("line 38\n", "");
    let ws = crate::support::copy_workspace();
    std::fs::write(ws.path().join("notes.txt"), &old).expect("write notes.txt");
    let mock = crate::support::MockModel::start(vec![
        crate::support::tool_call("read_file", json!({"path": "notes.txt"})),
        crate::support::tool_call("write_file", json!({"path": "notes.txt", "content": new})),
        crate::support::text("Edited notes.txt."),
    ])
    .await;
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send("Tidy notes.txt\r");
    let screen = tui.wait_for("Step 2 · Write notes.txt").await;
    assert!(screen.contains("hunk 1/3 · 3 of 3 accepted"), "{screen}");
    assert!(
        screen.contains("… F1 for all keys"),
        "keys that do not fit are not cut silently:\n{screen}"
    );
    tui.send("j");
    tui.wait_for("hunk 2/3 · 3 of 3 accepted").await;
    tui.send(" ");
    let screen = tui.wait_for("hunk 2/3 · 2 of 3 accepted").await;
    assert!(screen.contains("✗ hunk 2/3 rejected"), "{screen}");
    tui.send("y");
    // The answer is refused (no tests since the change) and the script ends.
    tui.wait_for("Stopped by an error").await;
    let expected = old
        .replace("line 2\n", "line two\n")
        .replace("line 38\n", "");
    assert_eq!(
        String::from_utf8(read(ws.path(), "notes.txt")).expect("utf-8"),
        expected
    );
    let requests = mock.requests().await;
    let told = crate::support::tool_messages(&requests[2])
        .last()
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(
        told.contains("rejected_hunks") && told.contains("line twenty-and-a-half"),
        "the model is told which hunk was rejected: {told}"
    );
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_receipt_then_slash_diff_then_undo_all_restores_the_files() {
    let mock = crate::support::MockModel::start(crate::support::seed_script("unittest")).await;
    let ws = crate::support::copy_workspace();
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send(TASK);
    tui.wait_for("Add a divide function").await;
    tui.send("\r");
    for prompt in ["Step 4 · ", "Step 5 · ", "Step 6 · ", "Step 7 · Run"] {
        tui.wait_for(prompt).await;
        tui.send("y");
    }
    let screen = tui.wait_for("Done in 8 steps").await;
    assert!(
        screen.contains("Receipt — computed by stepwise"),
        "{screen}"
    );
    assert!(screen.contains("→ exit 0"), "{screen}");
    assert!(screen.contains("files  calculator.py +"), "{screen}");

    tui.send("/diff\r");
    let screen = tui
        .wait_for("files changed by stepwise in this session")
        .await;
    assert!(screen.contains("━ calculator.py  +6 −0"), "{screen}");
    assert!(screen.contains("━ test_calculator.py"), "{screen}");
    assert!(screen.contains("+def divide(a, b):"), "{screen}");
    // A lone Esc closes it (waited for, so the next keys are not read as Alt+key).
    tui.send("\x1b");
    tui.wait_gone("Session diff (/diff)").await;

    tui.send("/undo all\r");
    let screen = tui.wait_for("Undo: restore calculator.py").await;
    assert!(
        screen.contains("-def divide(a, b):"),
        "the undo is a diff:\n{screen}"
    );
    tui.send("y");
    tui.wait_for("Reverted calculator.py").await;
    for file in ["calculator.py", "test_calculator.py"] {
        assert_eq!(
            read(ws.path(), file),
            read(&crate::support::sample_workspace(), file),
            "{file} restored byte for byte"
        );
    }
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_keeps_the_users_edit_and_n_discards_it_only_when_pressed_twice() {
    let mock = crate::support::MockModel::start(crate::support::seed_script("unittest")).await;
    let ws = crate::support::copy_workspace();
    let tools = tempfile::tempdir().expect("temp dir");
    let editor = scripted_editor(tools.path());
    let workspace = ws.path().to_string_lossy().into_owned();
    let base_url = mock.base_url();
    let mut tui = Tui::start_with(
        &["--base-url", &base_url, "--workspace", &workspace],
        &[("VISUAL", &editor), ("EDITOR", &editor)],
    );
    tui.wait_for("Type a task").await;
    tui.send(TASK);
    tui.wait_for("Add a divide function").await;
    tui.send("\r");
    tui.wait_for("Step 4 · Write calculator.py").await;
    tui.send("e");
    tui.wait_for("division by zero is").await;
    tui.send("\r");
    let screen = tui.wait_for("y writes it, n discards it").await;
    assert!(
        screen.contains("Write your edited version of calculator.py"),
        "Enter kept the prompt open:\n{screen}"
    );
    tui.send("n");
    tui.wait_for("Press n again").await;
    tui.send("n");
    let screen = tui.wait_for("Step 5 · Write test_calculator.py").await;
    assert!(
        screen.contains("discarded your edited version of calculator.py"),
        "{screen}"
    );
    assert_eq!(
        read(ws.path(), "calculator.py"),
        read(&crate::support::sample_workspace(), "calculator.py"),
        "declined: nothing written"
    );
    tui.send("\x04");
    tui.wait_for("Ctrl+D again").await;
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}
