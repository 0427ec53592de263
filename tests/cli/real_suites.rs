//! Suites shaped like real projects, through the binary: a pytest suite
//! with subtests and a mocha suite. Each is run natively first, then by
//! stepwise with a scripted model that breaks the code (the gate must
//! refuse), then fixes it (the gate must accept), and stepwise's counts are
//! checked against the runner's own.

use crate::support::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

/// `stepwise exec --json --yes` in `dir` against the mock model.
async fn exec_in(dir: &Path, base_url: &str) -> (Output, Vec<Value>) {
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .current_dir(dir)
        .args([
            "exec",
            "--json",
            "--yes",
            "--no-log",
            "--base-url",
            base_url,
        ])
        .args([
            "--test-timeout",
            "120",
            "Change add and keep the tests green",
        ]);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run stepwise"))
        .await
        .expect("join");
    let events = json_events(&out);
    (out, events)
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Read `path`, break `old` into `broken`, run the tests, answer (refused),
/// put it back, run them again, answer (accepted).
fn break_then_fix(path: &str, old: &str, broken: &str, runner: &str) -> Vec<Reply> {
    vec![
        tool_call("read_file", json!({"path": path})),
        tool_call(
            "replace_text",
            json!({"path": path, "old": old, "new": broken}),
        ),
        tool_call("run_tests", json!({"command": runner})),
        text("Done."),
        tool_call(
            "replace_text",
            json!({"path": path, "old": broken, "new": old}),
        ),
        tool_call("run_tests", json!({"command": runner})),
        text("Put add back; the tests pass."),
    ]
}

/// The `run_tests` summaries, in order.
fn summaries(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["event"] == "tool_finished" && e["tool"] == "run_tests")
        .map(|e| e["summary"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn count(events: &[Value], name: &str) -> usize {
    events.iter().filter(|e| e["event"] == name).count()
}

/// The last test run's receipt of the accepted answer.
fn receipt_tests(out: &Output, events: &[Value]) -> Value {
    let answer = events.iter().find(|e| e["event"] == "final_answer");
    let answer = answer.unwrap_or_else(|| {
        panic!(
            "no final answer:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    answer["receipt"]["tests"].clone()
}

const CALC_PY: &str = "def add(a, b):\n    return a + b\n";

const TEST_CALC_PY: &str = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\ndef test_add_many(subtests):\n    for a, b, want in [(1, 2, 3), (0, 0, 0), (-1, 1, 0), (5, 5, 10)]:\n        with subtests.test(a=a, b=b):\n            assert add(a, b) == want\n";

/// The interpreter stepwise runs pytest with.
fn python() -> String {
    std::env::var("STEPWISE_PYTHON")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "python3".into())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pytest_suite_with_subtests_passes_as_it_passes_natively() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    write(p, "calc.py", CALC_PY);
    write(p, "test_calc.py", TEST_CALC_PY);
    // The runner's own verdict first, on a copy (its cache stays out of `p`).
    let native_dir = tempfile::tempdir().unwrap();
    write(native_dir.path(), "calc.py", CALC_PY);
    write(native_dir.path(), "test_calc.py", TEST_CALC_PY);
    let native = Command::new(python())
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .current_dir(native_dir.path())
        .output();
    let native = native.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let Some(own) = native
        .ok()
        .and_then(|o| {
            o.lines()
                .rev()
                .find(|l| l.contains(" in "))
                .map(String::from)
        })
        .filter(|l| l.contains("subtests passed"))
    else {
        eprintln!("skipped: the installed pytest has no subtests (pytest 9 or pytest-subtests)");
        return;
    };
    assert!(own.starts_with("2 passed, 4 subtests passed in "), "{own}");

    let model = MockModel::start(break_then_fix(
        "calc.py",
        "    return a + b\n",
        "    return a - b\n",
        "pytest",
    ))
    .await;
    let (out, events) = exec_in(p, &model.base_url()).await;
    let tests = receipt_tests(&out, &events);
    assert_eq!(out.status.code(), Some(0), "{tests}");
    assert_eq!(
        count(&events, "gate_refused"),
        1,
        "the broken run is refused: {events:#?}"
    );
    let seen = summaries(&events);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen[0].contains("failed"), "{seen:?}");
    // The same counts as the runner's own line.
    assert_eq!(tests["summary"], "2 passed (4 subtests passed)", "{tests}");
    assert_eq!(tests["verified"], "exit_code_and_summary");
    assert_eq!(std::fs::read_to_string(p.join("calc.py")).unwrap(), CALC_PY);
}

/// A stand-in for mocha where mocha is not installed: it runs the specs and
/// prints what mocha's spec reporter prints (`  3 passing (2ms)`, then
/// `  1 failing` and the numbered failures), exiting with the failure count.
const MOCHA_STAND_IN: &str = r#"#!/usr/bin/env node
const fs = require('fs');
const path = require('path');
const tests = [];
global.describe = (name, fn) => { console.log(`  ${name}`); fn(); };
global.it = (name, fn) => tests.push({ name, fn });
console.log('');
for (const f of fs.readdirSync('test').filter((f) => f.endsWith('.spec.js'))) {
  require(path.resolve('test', f));
}
const start = Date.now();
const failures = [];
for (const t of tests) {
  try {
    t.fn();
    console.log(`    ✔ ${t.name}`);
  } catch (e) {
    failures.push([t, e]);
    console.log(`    ${failures.length}) ${t.name}`);
  }
}
console.log(`\n\n  ${tests.length - failures.length} passing (${Date.now() - start}ms)`);
if (failures.length) {
  console.log(`  ${failures.length} failing\n`);
  failures.forEach(([t, e], i) => console.log(`  ${i + 1}) ${t.name}:\n     ${e.message}\n`));
}
process.exitCode = Math.min(failures.length, 255);
"#;

const MATH_JS: &str = "exports.add = (a, b) => a + b;\n";

const MATH_SPEC_JS: &str = "const assert = require('assert');\nconst { add } = require('../math.js');\n\ndescribe('add', () => {\n  it('adds', () => assert.strictEqual(add(1, 2), 3));\n  it('adds zero', () => assert.strictEqual(add(0, 0), 0));\n  it('adds negatives', () => assert.strictEqual(add(-1, 1), 0));\n});\n";

/// Whether `program` runs here.
fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mocha_suite_is_read_in_mochas_own_summary() {
    if !runs("npm") {
        eprintln!("skipped: npm is not installed here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    write(
        p,
        "package.json",
        r#"{"name": "m", "version": "1.0.0", "scripts": {"test": "mocha"}, "devDependencies": {"mocha": "^10.0.0"}}"#,
    );
    write(p, "math.js", MATH_JS);
    write(p, "test/math.spec.js", MATH_SPEC_JS);
    if !runs("mocha") {
        use std::os::unix::fs::PermissionsExt;
        let bin = p.join("node_modules/.bin/mocha");
        write(p, "node_modules/.bin/mocha", MOCHA_STAND_IN);
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // The runner's own count, natively.
    let native = Command::new("npm")
        .args(["test", "--silent"])
        .current_dir(p)
        .output()
        .unwrap();
    let own = String::from_utf8_lossy(&native.stdout).into_owned();
    assert!(native.status.success(), "{own}");
    assert!(own.contains("  3 passing ("), "{own}");

    let model = MockModel::start(break_then_fix("math.js", "a + b;\n", "a - b;\n", "npm")).await;
    let (out, events) = exec_in(p, &model.base_url()).await;
    let tests = receipt_tests(&out, &events);
    assert_eq!(out.status.code(), Some(0), "{tests}");
    assert_eq!(
        count(&events, "gate_refused"),
        1,
        "the broken run is refused: {events:#?}"
    );
    let seen = summaries(&events);
    assert!(seen[0].starts_with("1 passing, 2 failing"), "{seen:?}");
    assert_eq!(tests["command"], "npm test");
    assert_eq!(tests["summary"], "3 passing, 0 failing", "{tests}");
    assert_eq!(tests["verified"], "exit_code_and_summary");
}
