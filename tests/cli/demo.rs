//! The built-in scripted demo and `--script`, headless: no key, no network, a
//! temporary copy of the workspace, and the repo's own `workspace/` untouched.

use crate::support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

/// Run `stepwise exec --json ARGS` with TMPDIR inside a test folder; return (exit, events).
fn exec_json(args: &[&str], tmp: &Path) -> (Option<i32>, Vec<Value>) {
    let mut cmd = Command::new(stepwise_bin());
    let out = hermetic_env(&mut cmd)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("TMPDIR", tmp)
        .args(["exec", "--json"])
        .args(args)
        .output()
        .unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (out.status.code(), events)
}

fn demo_copy(events: &[Value]) -> PathBuf {
    let notice = events
        .iter()
        .find(|e| e["event"] == "notice")
        .expect("a notice event");
    assert!(
        notice["text"]
            .as_str()
            .unwrap()
            .contains("scripted demo model")
    );
    PathBuf::from(notice["workspace"].as_str().unwrap())
}

#[test]
fn demo_with_yes_finishes_on_a_copy_and_leaves_the_repo_workspace_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let before = snapshot(&sample_workspace());
    let (code, events) = exec_json(&["--demo", "--yes"], tmp.path());
    assert_eq!(code, Some(0), "{events:#?}");
    let copy = demo_copy(&events);
    assert!(
        copy.starts_with(tmp.path()),
        "the copy lives in the temp dir: {}",
        copy.display()
    );
    let calc = std::fs::read_to_string(copy.join("calculator.py")).unwrap();
    assert!(calc.contains("def divide(a, b):") && calc.contains("ValueError"));
    let tests = std::fs::read_to_string(copy.join("test_calculator.py")).unwrap();
    assert!(tests.contains("divide(1, 0)"));
    let run = Command::new("python3")
        .args(["-m", "unittest", "discover"])
        .current_dir(&copy)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        snapshot(&sample_workspace()),
        before,
        "repo workspace unchanged"
    );
    let finished = events
        .iter()
        .find(|e| e["event"] == "task_finished")
        .unwrap();
    assert_eq!(
        finished["cost_usd"],
        Value::Null,
        "a scripted model has no cost"
    );
    assert_eq!(finished["reason"]["reason"], "answered");
}

#[test]
fn declining_in_the_demo_ends_with_the_honest_message() {
    // Without --yes and without a terminal every approval is declined.
    let tmp = tempfile::tempdir().unwrap();
    let (code, events) = exec_json(&["--demo"], tmp.path());
    let copy = demo_copy(&events);
    assert_eq!(
        std::fs::read(copy.join("calculator.py")).unwrap(),
        std::fs::read(sample_workspace().join("calculator.py")).unwrap()
    );
    let answer = events
        .iter()
        .find(|e| e["event"] == "final_answer")
        .expect("final answer");
    assert!(
        answer["text"].as_str().unwrap().contains("You declined"),
        "{answer}"
    );
    // The honest answer passes the gate (nothing changed), but a run that
    // had to decline for want of a terminal is not a success (issue 16).
    assert_eq!(code, Some(1));
    let last = events.last().expect("events");
    assert_eq!(last["event"], "declined_unattended", "{last}");
    assert_eq!(last["declined"], 1);
    assert_eq!(
        events
            .iter()
            .filter(|e| e["event"] == "approval_requested")
            .count(),
        1,
        "the script stopped after the first decline"
    );
}

#[test]
fn a_script_file_runs_the_same_way_and_the_gate_still_applies() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("s.json");
    std::fs::write(
        &script,
        r#"{"task": "make notes", "chunk_delay_ms": 0, "turns": [
            {"tool": "write_file", "arguments": {"path": "notes.md", "content": "hi\n"}},
            {"final": "Done without tests."},
            {"tool": "run_tests", "arguments": {"command": "unittest"}},
            {"final": "Done; tests pass."}
        ]}"#,
    )
    .unwrap();
    let (code, events) = exec_json(&["--yes", "--script", script.to_str().unwrap()], tmp.path());
    assert_eq!(code, Some(0), "{events:#?}");
    assert!(events.iter().any(|e| e["event"] == "gate_refused"));
    let answer = events
        .iter()
        .find(|e| e["event"] == "final_answer")
        .unwrap();
    assert_eq!(answer["text"], "Done; tests pass.");
    assert!(demo_copy(&events).join("notes.md").exists());
}

#[test]
fn a_broken_script_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("bad.json");
    std::fs::write(&script, r#"{"turns": [{"tool": "x", "final": "y"}]}"#).unwrap();
    let mut cmd = Command::new(stepwise_bin());
    let out = hermetic_env(&mut cmd)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["exec", "--script", script.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("turns[0]"));
}

#[test]
fn a_closed_stdout_does_not_crash_exec() {
    use std::io::Read;
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(stepwise_bin());
    let mut child = hermetic_env(&mut cmd)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("TMPDIR", tmp.path())
        .args(["exec", "--demo", "--yes", "--no-log"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read the first bytes, then close the pipe as `| head -1` would.
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "the task still ran to its end: {err}"
    );
}
