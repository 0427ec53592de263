//! End to end through a pseudo-terminal: `@` opens the file picker over the
//! real workspace (listed off the UI thread), typing filters, Enter inserts
//! the path, and a denied file is never offered.

use crate::support::pty::Tui;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_opens_the_picker_and_enter_inserts_the_chosen_path() {
    let mock = crate::support::MockModel::start(vec![crate::support::text("ok")]).await;
    let ws = crate::support::copy_workspace();
    std::fs::write(ws.path().join(".env"), "KEY=1\n").expect("write");
    std::fs::write(ws.path().join("calc_notes.pem"), "secret\n").expect("write");
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send("explain @");
    let screen = tui.wait_for("@ files ·").await;
    assert!(
        !screen.contains(".env"),
        "a denied file is not offered:\n{screen}"
    );
    tui.send("tcalc");
    let screen = tui.wait_for("1 match ·").await;
    assert!(screen.contains("test_calculator.py"), "{screen}");
    tui.send("\r");
    let screen = tui.wait_for("explain test_calculator.py").await;
    assert!(
        !screen.contains("@ files"),
        "closed after inserting:\n{screen}"
    );
    assert!(
        mock.requests().await.is_empty(),
        "Enter inserted, it sent nothing"
    );
    // Clear the input (Ctrl+U), then Ctrl+D quits.
    tui.send("\x15");
    tui.wait_gone("explain test_calculator.py").await;
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}
