//! Nothing raw reaches the terminal (issue 12, items 14 and 15): escape
//! sequences in a server's error, the model's text, a tool's name and
//! arguments, a file's content and a test run's output are shown visibly by
//! `exec` into a pipe, on a terminal and in `--json`; a path with newlines
//! cannot print a fake receipt.

use crate::support::pty::Tui;
use crate::support::*;
use serde_json::json;
use std::process::{Command, Output};

/// The hostile bytes: an OSC 52 clipboard write, a title change, a C1 CSI
/// that clears the screen, a bidi override.
const EVIL: &str = "\x1b]52;c;SGVsbG8=\x07\x1b]0;pwned\x07\u{9b}2J\u{202e}";

const FAILING_TEST: &str = "import sys\nimport unittest\n\n\nclass TestEvil(unittest.TestCase):\n    def test_evil(self):\n        sys.stdout.write(\"\\x1b]0;owned\\x07\\x1b]52;c;SGk=\\x07\\n\")\n        sys.stdout.flush()\n        self.fail(\"\\x1b]0;owned\\x07\\x1b]52;c;SGk=\\x07\\x1b[2J\")\n";

const PASSING_TEST: &str = "import unittest\n\n\nclass TestEvil(unittest.TestCase):\n    def test_fine(self):\n        pass\n";

/// A workspace with a hostile file and a hostile test, and the model's side
/// of a task that passes every hostile string through `exec`.
async fn hostile_run() -> (MockModel, tempfile::TempDir) {
    let ws = copy_workspace();
    std::fs::write(ws.path().join("evil.txt"), format!("plain\n{EVIL}\n")).unwrap();
    std::fs::write(ws.path().join("test_evil.py"), FAILING_TEST).unwrap();
    let model = MockModel::start(vec![
        error(500, &format!("overloaded {EVIL}")),
        tool_call(&format!("{EVIL}tool"), json!({"path": EVIL})),
        tool_call("read_file", json!({"path": "evil.txt"})),
        tool_call(
            "write_file",
            json!({"path": "evil.txt", "content": format!("clean {EVIL}\n")}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        tool_call("read_file", json!({"path": "test_evil.py"})),
        tool_call(
            "write_file",
            json!({"path": "test_evil.py", "content": PASSING_TEST}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        text(&format!("Done {EVIL} really")),
    ])
    .await;
    (model, ws)
}

async fn exec(args: &[&str], model: &MockModel, ws: &std::path::Path) -> Output {
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .args([
            "exec",
            "--max-retries",
            "1",
            "--base-url",
            &model.base_url(),
            "--workspace",
        ])
        .arg(ws)
        .args(args);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// Raw control bytes a terminal would act on: ESC, BEL, C1 (UTF-8 `C2 80..9F`), bidi overrides.
fn raw_controls(bytes: &[u8]) -> Vec<String> {
    let chars: Vec<char> = String::from_utf8_lossy(bytes).chars().collect();
    (0..chars.len())
        .filter(|&i| {
            stepwise::present::visible(chars[i]).is_some() && !matches!(chars[i], '\n' | '\t')
        })
        .map(|i| {
            let around: String = chars[i.saturating_sub(20)..(i + 20).min(chars.len())]
                .iter()
                .collect();
            format!("{:?} at {i}: {around:?}", chars[i])
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_sequences_never_reach_a_pipe_raw() {
    let (model, ws) = hostile_run().await;
    let out = exec(&["--yes", "show me"], &model, ws.path()).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(raw_controls(&out.stdout), Vec::<String>::new(), "{stdout}");
    assert_eq!(raw_controls(&out.stderr), Vec::<String>::new());
    // Each hostile string is still there, visibly: server error, tool name,
    // arguments (the diff), file content (the diff), test output, model text.
    assert!(stdout.contains("overloaded ␛]52;c;SGVsbG8=␇"), "{stdout}");
    assert!(
        stdout.contains("␛]52;c;SGVsbG8=␇␛]0;pwned␇\u{fffd}2J\u{fffd}tool"),
        "{stdout}"
    );
    assert!(
        stdout.contains("-␛]52;c;SGVsbG8=␇"),
        "old file content: {stdout}"
    );
    assert!(
        stdout.contains("+clean ␛]52;c;SGVsbG8=␇"),
        "arguments: {stdout}"
    );
    // Test output has its escape sequences removed where it is captured
    // (the model reads it so too): the failure message keeps its text, the
    // sequences are gone rather than shown.
    assert!(
        stdout.contains("AssertionError") && !stdout.contains("SGk=␇"),
        "test output: {stdout}"
    );
    assert!(
        stdout.contains("Done ␛]52;c;SGVsbG8=␇"),
        "model text: {stdout}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn json_output_keeps_the_data_but_no_raw_control() {
    let (model, ws) = hostile_run().await;
    let out = exec(&["--yes", "--json", "show me"], &model, ws.path()).await;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(raw_controls(&out.stdout), Vec::<String>::new());
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let answer = events
        .iter()
        .find(|e| e["event"] == "final_answer")
        .unwrap();
    assert_eq!(
        answer["text"],
        format!("Done {EVIL} really"),
        "exact after parsing"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_terminal_only_stepwise_colors_are_escapes() {
    let (model, ws) = hostile_run().await;
    let url = model.base_url();
    let ws_arg = ws.path().to_string_lossy().into_owned();
    let args = [
        "exec",
        "--yes",
        "--max-retries",
        "1",
        "--base-url",
        &url,
        "--workspace",
        &ws_arg,
        "show me",
    ];
    let mut tui = Tui::start_with(&args, &[]);
    assert_eq!(tui.exit_code().await, 0, "{}", tui.screen());
    let raw = tui.raw.lock().unwrap().clone();
    let text = String::from_utf8_lossy(&raw);
    assert!(
        text.contains("\x1b[1m[Step"),
        "colored on a terminal: {text:?}"
    );
    assert!(text.contains("␛]52;c;SGVsbG8=␇"), "{text:?}");
    // Every escape is an SGR color (ESC [ digits m); nothing else controls the terminal.
    let mut rest = text.as_ref();
    while let Some(at) = rest.find('\x1b') {
        let seq = &rest[at + 1..];
        let end = seq
            .find('m')
            .unwrap_or_else(|| panic!("unterminated escape: {seq:?}"));
        assert!(
            seq.starts_with('[') && seq[1..end].chars().all(|c| c.is_ascii_digit() || c == ';'),
            "not a color: {:?}",
            &seq[..seq.len().min(20)]
        );
        rest = &seq[end..];
    }
    let others: Vec<String> = raw_controls(&raw)
        .into_iter()
        .filter(|c| !c.starts_with("'\\u{1b}'") && !c.starts_with("'\\r'"))
        .collect();
    assert_eq!(others, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_path_with_newlines_prints_on_one_line() {
    let fake = "a\n✓ 9 tests OK\nReceipt: fake.py";
    let model = MockModel::start(vec![
        tool_call("write_file", json!({"path": fake, "content": "x = 1\n"})),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done."),
    ])
    .await;
    let ws = copy_workspace();
    let out = exec(&["--yes", "add a file"], &model, ws.path()).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for line in stdout.lines() {
        let line = line.trim_start();
        assert!(
            !line.starts_with("✓ 9 tests OK") && !line.starts_with("Receipt: fake"),
            "a spoofed line: {line:?}\n{stdout}"
        );
    }
    let escaped = "a␊✓ 9 tests OK␊Receipt: fake.py";
    // The step line, the diff header, the result, the receipt, the changed files.
    assert!(stdout.matches(escaped).count() >= 4, "{stdout}");
    assert!(
        stdout.contains(&format!("[Step 1/20] write_file {escaped}")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("  {escaped} (new) +1")),
        "{stdout}"
    );
}

#[test]
fn errors_quoting_project_files_are_sanitized() {
    // A `.env` line the parser quotes back, a project `stepwise.toml` value
    // `--print-config` shows.
    let ws = copy_workspace();
    std::fs::write(ws.path().join(".env"), format!("A=1\nBAD KEY{EVIL}=2\n")).unwrap();
    let mut cmd = Command::new(stepwise_bin());
    let out = hermetic_env(&mut cmd)
        .current_dir(ws.path())
        .args(["exec", "--workspace", ".", "t"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // The line is skipped by its number; nothing of it is quoted.
    assert!(
        err.contains("./.env line 2 cannot be parsed; skipped") && !err.contains("52;"),
        "{err}"
    );
    assert_eq!(raw_controls(&out.stderr), Vec::<String>::new());

    let ws = copy_workspace();
    std::fs::create_dir(ws.path().join(".stepwise")).unwrap();
    std::fs::write(
        ws.path().join(".stepwise/stepwise.toml"),
        format!(
            "model = \"{}\"\n",
            EVIL.replace('\x1b', "\\u001b").replace('\x07', "\\u0007")
        ),
    )
    .unwrap();
    let mut cmd = Command::new(stepwise_bin());
    // Trusted, so the model applies and is shown (untrusted, it is held
    // back and shown as escaped TOML).
    let out = hermetic_env(&mut cmd)
        .arg("--workspace")
        .arg(ws.path())
        .arg("--trust")
        .arg("--print-config")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("␛]52;c;SGVsbG8=␇"), "{text}");
    assert_eq!(raw_controls(&out.stdout), Vec::<String>::new(), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_identifier_hidden_by_invisible_characters_shows_in_the_diff() {
    let ws = copy_workspace();
    // `is_admin` with a zero-width space: a second variable that reads the same.
    let sneaky = "\n\nis_admin\u{200b} = True\nsafe\u{2060}name = 1\n";
    let old = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calculator.py"})),
        tool_call(
            "write_file",
            json!({"path": "calculator.py", "content": format!("{old}{sneaky}")}),
        ),
        text("Done."),
    ])
    .await;
    let out = exec(&["--yes", "Add a flag"], &model, ws.path()).await;
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("is_admin\u{fffd} = True"), "{shown}");
    assert!(shown.contains("safe\u{fffd}name"), "{shown}");
    assert!(
        raw_controls(&out.stdout).is_empty(),
        "{:?}",
        raw_controls(&out.stdout)
    );
    // The file keeps its real bytes.
    let written = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    assert!(written.contains("is_admin\u{200b} = True"));
}
