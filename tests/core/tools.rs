//! Every tool's error paths, and the behaviour of the test runner under hangs,
//! children, secrets and cancellation.

use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};
use stepwise::tools::TestCommands;
use stepwise::tools::Workspace;
use stepwise::tools::edits::edit;
use stepwise::tools::edits::edit::{prepare_replace, prepare_write};
use stepwise::tools::reading::files;
use stepwise::tools::testing::test_runner::run_tests;
use tokio_util::sync::CancellationToken;

fn ws_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let tmp = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let p = tmp.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    let ws = Workspace::open(tmp.path()).unwrap();
    (tmp, ws)
}

fn error_of(out: &stepwise::tools::ToolOutput) -> String {
    assert!(!out.success, "expected an error: {:?}", out.body);
    out.body["error"].as_str().unwrap().to_string()
}

#[test]
fn read_file_errors() {
    let (tmp, ws) = ws_with(&[("a.py", "x = 1\n"), ("pkg/b.py", "")]);
    assert!(error_of(&files::read_file(&ws, "missing.py")).contains("does not exist"));
    assert!(error_of(&files::read_file(&ws, "pkg")).contains("is a folder"));
    std::fs::create_dir(tmp.path().join("dir.py")).unwrap();
    assert!(error_of(&files::read_file(&ws, "dir.py")).contains("is a folder"));
    std::fs::write(tmp.path().join("big.txt"), "x".repeat(16 * 1024 * 1024 + 1)).unwrap();
    assert!(error_of(&files::read_file(&ws, "big.txt")).contains("16777216-byte limit"));
    std::fs::write(tmp.path().join("bin.txt"), [0xff, 0xfe, 0x00]).unwrap();
    assert!(error_of(&files::read_file(&ws, "bin.txt")).contains("binary file"));
    std::fs::write(tmp.path().join("latin1.txt"), b"caf\xe9\n").unwrap();
    assert!(error_of(&files::read_file(&ws, "latin1.txt")).contains("not UTF-8"));
    assert!(error_of(&files::read_file(&ws, "")).contains("empty"));
    assert!(error_of(&files::read_file(&ws, "a\0.py")).contains("NUL"));
    let ok = files::read_file(&ws, "a.py");
    assert_eq!(
        ok.body,
        json!({"success": true, "path": "a.py", "content": "x = 1\n",
               "start_line": 1, "end_line": 1, "total_lines": 1, "truncated": false})
    );
}

#[test]
fn write_and_replace_errors() {
    let (_tmp, ws) = ws_with(&[("a.py", "x = 1\ny = 1\nx = 1\n")]);
    assert!(files::read_file(&ws, "a.py").success);
    let too_big = "x".repeat(1024 * 1024 + 1);
    assert!(
        prepare_write(&ws, "b.py", &too_big)
            .unwrap_err()
            .0
            .contains("limit")
    );
    assert!(
        prepare_write(&ws, "b.bin", "a\0b")
            .unwrap_err()
            .0
            .contains("NUL byte")
    );
    let zero = prepare_replace(&ws, "a.py", "z = 3", "z = 4")
        .unwrap_err()
        .0;
    assert!(zero.contains("found 0 times"), "{zero}");
    let many = prepare_replace(&ws, "a.py", "x = 1", "x = 2")
        .unwrap_err()
        .0;
    assert!(
        many.contains("found 2 times") && many.contains("context"),
        "{many}"
    );
    assert!(
        prepare_replace(&ws, "a.py", "", "x")
            .unwrap_err()
            .0
            .contains("empty")
    );
    assert!(
        prepare_replace(&ws, "nope.py", "a", "b")
            .unwrap_err()
            .0
            .contains("write_file")
    );
    let edit = prepare_replace(&ws, "a.py", "y = 1", "y = 2").unwrap();
    assert_eq!(edit.new, "x = 1\ny = 2\nx = 1\n");
    assert_eq!((edit.diff.added, edit.diff.removed), (1, 1));
}

#[test]
fn writes_are_atomic_keep_permissions_and_create_folders() {
    let (tmp, ws) = ws_with(&[("tool.py", "print(1)\n")]);
    let path = tmp.path().join("tool.py");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(files::read_file(&ws, "tool.py").success);
    let edit = prepare_write(&ws, "tool.py", "print(2)\n").unwrap();
    assert!(edit::apply_edit(&ws, &edit).success);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "print(2)\n");
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o755
    );
    // No temporary files are left behind.
    let names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["tool.py"]);
    let created = prepare_write(&ws, "a/b/c.py", "c = 1\n").unwrap();
    assert!(created.diff.new_file);
    let out = edit::apply_edit(&ws, &created);
    assert_eq!(out.body["created"], true);
    let mode = std::fs::metadata(tmp.path().join("a/b/c.py"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o600,
        0o600,
        "new files are readable and writable by the owner"
    );
}

#[test]
fn write_into_a_read_only_folder_fails_and_keeps_the_original() {
    if rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED: root ignores folder permissions");
        return;
    }
    let (tmp, ws) = ws_with(&[("ro/a.py", "keep\n")]);
    let ro = tmp.path().join("ro");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    assert!(files::read_file(&ws, "ro/a.py").success);
    let edit = prepare_write(&ws, "ro/a.py", "new\n").unwrap();
    let out = edit::apply_edit(&ws, &edit);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(error_of(&out).contains("nothing changed"));
    assert_eq!(std::fs::read_to_string(ro.join("a.py")).unwrap(), "keep\n");
}

#[test]
fn list_files_skips_hidden_cache_and_ignored_and_caps_at_200() {
    let mut entries: Vec<(String, String)> = vec![
        (".git/config".into(), String::new()),
        ("__pycache__/a.pyc".into(), String::new()),
        ("node_modules/m/index.js".into(), String::new()),
        (".pytest_cache/v".into(), String::new()),
        ("target/debug/x".into(), String::new()),
        (".env".into(), "K=v".into()),
        (".gitignore".into(), "build/\n*.log\n".into()),
        ("build/out.py".into(), String::new()),
        ("app.log".into(), String::new()),
        ("src/main.py".into(), String::new()),
    ];
    let (_tmp, ws) = ws_with(
        &entries
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect::<Vec<_>>(),
    );
    let out = files::list_files(&ws, ".");
    assert_eq!(out.body["files"], json!(["src/main.py"]));
    assert_eq!(out.body["truncated"], false);
    assert!(error_of(&files::list_files(&ws, "nope")).contains("does not exist"));
    assert!(error_of(&files::list_files(&ws, "src/main.py")).contains("read_file"));

    entries = (0..250)
        .map(|i| (format!("m/f{i:03}.py"), String::new()))
        .collect();
    let (_tmp2, ws2) = ws_with(
        &entries
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect::<Vec<_>>(),
    );
    let out = files::list_files(&ws2, "m");
    assert_eq!(out.body["files"].as_array().unwrap().len(), 200);
    assert_eq!(out.body["truncated"], true);
    assert_eq!(out.body["files"][0], "m/f000.py");
    assert!(out.body["note"].as_str().unwrap().contains("250"));
    assert_eq!(out.summary, "200 entries, 250 files");
}

/// `unittest` in the workspace with a generous timeout and no interruption.
/// The workspace's detected `unittest` command.
fn unittest(ws: &Workspace) -> stepwise::tools::TestCommand {
    TestCommands::detect(ws, &[])
        .get("unittest")
        .cloned()
        .unwrap()
}

async fn run_unittest(ws: &Workspace) -> stepwise::tools::ToolOutput {
    run_tests(
        ws.root(),
        &unittest(ws),
        Duration::from_secs(60),
        &CancellationToken::new(),
    )
    .await
}

fn python_test(body: &str) -> (tempfile::TempDir, Workspace) {
    ws_with(&[("test_it.py", body)])
}

#[tokio::test]
async fn hanging_tests_are_killed_at_the_timeout_with_their_children() {
    // The child is found by its command line: inside the run's PID
    // namespace its pid means nothing out here.
    let (_tmp, ws) = python_test("");
    // Outside the workspace (whose writes a run's layer keeps from view
    // until the run ends), in a folder the run may write.
    let pids = tempfile::tempdir().unwrap();
    let pid_file = pids.path().join("child.pid");
    let marker = format!("300.{}", std::process::id());
    let body = format!(
        "import subprocess, time, unittest\n\
         class T(unittest.TestCase):\n\
         \x20   def test_hang(self):\n\
         \x20       p = subprocess.Popen(['sleep', {marker:?}])\n\
         \x20       open({:?}, 'w').write(str(p.pid))\n\
         \x20       time.sleep(300)\n",
        pid_file.display().to_string()
    );
    std::fs::write(ws.root().join("test_it.py"), &body).unwrap();
    let started = Instant::now();
    let policy = stepwise::tools::sandbox::Policy {
        writable: vec![pids.path().to_path_buf()],
        ..Default::default()
    };
    let out = stepwise::tools::testing::test_runner::run_tests_with(
        ws.root(),
        &unittest(&ws),
        Duration::from_secs(2),
        &CancellationToken::new(),
        &policy,
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "returned after the timeout"
    );
    assert!(!out.success);
    assert_eq!(out.body["timed_out"], true);
    assert!(out.summary.contains("timed out"));
    assert!(pid_file.exists(), "the child never started: {}", out.body);
    // The grandchild is gone (or a zombie being reaped).
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next()
                == Some("Z");
            !zombie && String::from_utf8_lossy(&cmdline).contains(&marker)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        survivors.is_empty(),
        "the child survived the timeout: {survivors:?}"
    );
}

#[tokio::test]
async fn failing_tests_report_returncode_and_output_tail() {
    let body = "import unittest\n\
        class T(unittest.TestCase):\n\
        \x20   def test_fails(self):\n\
        \x20       self.assertEqual(1, 2)\n";
    let (_tmp, ws) = python_test(body);
    let out = run_unittest(&ws).await;
    assert!(!out.success);
    assert_eq!(out.body["returncode"], 1);
    assert!(
        out.body["output"]
            .as_str()
            .unwrap()
            .contains("AssertionError")
    );
    assert!(
        out.summary.contains("1 of 1 test failed") && out.summary.contains("exit 1"),
        "{}",
        out.summary
    );
    assert!(out.body["error"].as_str().unwrap().contains("fix"));
}

#[tokio::test]
async fn cancelling_kills_a_running_test_promptly() {
    let body = "import time, unittest\n\
        class T(unittest.TestCase):\n\
        \x20   def test_slow(self):\n\
        \x20       time.sleep(300)\n";
    let (_tmp, ws) = python_test(body);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let out = run_tests(ws.root(), &unittest(&ws), Duration::from_secs(600), &cancel).await;
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(error_of(&out).contains("interrupted"));
}

#[tokio::test]
async fn endless_output_is_cut_to_the_tail() {
    let body = "import sys, unittest\n\
        class T(unittest.TestCase):\n\
        \x20   def test_noise(self):\n\
        \x20       for i in range(200000):\n\
        \x20           sys.stdout.write('noise line %d\\n' % i)\n";
    let (_tmp, ws) = python_test(body);
    let out = run_unittest(&ws).await;
    let output = out.body["output"].as_str().unwrap();
    assert!(output.chars().count() <= 12_100, "{}", output.len());
    assert!(output.starts_with("[… earlier output cut …]"));
    assert!(output.contains("OK"), "the end of the output is kept");
}

#[tokio::test]
async fn non_utf8_test_output_is_shown_lossily() {
    let body = "import sys, unittest\n\
        class T(unittest.TestCase):\n\
        \x20   def test_bytes(self):\n\
        \x20       sys.stdout.buffer.write(b'before \\xff\\xfe\\xc3\\x28 after\\n')\n\
        \x20       sys.stdout.flush()\n\
        \x20       self.fail('boom')\n";
    let (_tmp, ws) = python_test(body);
    let out = run_unittest(&ws).await;
    assert_eq!(out.body["returncode"], 1, "{:?}", out.body);
    let output = out.body["output"].as_str().unwrap();
    assert!(
        output.contains("before \u{FFFD}\u{FFFD}\u{FFFD}( after"),
        "{output}"
    );
    assert!(output.contains("boom"), "the rest of the output survives");
}
