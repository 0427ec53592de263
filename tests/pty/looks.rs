//! The UI's colours on a real terminal: none at all with `NO_COLOR`, and
//! the palette `--theme auto` picks from the terminal's answer to OSC 11
//! (dark when it does not answer).

use crate::support::pty::Tui;
use std::path::Path;
use std::time::{Duration, Instant};

/// SGR parameters that set a colour (not a reset to the default colour).
fn colour_codes(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    let mut found = Vec::new();
    for part in text.split("\x1b[").skip(1) {
        let Some(end) = part.find(|c: char| !(c.is_ascii_digit() || c == ';')) else {
            continue;
        };
        if !part[end..].starts_with('m') {
            continue;
        }
        let colour = part[..end].split(';').any(|p| {
            matches!(
                p.parse::<u32>(),
                Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
            )
        });
        if colour {
            found.push(part[..end].to_string());
        }
    }
    found
}

fn raw(tui: &Tui) -> Vec<u8> {
    tui.raw.lock().map(|r| r.clone()).unwrap_or_default()
}

async fn start(extra: &[&str], envs: &[(&str, &Path)]) -> (Tui, tempfile::TempDir) {
    let ws = crate::support::copy_workspace();
    let path = ws.path().to_string_lossy().into_owned();
    let mut args = vec!["--base-url", "http://127.0.0.1:9/v1", "--workspace", &path];
    args.extend_from_slice(extra);
    let tui = Tui::start_with(&args, envs);
    (tui, ws)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_color_means_no_colour_codes_at_all() {
    let (mut tui, _ws) = start(&[], &[("NO_COLOR", Path::new("1"))]).await;
    tui.wait_for("Type a task").await;
    let codes = colour_codes(&raw(&tui));
    assert!(codes.is_empty(), "colour codes with NO_COLOR: {codes:?}");
    tui.send("\x04");
    tui.exit_code().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_that_does_not_answer_gets_the_dark_palette_at_once() {
    let started = Instant::now();
    let (mut tui, _ws) = start(&[], &[]).await;
    tui.wait_for("Type a task").await;
    let out = raw(&tui);
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("\x1b]11;?"), "asked for the background");
    assert!(
        text.contains("48;5;233"),
        "dark background: {:?}",
        colour_codes(&out)
    );
    assert!(started.elapsed() < Duration::from_secs(15));
    tui.send("\x04");
    tui.exit_code().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_light_background_reply_picks_the_light_palette() {
    let (mut tui, _ws) = start(&[], &[]).await;
    // Answer the query as soon as it shows (the UI waits at most 100 ms).
    let deadline = Instant::now() + Duration::from_secs(20);
    while !String::from_utf8_lossy(&raw(&tui)).contains("\x1b]11;?") {
        assert!(Instant::now() < deadline, "no OSC 11 query");
        std::thread::sleep(Duration::from_millis(1));
    }
    tui.send("\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?62;22c");
    tui.wait_for("Type a task").await;
    let out = raw(&tui);
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("48;5;231"),
        "light background: {:?}",
        colour_codes(&out)
    );
    assert!(!text.contains("48;5;233"), "not the dark one");
    let screen = tui.screen();
    assert!(
        !screen.contains("rgb:"),
        "the reply never shows as typed text:\n{screen}"
    );
    tui.send("\x04");
    tui.exit_code().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_theme_asks_nothing() {
    let (mut tui, _ws) = start(&["--theme", "light"], &[]).await;
    tui.wait_for("Type a task").await;
    let text = String::from_utf8_lossy(&raw(&tui)).into_owned();
    assert!(!text.contains("\x1b]11;?"));
    assert!(text.contains("48;5;231"));
    tui.send("\x04");
    tui.exit_code().await;
}
