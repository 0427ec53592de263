//! No keystroke loses work, through the real binary: Ctrl+C clears a draft
//! before it quits (Up brings the draft back), and with a prompt open Ctrl+C
//! interrupts and only a second Ctrl+C within two seconds quits.

use crate::support::pty::{TASK, Tui, read};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_clears_a_draft_then_quits_on_an_empty_input() {
    let mock = crate::support::MockModel::start(crate::support::seed_script("unittest")).await;
    let ws = crate::support::copy_workspace();
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send("half a task");
    tui.wait_for("half a task").await;
    tui.send("\x03");
    let screen = tui.wait_for("Draft cleared").await;
    assert!(!screen.contains("half a task"), "{screen}");
    tui.send("\x1b[A");
    tui.wait_for("half a task").await;
    tui.send("\x15"); // Ctrl+U empties the input again.
    tui.wait_gone("half a task").await;
    tui.send("\x03");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_at_a_prompt_interrupts_and_a_second_one_quits() {
    let mock = crate::support::MockModel::start(crate::support::seed_script("unittest")).await;
    let ws = crate::support::copy_workspace();
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send(TASK);
    tui.send("\r");
    tui.wait_for("Step 4 · Write calculator.py").await;
    tui.send("\x03");
    tui.wait_for("Ctrl+C again").await;
    assert!(
        tui.child.try_wait().expect("wait").is_none(),
        "one Ctrl+C does not quit"
    );
    tui.send("\x03");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
    assert_eq!(
        read(ws.path(), "calculator.py"),
        read(&crate::support::sample_workspace(), "calculator.py"),
        "the pending write was declined"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_input_history_outlives_the_session_scrubbed_and_ctrl_r_finds_it() {
    let key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    let mock = crate::support::MockModel::start(vec![crate::support::text("Noted.")]).await;
    let ws = crate::support::copy_workspace();
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send(&format!("remember the divide task {key}"));
    tui.send("\r");
    tui.wait_for("Noted.").await;
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    let file = ws.path().join(".stepwise").join("history.jsonl");
    let saved = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
    assert!(saved.contains("remember the divide task"), "{saved}");
    assert!(!saved.contains(key), "no secret on disk: {saved}");

    // The next session in the same workspace: ↑ and Ctrl+R reach it.
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send("\x1b[A");
    tui.wait_for("remember the divide task").await;
    tui.send("\x15");
    tui.wait_gone("remember the divide task").await;
    tui.send("divide");
    tui.send("\x12");
    let screen = tui.wait_for("History search").await;
    assert!(screen.contains("remember the divide task"), "{screen}");
    tui.send("\x1b");
    tui.send("\x15");
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
}
