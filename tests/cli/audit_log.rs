//! The session transcript and the workspace lock, through the real binary; and
//! the API key never appearing in any output or log, even across errors and retries.

use crate::support::*;
use serde_json::{Value, json};
use std::process::Command;

const KEY: &str = "sk-recognisable-3f9a7c1e-secret";

fn exec(base_url: &str, ws: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .env("OPENAI_API_KEY", KEY)
        .args(["exec", "--yes", "--base-url", base_url, "--workspace"])
        .arg(ws)
        .args(extra)
        .arg("do the task")
        .output()
        .unwrap()
}

fn transcripts(ws: &std::path::Path) -> Vec<std::path::PathBuf> {
    let dir = ws.join(".stepwise/sessions");
    std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_transcript_records_events_and_decisions_and_no_secret_appears_anywhere() {
    let mut script = vec![error(500, "upstream hiccup")];
    script.extend(seed_script("unittest"));
    let model = MockModel::start(script).await;
    let ws = copy_workspace();
    let base = model.base_url();
    let path = ws.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || exec(&base, &path, &[]))
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let logs = transcripts(ws.path());
    assert_eq!(logs.len(), 1, "{logs:?}");
    let text = std::fs::read_to_string(&logs[0]).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = records.iter().filter_map(|r| r["event"].as_str()).collect();
    for kind in [
        "task_started",
        "retrying",
        "tool_finished",
        "approval_requested",
        "approval_decided",
        "usage",
        "final_answer",
        "task_finished",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    assert!(
        !kinds.contains(&"assistant_delta"),
        "per-token deltas are not logged"
    );
    let decided: Vec<&Value> = records
        .iter()
        .filter(|r| r["event"] == "approval_decided")
        .collect();
    assert_eq!(decided.len(), 4, "three edits and one test run");
    assert!(
        decided
            .iter()
            .all(|d| d["decided_by"] == "--yes" && d["decision"] == json!({"decision": "approve"}))
    );
    assert!(records.iter().all(|r| r["ts"].is_string()));

    // The key went to the server in the header, and nowhere else.
    let raw = model.raw_requests().await;
    assert_eq!(
        raw[0].headers.get("authorization").unwrap(),
        &format!("Bearer {KEY}")
    );
    for (name, content) in [
        ("stdout", String::from_utf8_lossy(&out.stdout).into_owned()),
        ("stderr", String::from_utf8_lossy(&out.stderr).into_owned()),
        ("transcript", text),
    ] {
        assert!(!content.contains(KEY), "the key leaked into {name}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_log_writes_no_transcript() {
    let model = MockModel::start(vec![text("nothing to do")]).await;
    let ws = copy_workspace();
    let base = model.base_url();
    let path = ws.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || exec(&base, &path, &["--no-log"]))
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(transcripts(ws.path()).is_empty());
    let lock = std::fs::File::open(ws.path().join(".stepwise/lock")).unwrap();
    assert!(lock.try_lock().is_ok(), "the lock is released on exit");
}

#[test]
fn a_second_stepwise_on_the_same_workspace_refuses_to_start() {
    let ws = copy_workspace();
    std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
    // This test process holds the OS lock, as a running stepwise would.
    let path = ws.path().join(".stepwise/lock");
    std::fs::write(&path, std::process::id().to_string()).unwrap();
    let held = std::fs::File::open(&path).unwrap();
    held.try_lock().unwrap();
    let out = exec("http://127.0.0.1:9/v1", ws.path(), &[]);
    drop(held);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("another stepwise") && err.contains(&std::process::id().to_string()),
        "{err}"
    );
}

#[test]
fn a_symlinked_state_folder_stops_exec_and_nothing_lands_outside() {
    let ws = copy_workspace();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join(".stepwise")).unwrap();
    let out = exec("http://127.0.0.1:9/v1", ws.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(".stepwise") && err.contains("symbolic link"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}
