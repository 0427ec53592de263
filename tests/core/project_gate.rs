//! The gate believes only what stepwise checked: test commands found from
//! the project (listed in the schema and the prompt), exit code and summary
//! that must agree, files a test run changed, a workspace without any test
//! command, and `/continue`, which keeps the gate of the stopped task.

use crate::support::*;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use stepwise::agent::{Decision, FinishReason, LoopSettings, RetryPolicy};
use tokio_util::sync::CancellationToken;

fn approve(_: &stepwise::agent::ApprovalRequest) -> Decision {
    Decision::Approve
}

fn of<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == kind).collect()
}

fn settings(test_commands: &[(&str, &[&str])]) -> LoopSettings {
    LoopSettings {
        retry: RetryPolicy {
            max_retries: 0,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(20),
        },
        test_commands: test_commands
            .iter()
            .map(|(n, argv)| (n.to_string(), argv.iter().map(|a| a.to_string()).collect()))
            .collect(),
        ..LoopSettings::default()
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_schema_and_the_prompt_name_the_projects_own_test_commands() {
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "Cargo.toml", "[package]\nname = \"x\"\n");
    write(
        ws.path(),
        "package.json",
        r#"{"scripts": {"test": "node --test"}}"#,
    );
    let model = MockModel::start(vec![text("nothing to do")]).await;
    let mut s = session_on(
        &model,
        ws.path(),
        settings(&[("unit", &["cargo", "test", "--lib"])]),
    );
    drive(&mut s, Some("look"), CancellationToken::new(), approve).await;
    let request = &model.requests().await[0];
    let run_tests = request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "run_tests")
        .unwrap();
    let command = &run_tests["function"]["parameters"]["properties"]["command"];
    assert_eq!(command["enum"], json!(["cargo", "npm", "unit"]));
    let description = run_tests["function"]["description"].as_str().unwrap();
    assert!(
        description.contains("`unit` (runs `cargo test --lib`)"),
        "{description}"
    );
    let prompt = request["messages"][0]["content"].as_str().unwrap();
    assert!(prompt.contains("`npm` (runs `npm test`)"), "{prompt}");
    assert!(
        !prompt.contains("pytest"),
        "no Python wording here: {prompt}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_zero_with_a_failing_summary_is_a_failure_that_says_so() {
    let ws = tempfile::tempdir().unwrap();
    // Prints pytest's failure summary, then exits 0.
    write(
        ws.path(),
        "liar.py",
        "print('1 failed, 2 passed in 0.1s')\n",
    );
    // Prints unittest's "OK" for 999 tests, then exits 1.
    write(
        ws.path(),
        "boast.py",
        "import sys\nprint('Ran 999 tests in 0.1s\\n\\nOK')\nsys.exit(1)\n",
    );
    let model = MockModel::start(vec![
        tool_call("write_file", json!({"path": "notes.md", "content": "hi\n"})),
        tool_call("run_tests", json!({"command": "liar"})),
        tool_call("run_tests", json!({"command": "boast"})),
        text("done"),
    ])
    .await;
    let commands: &[(&str, &[&str])] = &[
        ("liar", &["python3", "liar.py", "-m", "pytest"]),
        ("boast", &["python3", "boast.py", "-m", "unittest"]),
    ];
    let mut s = session_on(&model, ws.path(), settings(commands));
    let (reason, events) = drive(&mut s, Some("t"), CancellationToken::new(), approve).await;
    let runs: Vec<&Value> = of(&events, "tool_finished")
        .into_iter()
        .filter(|e| e["tool"] == "run_tests")
        .collect();
    assert_eq!(runs.len(), 2);
    for run in &runs {
        assert_eq!(run["status"], "failed", "{run}");
        assert_eq!(run["result"]["passed"], false);
    }
    let liar = runs[0]["result"]["summary"].as_str().unwrap();
    assert!(
        liar.contains("yet exit 0") && liar.contains("disagree"),
        "{liar}"
    );
    let boast = runs[1]["result"]["summary"].as_str().unwrap();
    assert!(boast.contains("999 tests OK, yet exit 1"), "{boast}");
    assert_eq!(
        of(&events, "gate_refused").len(),
        1,
        "the answer after the failed runs is refused"
    );
    assert_ne!(reason, FinishReason::Answered);
}

#[tokio::test(flavor = "multi_thread")]
async fn files_a_test_run_changes_are_changes_for_the_gate_the_receipt_and_the_diff() {
    let ws = copy_workspace();
    // A test that edits calculator.py once, while passing.
    write(
        ws.path(),
        "test_sneaky.py",
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_edit(self):\n        text = open('calculator.py').read()\n        if '# touched' not in text:\n            open('calculator.py', 'a').write('# touched\\n')\n        open('made_by_test.txt', 'w').write('x')\n",
    );
    let model = MockModel::start(vec![
        tool_call("run_tests", json!({"command": "unittest"})),
        text("done"),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("done after a clean run"),
    ])
    .await;
    let mut s = session_on(&model, ws.path(), settings(&[]));
    let (reason, events) = drive(&mut s, Some("t"), CancellationToken::new(), approve).await;
    assert_eq!(reason, FinishReason::Answered, "{events:#?}");
    let runs: Vec<&Value> = of(&events, "tool_finished")
        .into_iter()
        .filter(|e| e["tool"] == "run_tests")
        .collect();
    let changed = &runs[0]["result"]["files_changed_by_run"];
    assert_eq!(
        changed,
        &json!([
            {"path": "calculator.py", "change": "changed"},
            {"path": "made_by_test.txt", "change": "created"},
        ])
    );
    assert!(
        runs[0]["result"]["note"]
            .as_str()
            .unwrap()
            .contains("count as changes")
    );
    assert_eq!(
        runs[1]["result"].get("files_changed_by_run"),
        None,
        "the second run changed nothing"
    );
    assert_eq!(
        of(&events, "gate_refused").len(),
        1,
        "the first answer is refused"
    );
    let receipt = &of(&events, "final_answer")[0]["receipt"];
    let by_tests: Vec<&str> = receipt["changed_by_tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(by_tests, ["calculator.py", "made_by_test.txt"]);
    let files: Vec<&str> = receipt["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["calculator.py", "made_by_test.txt"]);
    let diffs: Vec<String> = s.session_diffs().into_iter().map(|d| d.path).collect();
    assert_eq!(diffs, ["calculator.py", "made_by_test.txt"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_any_test_command_a_changed_answer_is_accepted_but_marked_unverified() {
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "notes.md", "hello\n");
    let model = MockModel::start(vec![
        tool_call("run_tests", json!({})),
        tool_call("write_file", json!({"path": "todo.md", "content": "- x\n"})),
        text("wrote todo.md"),
    ])
    .await;
    let mut s = session_on(&model, ws.path(), settings(&[]));
    let (reason, events) = drive(&mut s, Some("t"), CancellationToken::new(), approve).await;
    assert_eq!(reason, FinishReason::Answered);
    let first = &of(&events, "tool_finished")[0];
    assert!(
        first["result"]["error"]
            .as_str()
            .unwrap()
            .contains("no test command"),
        "{first}"
    );
    assert!(of(&events, "gate_refused").is_empty());
    let receipt = &of(&events, "final_answer")[0]["receipt"];
    assert_eq!(receipt["no_test_command"], true);
    let request = &model.requests().await[0];
    let prompt = request["messages"][0]["content"].as_str().unwrap();
    assert!(
        prompt.contains("This workspace has no test command"),
        "{prompt}"
    );
    assert!(prompt.contains("unverified: no test command"));
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_after_an_error_keeps_the_gate_the_changes_and_the_step_count() {
    let ws = copy_workspace();
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calculator.py"})),
        tool_call(
            "replace_text",
            json!({"path": "calculator.py", "old": "    return a - b\n", "new": "    return a - b  # same\n"}),
        ),
        error(500, "server broke"),
        text("all done, trust me"),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("done, tests pass"),
    ])
    .await;
    let mut s = session_on(&model, ws.path(), settings(&[]));
    let (reason, _) = drive(&mut s, Some("t"), CancellationToken::new(), approve).await;
    assert!(matches!(reason, FinishReason::Error(_)), "{reason:?}");
    let (reason, events) = drive(&mut s, None, CancellationToken::new(), approve).await;
    assert_eq!(reason, FinishReason::Answered);
    assert_eq!(
        of(&events, "gate_refused").len(),
        1,
        "the untested answer is refused: {events:#?}"
    );
    let first_step = &of(&events, "step_started")[0];
    assert_eq!(first_step["step"], 3, "the step counter carries over");
    let receipt = &of(&events, "final_answer")[0]["receipt"];
    assert_eq!(
        receipt["files"][0]["path"], "calculator.py",
        "the changed files carry over"
    );
    assert_eq!(receipt["tests"]["exit_code"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_summary_is_read_per_stream_when_stdout_and_stderr_interleave_mid_line() {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        "split.py",
        "import sys, time\nsys.stdout.write('3 pas'); sys.stdout.flush(); time.sleep(0.2)\nsys.stderr.write('noise\\n'); sys.stderr.flush(); time.sleep(0.2)\nsys.stdout.write('sed in 0.1s\\n')\n",
    );
    let model = MockModel::start(vec![
        tool_call("run_tests", json!({"command": "split"})),
        text("done"),
    ])
    .await;
    let commands: &[(&str, &[&str])] = &[("split", &["python3", "split.py", "-m", "pytest"])];
    let mut s = session_on(&model, ws.path(), settings(commands));
    let (_, events) = drive(&mut s, Some("t"), CancellationToken::new(), approve).await;
    let run = &of(&events, "tool_finished")[0];
    assert!(
        run["result"]["output"]
            .as_str()
            .unwrap()
            .contains("3 pasnoise"),
        "{run}"
    );
    assert_eq!(run["summary"], "3 passed", "{run}");
}

#[tokio::test(flavor = "multi_thread")]
async fn coloured_test_output_reaches_the_model_and_the_summary_without_any_escape() {
    let ws = tempfile::tempdir().unwrap();
    // Colours as uvu prints them, a cursor move, a title, and pytest's
    // summary line wrapped in colour.
    write(
        ws.path(),
        "colours.py",
        "print('\\x1b[90m\\u2022\\x1b[39m\\x1b[2K\\x1b]0;title\\x07\\n\\x1b[1;32m3 passed\\x1b[0m in 0.1s')\n",
    );
    let model = MockModel::start(vec![
        tool_call("run_tests", json!({"command": "colours"})),
        text("done"),
    ])
    .await;
    let commands: &[(&str, &[&str])] = &[("colours", &["python3", "colours.py", "-m", "pytest"])];
    let mut s = session_on(&model, ws.path(), settings(commands));
    let (_, events) = drive(&mut s, Some("t"), CancellationToken::new(), approve).await;
    let run = &of(&events, "tool_finished")[0];
    assert_eq!(run["summary"], "3 passed", "the summary is read: {run}");
    assert!(
        run.get("coloured_output").is_none(),
        "the coloured copy is never serialized: {run}"
    );
    let request = &model.requests().await[1];
    let sent = request.to_string();
    assert!(!sent.contains("\\u001b"), "{sent}");
    let tool = &tool_messages(request)[0];
    let content = tool["content"].as_str().unwrap();
    assert!(content.contains("\u{2022}\\n3 passed in 0.1s"), "{content}");
}

/// The door's decisions, each its own: what a run wrote is kept only as
/// decided. Here the user declines the data the run wrote and keeps the
/// code it wrote by an explicit choice: the workspace gets exactly that.
#[tokio::test(flavor = "multi_thread")]
async fn what_a_run_wrote_is_kept_only_as_each_offer_is_decided() {
    let state = stepwise::tools::sandbox::state(&Default::default());
    if !state.layer {
        eprintln!("skipped: this kernel lacks {}", state.missing().join(", "));
        return;
    }
    let ws = copy_workspace();
    write(
        ws.path(),
        "test_writes.py",
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_write(self):\n        open('report.txt', 'w').write('r')\n        open('gen.py', 'w').write('G = 1\\n')\n",
    );
    let model = MockModel::start(vec![
        tool_call("run_tests", json!({"command": "unittest"})),
        text("done"),
    ])
    .await;
    let mut s = session_on(&model, ws.path(), settings(&[]));
    let decide = |r: &stepwise::agent::ApprovalRequest| match &r.action {
        stepwise::agent::ApprovalAction::KeepRunOutput { code: false, .. } => Decision::Decline {
            reason: Some("not this report".into()),
        },
        _ => Decision::Approve,
    };
    let (_, events) = drive(&mut s, Some("t"), CancellationToken::new(), decide).await;
    assert!(!ws.path().join("report.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("gen.py")).unwrap(),
        "G = 1\n"
    );
    let run = of(&events, "tool_finished")
        .into_iter()
        .find(|e| e["tool"] == "run_tests")
        .unwrap()
        .clone();
    let notes = run["result"]["sandbox_notes"].to_string();
    assert!(
        notes.contains("report.txt (declined: The user's reason: not this report)"),
        "{notes}"
    );
    assert_eq!(
        run["result"]["files_changed_by_run"],
        json!([{"path": "gen.py", "change": "created"}])
    );
}
