//! Resuming in the full-screen UI: `stepwise resume` lists the workspace's
//! sessions newest first and reads a number; the chosen conversation is on
//! screen, its model gets the earlier messages, `/undo` reverts an edit of the
//! earlier session, and the exit summary prints the command that resumes it.

use crate::support::pty::{Tui, read};
use crate::support::{MockModel, copy_workspace, hermetic_env, stepwise_bin, text, tool_call};
use serde_json::json;
use std::path::Path;

const KEY: &str = "sk-resume-pty-key-4c1d9";

/// An earlier session, headless, signed with the key under `home`.
async fn earlier_session(ws: &Path, home: &Path, replies: Vec<crate::support::Reply>, task: &str) {
    let model = MockModel::start(replies).await;
    let mut cmd = std::process::Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .env("OPENAI_API_KEY", KEY)
        .env("XDG_CONFIG_HOME", home)
        .args([
            "exec",
            "--yes",
            "--base-url",
            &model.base_url(),
            "--workspace",
        ])
        .arg(ws)
        .arg(task);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run exec"))
        .await
        .expect("join");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Start times are to the second: keep the sessions apart.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
}

fn start(args: &[&str], base_url: &str, ws: &Path, home: &Path) -> Tui {
    let mut all: Vec<&str> = args.to_vec();
    let ws = ws.to_string_lossy().into_owned();
    all.extend(["--base-url", base_url, "--workspace", &ws]);
    Tui::start_with(
        &all,
        &[
            ("XDG_CONFIG_HOME", home),
            ("OPENAI_API_KEY", Path::new(KEY)),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_picker_lists_sessions_newest_first_and_the_chosen_one_continues() {
    let (ws, home) = (copy_workspace(), tempfile::tempdir().expect("temp"));
    let answer = |t: &str| vec![text(t)];
    earlier_session(
        ws.path(),
        home.path(),
        answer("First answer."),
        "the older task",
    )
    .await;
    earlier_session(
        ws.path(),
        home.path(),
        answer("Second answer."),
        "the newer task",
    )
    .await;
    let mock = MockModel::start(vec![text("Continued.")]).await;
    let mut tui = start(&["resume"], &mock.base_url(), ws.path(), home.path());
    let screen = tui.wait_for("Resume which? [1-2").await;
    let (newer, older) = (
        screen.find("the newer task").expect("newer listed"),
        screen.find("the older task").expect("older listed"),
    );
    assert!(newer < older, "newest first:\n{screen}");
    assert!(screen.contains("1 steps, answered"), "{screen}");
    tui.send("2\r");
    let screen = tui.wait_for("Resumed session").await;
    assert!(screen.contains("the older task"), "{screen}");
    assert!(screen.contains("First answer."), "{screen}");
    assert!(!screen.contains("the newer task"), "{screen}");
    tui.send("and then?\r");
    tui.wait_for("Continued.").await;
    let sent = &mock.requests().await[0]["messages"];
    let contents: Vec<&str> = (sent.as_array().expect("messages").iter())
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        contents[1..],
        ["the older task", "First answer.", "and then?"]
    );
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    let screen = tui.screen();
    assert!(
        screen.contains("Resume this session: stepwise -C"),
        "{screen}"
    );
    assert!(screen.contains(" resume 20"), "{screen}");
    tui.assert_restored();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_after_continue_reverts_an_edit_of_the_earlier_session() {
    let (ws, home) = (copy_workspace(), tempfile::tempdir().expect("temp"));
    let edit = tool_call(
        "replace_text",
        json!({"path": "calculator.py", "old": "    return a + b\n", "new": "    return b + a\n"}),
    );
    // The earlier task edits and then stops (the server has nothing more to say).
    let read_first = tool_call("read_file", json!({"path": "calculator.py"}));
    earlier_session(
        ws.path(),
        home.path(),
        vec![read_first, edit],
        "swap the operands",
    )
    .await;
    let edited = String::from_utf8(read(ws.path(), "calculator.py")).expect("utf-8");
    assert!(edited.contains("return b + a"), "{edited}");
    let mock = MockModel::start(vec![]).await;
    let mut tui = start(&["--continue"], &mock.base_url(), ws.path(), home.path());
    tui.wait_for("Resumed session").await;
    tui.send("/undo\r");
    let screen = tui.wait_for("Undo: restore calculator.py").await;
    assert!(screen.contains("+    return a + b"), "{screen}");
    tui.send("y");
    tui.wait_for("Reverted calculator.py").await;
    assert_eq!(
        read(ws.path(), "calculator.py"),
        read(&crate::support::sample_workspace(), "calculator.py"),
        "restored byte for byte"
    );
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_offers_nothing_to_resume_on_exit() {
    let (ws, home) = (copy_workspace(), tempfile::tempdir().expect("temp"));
    let mock = MockModel::start(vec![]).await;
    let mut tui = start(&[], &mock.base_url(), ws.path(), home.path());
    tui.wait_for("Type a task").await;
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    let screen = tui.screen();
    assert!(screen.contains("Transcript:"), "{screen}");
    assert!(!screen.contains("Resume this session"), "{screen}");
}
