//! The key's value never leaves in text, through the real binary: a server
//! error that echoes the `Authorization` header, a file and a test run that
//! print the key are scrubbed from stdout, stderr, the transcript and what
//! the model is sent.

use crate::support::*;
use serde_json::json;
use std::path::Path;
use std::process::{Command, Output};

const KEY: &str = "sk-scrub-e2e-7b2d94a1c0";

async fn exec(base: String, ws: &Path) -> Output {
    let ws = ws.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(stepwise_bin());
        hermetic_env(&mut cmd)
            .env("OPENAI_API_KEY", KEY)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .args([
                "exec",
                "--yes",
                "--max-retries",
                "0",
                "--base-url",
                &base,
                "--workspace",
            ])
            .arg(&ws)
            .arg("look around")
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

/// stdout, stderr and every transcript, each named.
fn everything(out: &Output, ws: &Path) -> Vec<(String, String)> {
    let mut all = vec![
        (
            "stdout".into(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        ),
        (
            "stderr".into(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ),
    ];
    for entry in std::fs::read_dir(ws.join(".stepwise/sessions")).unwrap() {
        let path = entry.unwrap().path();
        all.push((
            path.display().to_string(),
            std::fs::read_to_string(&path).unwrap(),
        ));
    }
    all
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_error_echoing_the_authorization_header_shows_no_key() {
    let echo = format!("invalid header: Authorization: Bearer {KEY}");
    let model = MockModel::start(vec![error(401, &echo)]).await;
    let ws = copy_workspace();
    let out = exec(model.base_url(), ws.path()).await;
    assert_eq!(out.status.code(), Some(1));
    let all = everything(&out, ws.path());
    for (name, content) in &all {
        assert!(
            !content.contains(KEY),
            "the key leaked into {name}:\n{content}"
        );
    }
    let printed = format!("{}{}", all[0].1, all[1].1);
    assert!(
        printed.contains("invalid header: Authorization: Bearer [redacted by stepwise]"),
        "the rest of the message still shows: {printed}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_and_a_test_run_printing_the_key_reach_neither_the_model_nor_the_screen() {
    let python = Command::new("python3").arg("-V").output();
    if !python.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED: python3 is not available");
        return;
    }
    let ws = copy_workspace();
    std::fs::write(ws.path().join("notes.txt"), format!("the key is {KEY}\n")).unwrap();
    let test = std::fs::read_to_string(ws.path().join("test_calculator.py")).unwrap();
    std::fs::write(
        ws.path().join("test_calculator.py"),
        // Encoded, as a test reading a file with the key in it could print it.
        format!(
            "import base64\nprint('leaked {KEY}')\nprint('b64', base64.b64encode(b'key={KEY}').decode())\nprint('hex', b'{KEY}'.hex())\n{test}"
        ),
    )
    .unwrap();
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "notes.txt"})),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Looked around."),
    ])
    .await;
    let out = exec(model.base_url(), ws.path()).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = model.requests().await;
    let sent = serde_json::to_string(&requests).unwrap();
    assert!(!sent.contains(KEY), "the model was sent the key");
    assert!(sent.contains("leaked [redacted by stepwise]"), "{sent}");
    let encoded = [
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("key={KEY}"),
        ),
        hex::encode(KEY),
    ];
    for form in &encoded {
        // What decodes back to the key is gone (a few edge characters stay).
        let middle = &form[4..form.len() - 4];
        assert!(!sent.contains(middle), "the model was sent {form}: {sent}");
    }
    assert!(sent.contains("the key is [redacted by stepwise]"), "{sent}");
    for (name, content) in everything(&out, ws.path()) {
        assert!(
            !content.contains(KEY),
            "the key leaked into {name}:\n{content}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_streamed_in_pieces_is_scrubbed_from_the_printed_text() {
    // `text` streams the answer in four chunks, so the key arrives split.
    let answer = format!("The key is {KEY} as configured.\nNothing else to do.");
    let model = MockModel::start(vec![text(&answer)]).await;
    let ws = copy_workspace();
    let out = exec(model.base_url(), ws.path()).await;
    assert_eq!(out.status.code(), Some(0));
    for (name, content) in &everything(&out, ws.path()) {
        assert!(
            !content.contains(KEY),
            "the key leaked into {name}:\n{content}"
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("The key is [redacted by stepwise] as configured.")
            && stdout.contains("Nothing else to do."),
        "the rest of the streamed text still shows: {stdout}"
    );
}
