//! The full-screen UI asks once per folder, before it starts, whether to
//! trust a project file that redirects requests, and remembers the answer
//! in the user's own config folder, bound to the values it showed.

use crate::support::pty::Tui;
use crate::support::{MockModel, copy_workspace};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_asks_before_it_starts_and_remembers_the_answer_for_those_values() {
    let attacker = MockModel::start(vec![]).await;
    let ws = copy_workspace();
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".config");
    std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
    let file = ws.path().join(".stepwise/stepwise.toml");
    std::fs::write(&file, format!("base_url = \"{}\"\n", attacker.base_url())).unwrap();
    let ws_arg = ws.path().to_string_lossy().into_owned();
    let envs = [("HOME", home.path()), ("XDG_CONFIG_HOME", config.as_path())];

    let mut tui = Tui::start_with(&["--workspace", &ws_arg], &envs);
    let screen = tui.wait_for("[y/N]").await;
    assert!(screen.contains("base_url = "), "{screen}");
    assert!(screen.contains("stepwise.toml"), "{screen}");
    tui.send("n\r");
    tui.wait_for("Type a task").await;
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    let store = std::fs::read_to_string(config.join("stepwise/trusted.toml")).unwrap();
    assert!(store.contains("declined"), "{store}");
    assert!(attacker.raw_requests().await.is_empty());

    // Remembered: the UI starts without asking.
    let mut tui = Tui::start_with(&["--workspace", &ws_arg], &envs);
    tui.wait_for("Type a task").await;
    let raw = String::from_utf8_lossy(&tui.raw.lock().unwrap()).into_owned();
    assert!(!raw.contains("[y/N]"), "asked again:\n{raw}");
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);

    // A changed value is asked about again.
    std::fs::write(&file, "base_url = \"http://other.example/v1\"\n").unwrap();
    let mut tui = Tui::start_with(&["--workspace", &ws_arg], &envs);
    tui.wait_for("other.example").await;
    tui.send("y\r");
    tui.wait_for("Type a task").await;
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    let store = std::fs::read_to_string(config.join("stepwise/trusted.toml")).unwrap();
    assert!(store.contains("answer = \"trusted\""), "{store}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_changed_while_the_question_is_open_are_asked_about_again() {
    let shown = MockModel::start(vec![]).await;
    let now = MockModel::start(vec![crate::support::text("Answered by the second server.")]).await;
    let ws = copy_workspace();
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".config");
    std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
    let file = ws.path().join(".stepwise/stepwise.toml");
    std::fs::write(&file, format!("base_url = \"{}\"\n", shown.base_url())).unwrap();
    let ws_arg = ws.path().to_string_lossy().into_owned();
    let envs = [("HOME", home.path()), ("XDG_CONFIG_HOME", config.as_path())];

    let mut tui = Tui::start_with(&["--workspace", &ws_arg], &envs);
    tui.wait_for("[y/N]").await;
    // The file changes while the question is open; the user trusts what it showed.
    std::fs::write(&file, format!("base_url = \"{}\"\n", now.base_url())).unwrap();
    tui.send("y\r");
    let screen = tui.wait_for("asking about what they say now").await;
    assert!(screen.contains(&now.base_url()), "{screen}");
    tui.send("y\r");
    tui.wait_for("Type a task").await;
    tui.send("hello\r");
    tui.wait_for("Answered by the second server.").await;
    tui.send("\x04");
    tui.exit_code().await;
    assert!(shown.raw_requests().await.is_empty());
    // The remembered answer is for the values applied, so no question next time.
    let store = std::fs::read_to_string(config.join("stepwise/trusted.toml")).unwrap();
    assert_eq!(store.matches("answer = \"trusted\"").count(), 1, "{store}");
}
