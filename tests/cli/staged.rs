//! Staged tasks through the binary: `exec --stage` edits and tests in a
//! stage, the project keeps every byte until the changeset is applied, the
//! changeset is a patch `git apply` takes, a file the user changed meanwhile
//! is a conflict and never overwritten, a stage survives `kill -9` and the
//! next staged task goes on in it, and a discarded stage leaves nothing.

use crate::sandbox_hardening::lacks;
use crate::support::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BROKEN: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
const FIXED: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n";
const TESTS: &str = "import unittest\nfrom calc import add, mul\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n";

struct Project {
    ws: tempfile::TempDir,
    home: tempfile::TempDir,
}

fn project() -> Option<Project> {
    if lacks(|s| s.layer) {
        return None;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("calc.py"), BROKEN).unwrap();
    std::fs::write(ws.path().join("test_calc.py"), TESTS).unwrap();
    std::fs::write(ws.path().join("notes.txt"), "first\nsecond\n").unwrap();
    Some(Project {
        ws,
        home: tempfile::tempdir().unwrap(),
    })
}

/// Every file of the project but stepwise's own folder, with its bytes.
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if rel.starts_with(".stepwise") || rel.starts_with("__pycache__") {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn stepwise(p: &Project) -> Command {
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .env("HOME", p.home.path())
        .env("XDG_CONFIG_HOME", p.home.path().join(".config"))
        .env("XDG_DATA_HOME", p.home.path().join(".local/share"))
        .env("OPENAI_API_KEY", "sk-test")
        .args(["--workspace"])
        .arg(p.ws.path());
    cmd
}

async fn exec(p: &Project, base_url: &str, extra: &[&str]) -> Output {
    let mut cmd = stepwise(p);
    cmd.args([
        "exec",
        "--stage",
        "--json",
        "--no-log",
        "--base-url",
        base_url,
    ])
    .args(extra)
    .arg("Fix add");
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn stage_cmd(p: &Project, args: &[&str]) -> Output {
    stepwise(p).arg("stage").args(args).output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The model's side of a task that fixes `add` and tests it.
fn fixing_task() -> Vec<Reply> {
    vec![
        tool_call("read_file", json!({"path": "calc.py"})),
        tool_call(
            "replace_text",
            json!({"path": "calc.py", "old": "return a - b", "new": "return a + b"}),
        ),
        tool_call(
            "write_file",
            json!({"path": "CHANGES.md", "content": "- add adds\n"}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        super::support::text("Fixed add; the tests pass."),
    ]
}

/// The stage's name from `stepwise stage list`.
fn only_stage(p: &Project) -> (String, String) {
    let listed = stage_cmd(p, &["list"]);
    let listed = String::from_utf8_lossy(&listed.stdout).to_string();
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 1, "{listed}");
    let mut parts = lines[0].split_whitespace();
    let id = parts.next().unwrap().to_string();
    let state = parts.next().unwrap().to_string();
    (id, state)
}

fn tool_results(requests: &[Value]) -> Vec<Value> {
    let last = requests.last().unwrap();
    tool_messages(last)
        .iter()
        .map(|m| {
            let content = m["content"].as_str().unwrap_or_default();
            serde_json::from_str(content).unwrap_or(Value::String(content.into()))
        })
        .collect()
}

#[tokio::test]
async fn a_staged_task_edits_and_tests_in_its_stage_and_the_project_is_untouched_until_applied() {
    let Some(p) = project() else { return };
    let before = files(p.ws.path());
    let model = MockModel::start(fixing_task()).await;
    let out = exec(&p, &model.base_url(), &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    // The tests ran on the staged fix, without a prompt: they passed.
    let results = tool_results(&model.requests().await);
    let run = results.last().unwrap();
    assert_eq!(run["passed"], json!(true), "{run}");
    // Not one byte of the project changed, and no file was added.
    assert_eq!(files(p.ws.path()), before);
    let (id, state) = only_stage(&p);
    assert_eq!(state, "passed");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("stage_reviewed"), "{stdout}");
    // Applying it writes exactly the changeset, and the stage is gone.
    let applied = stage_cmd(&p, &["apply", &id]);
    assert!(applied.status.success(), "{}", text(&applied));
    let after = files(p.ws.path());
    assert_eq!(after[Path::new("calc.py")], FIXED.as_bytes());
    assert_eq!(after[Path::new("CHANGES.md")], b"- add adds\n");
    assert_eq!(after[Path::new("notes.txt")], b"first\nsecond\n");
    assert_eq!(after.len(), before.len() + 1);
    let listed = stage_cmd(&p, &["list"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("no stages"));
}

#[tokio::test]
async fn exec_stage_apply_writes_the_changeset_once_its_tests_passed() {
    let Some(p) = project() else { return };
    let model = MockModel::start(fixing_task()).await;
    let out = exec(&p, &model.base_url(), &["--apply"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(p.ws.path().join("calc.py")).unwrap(),
        FIXED
    );
    assert!(p.ws.path().join("CHANGES.md").exists());
    let listed = stage_cmd(&p, &["list"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("no stages"));
}

#[tokio::test]
async fn exec_stage_apply_writes_nothing_when_the_answer_came_without_a_passing_run() {
    let Some(p) = project() else { return };
    // The model edits, runs the tests (they fail on a wrong fix), fixes
    // nothing more: the gate refuses, and the task ends unanswered.
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calc.py"})),
        tool_call(
            "replace_text",
            json!({"path": "calc.py", "old": "return a - b", "new": "return a * b"}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        super::support::text("Done."),
        super::support::text("Done."),
        super::support::text("Done."),
    ])
    .await;
    let before = files(p.ws.path());
    let out = exec(&p, &model.base_url(), &["--apply", "--max-steps", "5"]).await;
    assert!(!out.status.success(), "{}", text(&out));
    assert_eq!(files(p.ws.path()), before);
    let (_, state) = only_stage(&p);
    assert_eq!(state, "running");
}

#[tokio::test]
async fn the_patch_out_file_applies_with_git_on_the_untouched_project() {
    let Some(p) = project() else { return };
    let patch = p.home.path().join("change.patch");
    let model = MockModel::start(fixing_task()).await;
    let out = exec(
        &p,
        &model.base_url(),
        &["--patch-out", patch.to_str().unwrap()],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .arg(&patch)
            .current_dir(p.ws.path())
            .output()
            .unwrap()
    };
    let check = git(&["apply", "--check"]);
    assert!(check.status.success(), "{}", text(&check));
    assert!(git(&["apply"]).status.success());
    assert_eq!(
        std::fs::read_to_string(p.ws.path().join("calc.py")).unwrap(),
        FIXED
    );
}

#[tokio::test]
async fn a_file_the_user_changed_meanwhile_is_a_conflict_and_keeps_the_users_version() {
    let Some(p) = project() else { return };
    let model = MockModel::start(fixing_task()).await;
    let out = exec(&p, &model.base_url(), &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let (id, _) = only_stage(&p);
    // The user edits calc.py in the project before the stage is applied.
    let mine = "def add(a, b):\n    return b + a  # mine\n";
    std::fs::write(p.ws.path().join("calc.py"), mine).unwrap();
    let applied = stage_cmd(&p, &["apply", &id]);
    assert!(!applied.status.success(), "{}", text(&applied));
    assert!(
        String::from_utf8_lossy(&applied.stderr).contains("calc.py (changed in the workspace"),
        "{}",
        text(&applied)
    );
    assert_eq!(
        std::fs::read_to_string(p.ws.path().join("calc.py")).unwrap(),
        mine
    );
    // The file without a conflict was written; the conflict stays staged.
    assert!(p.ws.path().join("CHANGES.md").exists());
    let (left, _) = only_stage(&p);
    assert_eq!(left, id);
    let shown = stage_cmd(&p, &["show", &id]);
    assert!(String::from_utf8_lossy(&shown.stderr).contains("calc.py"));
}

#[tokio::test]
async fn a_stage_survives_kill_9_and_the_next_staged_task_goes_on_in_it() {
    let Some(p) = project() else { return };
    let before = files(p.ws.path());
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calc.py"})),
        tool_call(
            "replace_text",
            json!({"path": "calc.py", "old": "return a - b", "new": "return a + b"}),
        ),
        // The model takes its time: stepwise is killed while it waits.
        delayed(super::support::text("never seen"), 60_000),
    ])
    .await;
    let mut cmd = stepwise(&p);
    cmd.args(["exec", "--stage", "--json", "--no-log", "--base-url"])
        .arg(model.base_url())
        .arg("Fix add")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while model.requests().await.len() < 3 {
        assert!(std::time::Instant::now() < deadline, "the edit never came");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(files(p.ws.path()), before);
    let (id, state) = only_stage(&p);
    assert_eq!(state, "running");
    // The next staged task reads the staged file and goes on.
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calc.py"})),
        tool_call("run_tests", json!({"command": "unittest"})),
        super::support::text("Tests pass."),
    ])
    .await;
    let out = exec(&p, &model.base_url(), &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let results = tool_results(&model.requests().await);
    assert!(results[0].to_string().contains("a + b"), "{}", results[0]);
    assert_eq!(results[1]["passed"], json!(true), "{}", results[1]);
    assert_eq!(only_stage(&p), (id.clone(), "passed".to_string()));
    assert_eq!(files(p.ws.path()), before);
    // Discarding drops it and leaves the project as it was.
    let discarded = stage_cmd(&p, &["discard", &id]);
    assert!(discarded.status.success(), "{}", text(&discarded));
    assert_eq!(files(p.ws.path()), before);
    let listed = stage_cmd(&p, &["list"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("no stages"));
}

#[tokio::test]
async fn apply_and_patch_out_without_stage_are_refused() {
    let p = Project {
        ws: tempfile::tempdir().unwrap(),
        home: tempfile::tempdir().unwrap(),
    };
    let out = stepwise(&p)
        .args([
            "exec",
            "--apply",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("add --stage"));
}

/// Two models that behave differently on the same task: one fixes `add`
/// and its tests pass, the other breaks `mul` and answers without a
/// passing run. Both rows come with their own figures; applying the
/// passing attempt writes only its change, and the other attempt's stage
/// goes with it.
#[tokio::test]
async fn models_side_by_side_each_in_its_stage_and_applying_one_writes_only_its_changes() {
    let Some(p) = project() else { return };
    let before = files(p.ws.path());
    let model = MockModel::start_per_model(vec![
        ("gpt-4.1-mini", fixing_task()),
        (
            "gpt-4.1-nano",
            vec![
                tool_call("read_file", json!({"path": "calc.py"})),
                tool_call(
                    "replace_text",
                    json!({"path": "calc.py", "old": "return a * b", "new": "return a ** b"}),
                ),
                tool_call("run_tests", json!({"command": "unittest"})),
                super::support::text("Done."),
                super::support::text("Done."),
                super::support::text("Done."),
            ],
        ),
    ])
    .await;
    let mut cmd = stepwise(&p);
    cmd.args([
        "exec",
        "--json",
        "--no-log",
        "--max-steps",
        "6",
        "--base-url",
    ])
    .arg(model.base_url())
    .args(["--models", "gpt-4.1-mini,gpt-4.1-nano", "Fix add"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(files(p.ws.path()), before, "no attempt writes the project");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.contains("\"comparison\""))
        .unwrap_or_else(|| panic!("{}", text(&out)));
    let table: Value = serde_json::from_str(line).unwrap();
    let rows = table["attempts"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let good = rows.iter().find(|r| r["model"] == "gpt-4.1-mini").unwrap();
    let bad = rows.iter().find(|r| r["model"] == "gpt-4.1-nano").unwrap();
    assert_eq!(good["gate_passed"], json!(true), "{good}");
    assert_eq!(bad["gate_passed"], json!(false), "{bad}");
    assert_eq!(good["files_changed"], json!(2), "{good}");
    assert_eq!(good["tests"], json!("2 tests OK"), "{good}");
    // Each attempt's cost, from its own model's prices.
    let cost = |r: &Value| r["cost_usd"].as_f64().unwrap_or(0.0);
    assert!(cost(good) > 0.0 && cost(bad) > 0.0, "{good} {bad}");
    assert_ne!(cost(good), cost(bad));
    assert!(good["tokens_in"].as_u64().unwrap() > 0, "{good}");
    assert!(bad["steps"].as_u64().unwrap() >= 4, "{bad}");
    assert_ne!(good["stage"], bad["stage"]);
    // Applying the passing attempt writes its change, and only its.
    let id = good["stage"].as_str().unwrap();
    let applied = stage_cmd(&p, &["apply", id]);
    assert!(applied.status.success(), "{}", text(&applied));
    assert_eq!(
        std::fs::read_to_string(p.ws.path().join("calc.py")).unwrap(),
        FIXED
    );
    let listed = stage_cmd(&p, &["list"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("no stages"),
        "{}",
        text(&listed)
    );
}

/// The user edits a file in the project while the staged task still runs
/// (the model is thinking over its answer): at the review it is a conflict,
/// never overwritten, and `--apply` writes only the rest.
#[tokio::test]
async fn a_file_the_user_edits_while_the_task_runs_becomes_a_conflict() {
    let Some(p) = project() else { return };
    let mut replies = fixing_task();
    let answer = replies.pop().unwrap();
    replies.push(delayed(answer, 1500));
    let model = MockModel::start(replies).await;
    let mut cmd = stepwise(&p);
    cmd.args([
        "exec",
        "--stage",
        "--apply",
        "--json",
        "--no-log",
        "--base-url",
    ])
    .arg(model.base_url())
    .arg("Fix add")
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    // The fifth request asks for the answer, after the tests passed.
    while model.requests().await.len() < 5 {
        assert!(
            std::time::Instant::now() < deadline,
            "the answer was never asked for"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let mine = "def add(a, b):\n    return b + a  # mine\n";
    std::fs::write(p.ws.path().join("calc.py"), mine).unwrap();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(p.ws.path().join("calc.py")).unwrap(),
        mine
    );
    assert!(p.ws.path().join("CHANGES.md").exists(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let reviewed = stdout
        .lines()
        .find(|l| l.contains("\"stage_reviewed\""))
        .unwrap_or_else(|| panic!("{}", text(&out)));
    assert!(
        reviewed.contains("calc.py (changed in the workspace"),
        "{reviewed}"
    );
    assert!(reviewed.contains("\"kept\":true"), "{reviewed}");
}

/// Staged tasks run the tests without asking, so a cloned repository's
/// `.stepwise/stepwise.toml` cannot turn them on: in a folder not trusted,
/// `exec` stops and names the value; `--untrusted` runs step by step.
#[tokio::test]
async fn an_untrusted_project_file_cannot_turn_on_staged_tasks() {
    let Some(p) = project() else { return };
    std::fs::create_dir_all(p.ws.path().join(".stepwise")).unwrap();
    std::fs::write(
        p.ws.path().join(".stepwise/stepwise.toml"),
        "review = \"staged\"\n",
    )
    .unwrap();
    let model = MockModel::start(vec![super::support::text("nothing to do")]).await;
    let mut cmd = stepwise(&p);
    cmd.args(["exec", "--no-log", "--base-url"])
        .arg(model.base_url())
        .arg("hi");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("review"),
        "{}",
        text(&out)
    );
    let mut cmd = stepwise(&p);
    cmd.args(["exec", "--untrusted", "--no-log", "--base-url"])
        .arg(model.base_url())
        .arg("hi");
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("Staged:"),
        "{}",
        text(&out)
    );
    let listed = stage_cmd(&p, &["list"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("no stages"));
}

/// What a test run writes reaches a stage by the one door's rules: the
/// data it wrote is staged (and reviewed with the rest), the code it wrote
/// is not, so `--apply` can never write a file a hostile test planted.
#[tokio::test]
async fn code_a_test_run_writes_never_reaches_the_stage_and_data_does() {
    let Some(p) = project() else { return };
    std::fs::write(
        p.ws.path().join("test_writes.py"),
        "import unittest\n\nclass W(unittest.TestCase):\n    def test_w(self):\n        open('report.txt', 'w').write('r\\n')\n        open('conftest.py', 'w').write('raise SystemExit(\\'PLANTED\\')\\n')\n",
    )
    .unwrap();
    // A kept report re-arms the gate: a second run that rewrites only it converges.
    let mut replies = fixing_task();
    let answer = replies.pop().unwrap();
    replies.push(tool_call("run_tests", json!({"command": "unittest"})));
    replies.push(answer);
    let model = MockModel::start(replies).await;
    let out = exec(&p, &model.base_url(), &["--apply"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(p.ws.path().join("calc.py")).unwrap(),
        FIXED
    );
    assert_eq!(
        std::fs::read_to_string(p.ws.path().join("report.txt")).unwrap(),
        "r\n"
    );
    assert!(!p.ws.path().join("conftest.py").exists(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("a stage keeps no code a test run wrote"),
        "{stdout}"
    );
}
