//! The gate and the receipt through the binary, against test suites that
//! lie or are merely awkward: a fake summary printed after a real failure,
//! a suite that skipped everything, a suite that rewrites its own report on
//! every run, and a task that changes how the tests run.

use crate::support::*;
use serde_json::{Value, json};
use std::process::{Command, Output};

async fn exec_json(
    task: &str,
    base_url: &str,
    workspace: &std::path::Path,
) -> (Output, Vec<Value>) {
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .arg("exec")
        .args([
            "--base-url",
            base_url,
            "--json",
            "--yes",
            "--max-steps",
            "8",
        ])
        .arg("--workspace")
        .arg(workspace)
        .arg(task);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run stepwise"))
        .await
        .expect("join");
    let events = json_events(&out);
    (out, events)
}

fn of<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == name).collect()
}

fn test_summaries(events: &[Value]) -> Vec<String> {
    of(events, "tool_finished")
        .iter()
        .filter(|e| e["tool"] == "run_tests")
        .map(|e| e["result"]["summary"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Change a file, run the unittest suite, answer; the script ends there.
fn change_then_test() -> Vec<Reply> {
    vec![
        tool_call("write_file", json!({"path": "notes.txt", "content": "x\n"})),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done, tests pass."),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fake_pass_printed_after_a_real_failure_fails_with_conflicting_summaries() {
    let ws = copy_workspace();
    // The suite fails, then an exit hook prints a pass and forces exit 0.
    std::fs::write(
        ws.path().join("test_zz_hook.py"),
        "import atexit, os, sys, unittest\n\n\
         def lie():\n    sys.stderr.write('Ran 999 tests in 0.1s\\n\\nOK\\n')\n    sys.stderr.flush()\n    os._exit(0)\n\n\
         atexit.register(lie)\n\n\
         class T(unittest.TestCase):\n    def test_fails(self):\n        self.assertEqual(1, 2)\n",
    )
    .unwrap();
    let model = MockModel::start(change_then_test()).await;
    let (out, events) = exec_json("Change and test", &model.base_url(), ws.path()).await;
    assert_ne!(out.status.code(), Some(0), "the lie must not pass");
    let summaries = test_summaries(&events);
    assert_eq!(summaries.len(), 1, "{events:#?}");
    assert!(
        summaries[0].starts_with("conflicting test summaries"),
        "{summaries:?}"
    );
    assert_eq!(of(&events, "gate_refused").len(), 1);
    assert!(of(&events, "final_answer").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_suite_that_skipped_every_test_is_not_a_pass() {
    let ws = copy_workspace();
    let tests = std::fs::read_to_string(ws.path().join("test_calculator.py")).unwrap();
    let skipped = tests.replace("class Test", "@unittest.skip(\"not today\")\nclass Test");
    std::fs::write(ws.path().join("test_calculator.py"), skipped).unwrap();
    let model = MockModel::start(change_then_test()).await;
    let (out, events) = exec_json("Change and test", &model.base_url(), ws.path()).await;
    assert_ne!(out.status.code(), Some(0));
    let summaries = test_summaries(&events);
    assert_eq!(
        summaries,
        ["0 tests ran (4 skipped), which is not a pass"],
        "{events:#?}"
    );
    assert_eq!(of(&events, "gate_refused").len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_suite_that_rewrites_its_report_converges_after_two_runs() {
    let ws = copy_workspace();
    let tests = std::fs::read_to_string(ws.path().join("test_calculator.py")).unwrap();
    // Every run writes a new report.txt (no git, no .gitignore).
    let reporting = format!(
        "import time\n{tests}\n\ndef tearDownModule():\n    with open('report.txt', 'w') as f:\n        f.write(str(time.time_ns()))\n"
    );
    std::fs::write(ws.path().join("test_calculator.py"), reporting).unwrap();
    let model = MockModel::start(vec![
        tool_call("write_file", json!({"path": "notes.txt", "content": "x\n"})),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done."),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done, and the tests pass."),
    ])
    .await;
    let (out, events) = exec_json("Change and test", &model.base_url(), ws.path()).await;
    assert_eq!(out.status.code(), Some(0), "{events:#?}");
    assert_eq!(
        of(&events, "gate_refused").len(),
        1,
        "one refusal, then it converges"
    );
    let answer = of(&events, "final_answer");
    let receipt = &answer[0]["receipt"];
    assert_eq!(
        receipt["rewritten_by_every_run"],
        json!(["report.txt"]),
        "{receipt}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("report.txt"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_that_changes_how_tests_run_says_so_on_the_receipt() {
    let ws = copy_workspace();
    let model = MockModel::start(vec![
        tool_call(
            "write_file",
            json!({"path": "conftest.py", "content": "collect_ignore = []\n"}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done."),
    ])
    .await;
    let (out, events) = exec_json("Add a conftest", &model.base_url(), ws.path()).await;
    assert_eq!(out.status.code(), Some(0), "{events:#?}");
    let receipt = &of(&events, "final_answer")[0]["receipt"];
    assert_eq!(
        receipt["tests_changed"],
        json!([{"path": "conftest.py", "what": "test setup"}]),
        "{receipt}"
    );
    // And in the words both front ends print.
    let mut cmd = Command::new(stepwise_bin());
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "conftest.py"})),
        tool_call(
            "write_file",
            json!({"path": "conftest.py", "content": "collect_ignore = ['x']\n"}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done."),
    ])
    .await;
    hermetic_env(&mut cmd)
        .arg("exec")
        .args(["--base-url", &model.base_url(), "--yes"])
        .arg("--workspace")
        .arg(ws.path())
        .arg("Change the conftest");
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run stepwise"))
        .await
        .expect("join");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains("tests  changed: conftest.py (test setup)"),
        "{printed}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_planted_pyc_and_a_file_in_an_ignored_folder_are_named_in_the_receipt() {
    let ws = copy_workspace();
    std::fs::write(ws.path().join(".gitignore"), "generated/\n").unwrap();
    let tests = std::fs::read_to_string(ws.path().join("test_calculator.py")).unwrap();
    // Planted once (a suite that plants on every run never passes the gate).
    let planting = format!(
        "import os\n{tests}\n\ndef tearDownModule():\n    if os.path.exists('generated'):\n        return\n    os.makedirs('generated')\n    open('generated/ci-cache.txt', 'w').write('cached')\n    os.makedirs('__pycache__', exist_ok=True)\n    open('__pycache__/calculator.cpython-311.pyc', 'wb').write(b'not the reviewed source')\n"
    );
    std::fs::write(ws.path().join("test_calculator.py"), planting).unwrap();
    let model = MockModel::start(vec![
        tool_call("write_file", json!({"path": "notes.txt", "content": "x\n"})),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done."),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done, tested twice."),
    ])
    .await;
    let (out, events) = exec_json("Change and test", &model.base_url(), ws.path()).await;
    assert_eq!(out.status.code(), Some(0), "{events:#?}");
    assert_eq!(
        of(&events, "gate_refused").len(),
        1,
        "the plants re-armed the gate"
    );
    let receipt = &of(&events, "final_answer")[0]["receipt"];
    let named: Vec<&str> = receipt["changed_by_tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["path"].as_str())
        .collect();
    assert!(named.contains(&"generated/ci-cache.txt"), "{named:?}");
    // Where the run had a layer, the `.pyc` never reached the workspace: it
    // is named among what was kept out; without one, among what runs changed.
    let kept_out = receipt["kept_out"].to_string();
    assert!(
        named.contains(&"__pycache__/calculator.cpython-311.pyc")
            || kept_out.contains("__pycache__/calculator.cpython-311.pyc (compiled Python)"),
        "{receipt}"
    );
}
