//! The file tools end to end: the real binary, `exec --yes`, the mock model
//! calling `read_file` ranges, `search_text`, and reads and writes of files
//! that must be refused, with every tool result read back from the requests
//! the model received.

use crate::support::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

async fn exec(model: &MockModel, workspace: &Path) -> Output {
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .arg("exec")
        .args(["--base-url", &model.base_url()])
        .arg("--workspace")
        .arg(workspace)
        .args([
            "--yes",
            "--no-log",
            "--max-steps",
            "50",
            "Look at the files",
        ]);
    tokio::task::spawn_blocking(move || cmd.output().expect("run stepwise"))
        .await
        .expect("join")
}

/// The tool results the model got, from the last request.
async fn results(model: &MockModel) -> Vec<Value> {
    let requests = model.requests().await;
    let last = requests.last().expect("a request");
    tool_messages(last)
        .iter()
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

fn assert_ran(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ranged_read_of_a_300_kb_file_returns_exactly_those_lines() {
    let ws = tempfile::tempdir().unwrap();
    let log: String = (1..=10_000)
        .map(|i| format!("log line {i:05} ................\n"))
        .collect();
    assert!(log.len() > 300_000, "{}", log.len());
    std::fs::write(ws.path().join("server.log"), &log).unwrap();
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "server.log"})),
        tool_call(
            "read_file",
            json!({"path": "server.log", "offset": 9_990, "limit": 20}),
        ),
        tool_call(
            "read_file",
            json!({"path": "server.log", "offset": 4_000, "limit": 3}),
        ),
        tool_call("read_file", json!({"path": "server.log", "limit": 6_000})),
        text("Read it."),
    ])
    .await;
    assert_ran(&exec(&model, ws.path()).await);
    let r = results(&model).await;
    // Without a range: the first part, and how to ask for more.
    assert_eq!(
        (r[0]["success"].clone(), r[0]["truncated"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(r[0]["start_line"], 1);
    assert_eq!(r[0]["total_lines"], 10_000);
    assert!(
        r[0]["note"].as_str().unwrap().contains("offset"),
        "{}",
        r[0]
    );
    // Past the end: what there is.
    assert_eq!(r[1]["start_line"], 9_990);
    assert_eq!(r[1]["end_line"], 10_000);
    assert_eq!(r[1]["truncated"], false);
    let tail: String = (9_990..=10_000)
        .map(|i| format!("log line {i:05} ................\n"))
        .collect();
    assert_eq!(r[1]["content"], tail.as_str());
    assert_eq!(
        r[2]["content"],
        "log line 04000 ................\nlog line 04001 ................\nlog line 04002 ................\n"
    );
    assert_eq!(
        (r[2]["end_line"].clone(), r[2]["truncated"].clone()),
        (json!(4_002), json!(true))
    );
    assert!(
        r[3]["error"].as_str().unwrap().contains("at most 5000")
            || r[3]["error"].as_str().unwrap().contains("1 to 5000"),
        "{}",
        r[3]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn search_text_finds_lines_skips_secrets_and_reports_bad_patterns() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("src/deep")).unwrap();
    std::fs::create_dir_all(ws.path().join("node_modules/x")).unwrap();
    std::fs::write(
        ws.path().join("src/lib.rs"),
        "fn alpha() {}\n// TODO: beta\n",
    )
    .unwrap();
    std::fs::write(
        ws.path().join("src/deep/b.go"),
        "package b\n// todo later\n",
    )
    .unwrap();
    std::fs::write(ws.path().join("node_modules/x/i.js"), "// TODO vendored\n").unwrap();
    std::fs::write(ws.path().join(".env"), "TODO=sk-secret\n").unwrap();
    std::fs::write(ws.path().join("server.pem"), "TODO key\n").unwrap();
    std::fs::write(ws.path().join("blob.bin"), b"TODO\0\x01").unwrap();
    let model = MockModel::start(vec![
        tool_call("search_text", json!({"pattern": "TODO"})),
        tool_call(
            "search_text",
            json!({"pattern": "todo", "ignore_case": true, "glob": "*.go"}),
        ),
        tool_call("search_text", json!({"pattern": "fn ("})),
        tool_call("search_text", json!({"pattern": "x", "glob": "["})),
        tool_call("search_text", json!({"pattern": "x", "path": "missing"})),
        text("Searched."),
    ])
    .await;
    assert_ran(&exec(&model, ws.path()).await);
    let r = results(&model).await;
    assert_eq!(
        r[0]["matches"],
        json!([{"path": "src/lib.rs", "line": 2, "text": "// TODO: beta"}]),
        "{}",
        r[0]
    );
    assert_eq!(
        (r[0]["total"].clone(), r[0]["truncated"].clone()),
        (json!(1), json!(false))
    );
    assert_eq!(
        r[1]["matches"],
        json!([{"path": "src/deep/b.go", "line": 2, "text": "// todo later"}])
    );
    let bad = r[2]["error"].as_str().unwrap();
    assert!(
        bad.contains("not a valid regular expression") && bad.contains("unclosed group"),
        "{bad}"
    );
    assert!(r[3]["error"].as_str().unwrap().contains("glob"), "{}", r[3]);
    assert!(
        r[4]["error"].as_str().unwrap().contains("does not exist"),
        "{}",
        r[4]
    );
}

/// Every name of the fixed deny list, and one inside each denied folder.
const DENIED: [&str; 14] = [
    ".env",
    ".env.production",
    "certs/server.pem",
    "tls.key",
    "id_rsa",
    "id_ecdsa.pub",
    "id_ed25519",
    ".netrc",
    ".pypirc",
    ".npmrc",
    ".git-credentials",
    ".git/config",
    "sub/.git/HEAD",
    ".stepwise/notes.md",
];

#[tokio::test(flavor = "multi_thread")]
async fn every_denied_name_is_refused_for_read_and_write_and_binary_files_too() {
    let ws = tempfile::tempdir().unwrap();
    for path in DENIED {
        let p = ws.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "SECRET=hunter2\n").unwrap();
    }
    std::fs::write(ws.path().join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    std::fs::write(ws.path().join("notes.txt"), "fine\n").unwrap();
    let mut script = Vec::new();
    for path in DENIED {
        script.push(tool_call("read_file", json!({"path": path})));
        script.push(tool_call(
            "write_file",
            json!({"path": path, "content": "x\n"}),
        ));
    }
    script.push(tool_call("read_file", json!({"path": "logo.png"})));
    script.push(tool_call("read_file", json!({"path": "notes.txt"})));
    script.push(tool_call("list_files", json!({})));
    script.push(text("Done."));
    let model = MockModel::start(script).await;
    assert_ran(&exec(&model, ws.path()).await);
    let r = results(&model).await;
    for (i, path) in DENIED.iter().enumerate() {
        for (what, result) in [("read", &r[2 * i]), ("write", &r[2 * i + 1])] {
            assert_eq!(result["success"], false, "{what} {path}: {result}");
            assert!(
                !result.to_string().contains("hunter2"),
                "{what} {path}: {result}"
            );
        }
        let on_disk = std::fs::read_to_string(ws.path().join(path)).unwrap();
        assert_eq!(on_disk, "SECRET=hunter2\n", "{path} unchanged");
    }
    let n = DENIED.len() * 2;
    let binary = r[n]["error"].as_str().unwrap();
    assert!(
        binary.contains("binary file") && binary.contains("NUL"),
        "{binary}"
    );
    assert_eq!(r[n + 1]["content"], "fine\n");
    let listed = r[n + 2]["files"].to_string();
    for hidden in ["pem", "tls.key", "id_rsa", "id_ecdsa", "id_ed25519"] {
        assert!(!listed.contains(hidden), "{hidden} listed: {listed}");
    }
    assert!(listed.contains("notes.txt"), "{listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ignore_files_that_are_devices_fifos_or_huge_are_skipped_not_read() {
    let ws = copy_workspace();
    let p = ws.path();
    for (dir, file) in [
        ("docs", "guide.md"),
        ("sub", "inner.txt"),
        ("big", "kept.txt"),
        ("big", "generated_7.txt"),
    ] {
        std::fs::create_dir_all(p.join(dir)).unwrap();
        std::fs::write(p.join(dir).join(file), "needle\n").unwrap();
    }
    // /dev/zero behind a link would be read until memory ran out.
    std::os::unix::fs::symlink("/dev/zero", p.join("docs/.gitignore")).unwrap();
    // A FIFO would block a plain open for ever.
    let fifo = Command::new("mkfifo").arg(p.join("sub/.ignore")).status();
    // 800 KB of rules cost hundreds of MB and seconds to compile, per walk.
    let big: String = (0..40_000)
        .map(|i| format!("**/generated_{i}.txt\n"))
        .collect();
    assert!(big.len() > 800_000);
    std::fs::write(p.join("big/.gitignore"), big).unwrap();
    let model = MockModel::start(vec![
        tool_call("list_files", json!({"path": "."})),
        tool_call("search_text", json!({"pattern": "needle"})),
        text("Listed."),
    ])
    .await;
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .args(["exec", "--yes", "--no-log", "--base-url", &model.base_url()])
        .arg("--workspace")
        .arg(p)
        .arg("List the files")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pid = child.id();
    let waited = tokio::task::spawn_blocking(move || child.wait_with_output());
    let Ok(out) = tokio::time::timeout(std::time::Duration::from_secs(60), waited).await else {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!("stepwise hung on an ignore file");
    };
    let out = out.unwrap().unwrap();
    assert_ran(&out);
    let results = results(&model).await;
    let listed = results[0].to_string();
    // Every folder is walked, without the rules of the file it cannot read.
    for shown in ["guide.md", "kept.txt", "generated_7.txt"] {
        assert!(listed.contains(shown), "{shown} not listed: {listed}");
    }
    if fifo.is_ok_and(|s| s.success()) {
        assert!(listed.contains("inner.txt"), "{listed}");
    }
    let found = results[1].to_string();
    for path in ["docs/guide.md", "big/generated_7.txt"] {
        assert!(found.contains(path), "{path} not searched: {found}");
    }
}
