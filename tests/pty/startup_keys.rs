//! Keys typed at start-up, while the UI waits (at most 100 ms) for the
//! terminal's answer to its background question (OSC 11), are not lost:
//! they reach the input box as typed, whether the terminal answers or not,
//! and the answer itself never shows as text.

use crate::support::pty::Tui;
use std::time::{Duration, Instant};

fn raw(tui: &Tui) -> String {
    String::from_utf8_lossy(&tui.raw.lock().map(|r| r.clone()).unwrap_or_default()).into_owned()
}

fn start() -> (Tui, tempfile::TempDir) {
    let ws = crate::support::copy_workspace();
    let path = ws.path().to_string_lossy().into_owned();
    let args = ["--base-url", "http://127.0.0.1:9/v1", "--workspace", &path];
    (Tui::start_with(&args, &[]), ws)
}

/// Poll the output until the background question was asked.
fn wait_for_query(tui: &Tui) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !raw(tui).contains("\x1b]11;?") {
        assert!(Instant::now() < deadline, "no OSC 11 query");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_typed_while_an_unanswering_terminal_is_asked_reach_the_input() {
    let (mut tui, _ws) = start();
    wait_for_query(&tui);
    tui.send("typed early");
    tui.wait_for("typed early").await;
    tui.send("\x15\x04");
    tui.exit_code().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_typed_around_the_terminal_s_answer_reach_the_input_in_order() {
    let (mut tui, _ws) = start();
    wait_for_query(&tui);
    // Keys before, between and after the two replies, in one burst.
    tui.send("ab\x1b]11;rgb:ffff/ffff/ffff\x1b\\cd\x1b[?62;22cef");
    let screen = tui.wait_for("abcdef").await;
    assert!(!screen.contains("rgb:"), "the reply is not text:\n{screen}");
    assert!(raw(&tui).contains("48;5;231"), "the reply was still read");
    tui.send("\x15\x04");
    tui.exit_code().await;
}
