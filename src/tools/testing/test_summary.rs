//! Reading a test runner's own summary out of its output (pytest, unittest,
//! cargo, go here; node's test runner, mocha, jest, vitest and ava in
//! `summary_js`) and deciding, with the exit code, whether a
//! run passed.
//!
//! What must stay true: a run passes only when the exit code is 0 *and* the
//! runner's summary says it passed with at least one test that ran (skipped
//! tests do not count); when the two disagree the run fails and says so. A
//! summary is read only in the runner's own shape and checked against what
//! else the output says (cargo's `running N tests` lines, pytest's and
//! unittest's failure lines, go's `--- FAIL` lines, TAP's `not ok` lines):
//! two summaries that disagree, or a pass after a failure of the same
//! runner, are "conflicting test summaries", a failed run, so no line a test
//! prints can talk the parser into a count the runner never printed. A
//! runner stepwise cannot read is judged by its exit code alone, and the
//! verdict says that it was.

use serde::Serialize;

/// Whose summary format a command's output is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SummaryKind {
    Pytest,
    Unittest,
    Cargo,
    Go,
    Node,
    Mocha,
    Jest,
    Vitest,
    Ava,
    /// No known summary: the exit code alone decides.
    Unknown,
}

use crate::tools::testing::summary_js;
pub use crate::tools::testing::summary_lines::{Conflict, Parsed};
use crate::tools::testing::summary_lines::{count_before, counted_parts, one_summary, sum_of};

/// How far stepwise could check a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verified {
    /// The exit code and the runner's summary agree.
    ExitCodeAndSummary,
    /// Unknown runner: only the exit code was checked.
    ExitCodeOnly,
}

/// The verdict on one finished (not timed-out) run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub passed: bool,
    pub verified: Verified,
    /// What the receipt and the model are told, e.g. `5 passed`.
    pub summary: String,
    /// The counts stepwise parsed, when it could.
    pub counts: Option<(u64, u64)>,
}

/// Judge a run by its exit code and its output.
pub fn judge(kind: SummaryKind, exit_code: Option<i32>, output: &str) -> Verdict {
    let exit = exit_code.map_or("?".to_string(), |c| c.to_string());
    if kind == SummaryKind::Unknown {
        let passed = exit_code == Some(0);
        // A failure is a failure whatever the runner: only a pass is unverified.
        let summary = match passed {
            true => "unverified: exit code only (no runner summary known)".to_string(),
            false => format!("failed (exit {exit})"),
        };
        return Verdict {
            passed,
            verified: Verified::ExitCodeOnly,
            summary,
            counts: None,
        };
    }
    let verified = Verified::ExitCodeAndSummary;
    let failed = |summary: String| Verdict {
        passed: false,
        verified,
        summary,
        counts: None,
    };
    let parsed = match parse(kind, output) {
        Err(Conflict(why)) => return failed(format!("conflicting test summaries: {why}")),
        Ok(None) if exit_code == Some(0) => {
            return failed("not verified: exit 0 but no test summary in the output".into());
        }
        Ok(None) => return failed(format!("exit {exit}")),
        Ok(Some(parsed)) => parsed,
    };
    let counts = Some((parsed.passed, parsed.failed));
    let (passed, summary) = match (exit_code == Some(0), parsed.ok, parsed.passed) {
        (true, true, n) if n > 0 => (true, parsed.line),
        (true, true, _) if parsed.skipped > 0 => (
            false,
            format!(
                "0 tests ran ({} skipped), which is not a pass",
                parsed.skipped
            ),
        ),
        (true, true, _) => (
            false,
            format!("{}: no test ran, which is not a pass", parsed.line),
        ),
        (true, false, _) => (
            false,
            format!(
                "{}, yet exit 0: exit code and summary disagree",
                parsed.line
            ),
        ),
        (false, true, _) => (
            false,
            format!(
                "{}, yet exit {exit}: exit code and summary disagree",
                parsed.line
            ),
        ),
        (false, false, _) => (false, parsed.line),
    };
    Verdict {
        passed,
        verified,
        summary,
        counts,
    }
}

/// The runner's summary, if its output has one, checked against the rest
/// of the output.
pub fn parse(kind: SummaryKind, output: &str) -> Result<Option<Parsed>, Conflict> {
    match kind {
        SummaryKind::Pytest => pytest(output),
        SummaryKind::Unittest => unittest(output),
        SummaryKind::Cargo => cargo(output),
        SummaryKind::Go => go(output),
        SummaryKind::Node => summary_js::node(output),
        SummaryKind::Mocha => summary_js::mocha(output),
        SummaryKind::Jest => summary_js::jest(output),
        SummaryKind::Vitest => summary_js::vitest(output),
        SummaryKind::Ava => summary_js::ava(output),
        SummaryKind::Unknown => Ok(None),
    }
}

/// pytest's final line, in its own shape: counts of outcomes and the time,
/// `1 failed, 3 passed in 0.02s` (maybe between `=` rules), or `no tests ran
/// in 0.01s`.
fn pytest_line(line: &str) -> Option<Parsed> {
    let l = line.trim().trim_matches('=').trim();
    let (counts, time) = l.rsplit_once(" in ")?;
    let time = time.split_whitespace().next()?;
    let seconds = time.strip_suffix('s')?;
    if seconds.parse::<f64>().is_err() && !seconds.contains(':') {
        return None;
    }
    if counts == "no tests ran" {
        return Some(Parsed {
            line: "no tests ran".into(),
            passed: 0,
            failed: 0,
            skipped: 0,
            ok: false,
        });
    }
    // Every outcome pytest counts (subtests since pytest 9, or its plugin).
    const OUTCOMES: [&str; 14] = [
        "passed",
        "failed",
        "error",
        "errors",
        "skipped",
        "deselected",
        "xfailed",
        "xpassed",
        "warning",
        "warnings",
        "rerun",
        "subtests passed",
        "subtests failed",
        "subtests skipped",
    ];
    let parts = counted_parts(counts, ", ", &OUTCOMES)?;
    let passed = sum_of(&parts, &["passed"]);
    let failed = sum_of(&parts, &["failed", "error", "errors", "subtests failed"]);
    let skipped = sum_of(&parts, &["skipped"]);
    let subtests = sum_of(&parts, &["subtests passed"]);
    // Shown from the counts, never as the output wrote it.
    let mut shown = match failed {
        0 => format!("{passed} passed"),
        n => format!("{passed} passed, {n} failed"),
    };
    if subtests > 0 {
        shown.push_str(&format!(" ({subtests} subtests passed)"));
    }
    Some(Parsed {
        ok: failed == 0,
        line: shown,
        passed,
        failed,
        skipped,
    })
}

/// pytest: its final line; the `FAILED path::test` lines of its short
/// summary must not stand beside a final line with no failure.
fn pytest(output: &str) -> Result<Option<Parsed>, Conflict> {
    let found: Vec<Parsed> = output.lines().filter_map(pytest_line).collect();
    let summary = one_summary(found, "pytest")?;
    if let Some(p) = &summary {
        // Only the short summary's lines name failed tests (`FAILED t.py::x`);
        // a log line at ERROR level is no failure.
        let failures = output
            .lines()
            .skip_while(|l| !l.contains("short test summary info"))
            .filter(|l| {
                ["FAILED ", "ERROR ", "SUBFAILED"]
                    .iter()
                    .any(|mark| l.starts_with(mark))
            })
            .filter(|l| l.contains("::") || l.contains(".py"))
            .count();
        if p.ok && failures > 0 {
            return Err(Conflict(format!(
                "pytest reported {failures} failed test(s), then a summary without failures"
            )));
        }
    }
    Ok(summary)
}

/// unittest: `Ran 4 tests in 0.001s`, then `OK` (maybe `OK (skipped=1)`) or
/// `FAILED (failures=1)`.
fn unittest(output: &str) -> Result<Option<Parsed>, Conflict> {
    let lines: Vec<&str> = output.lines().collect();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("Ran ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(ran), Some("test" | "tests"), Some("in")) =
            (words.next(), words.next(), words.next())
        else {
            continue;
        };
        let Ok(ran) = ran.parse::<u64>() else {
            continue;
        };
        // The verdict is the first non-empty line after it.
        let Some(verdict) = lines[at + 1..]
            .iter()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())
        else {
            continue;
        };
        let ok = verdict == "OK" || verdict.starts_with("OK (");
        if !ok && !verdict.starts_with("FAILED (") {
            continue;
        }
        let count = |key: &str| {
            verdict
                .split(['(', ')', ','])
                .map(str::trim)
                .filter_map(|part| part.strip_prefix(key))
                .filter_map(|n| n.parse::<u64>().ok())
                .sum::<u64>()
        };
        let failed = count("failures=") + count("errors=") + count("unexpected successes=");
        let skipped = count("skipped=");
        let tests = if ran == 1 { "test" } else { "tests" };
        let line = if ok {
            format!("{ran} {tests} OK")
        } else {
            format!("{failed} of {ran} {tests} failed")
        };
        let line = if skipped > 0 {
            format!("{line} ({skipped} skipped)")
        } else {
            line
        };
        found.push(Parsed {
            line,
            passed: ran.saturating_sub(failed).saturating_sub(skipped),
            failed,
            skipped,
            ok,
        });
    }
    one_summary(found, "unittest")
}

/// cargo: one `test result: ok. 5 passed; 0 failed; 1 ignored; …` line per
/// test binary, each after its own `running N tests` line with N its total.
fn cargo(output: &str) -> Result<Option<Parsed>, Conflict> {
    let mut running: Vec<u64> = Vec::new();
    let mut results: Vec<&str> = Vec::new();
    for line in output.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("running ") {
            let mut words = rest.split_whitespace();
            if let (Some(n), Some("test" | "tests"), None) =
                (words.next(), words.next(), words.next())
                && let Ok(n) = n.parse::<u64>()
            {
                running.push(n);
            }
        } else if let Some(result) = line.strip_prefix("test result: ") {
            results.push(result);
        }
    }
    if results.is_empty() {
        return Ok(None);
    }
    if results.len() != running.len() {
        return Err(Conflict(format!(
            "cargo printed {} `test result` lines for {} test binaries",
            results.len(),
            running.len()
        )));
    }
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for (result, total) in results.iter().zip(&running) {
        let p = count_before(result, &["passed"]);
        let f = count_before(result, &["failed"]);
        let i = count_before(result, &["ignored"]);
        let m = count_before(result, &["measured"]);
        if p + f + i + m != *total {
            return Err(Conflict(format!(
                "a cargo test binary ran {total} tests but its result counts {}",
                p + f + i + m
            )));
        }
        let said_ok = result.starts_with("ok.");
        if said_ok != (f == 0) {
            return Err(Conflict(format!(
                "cargo's result {result:?} contradicts itself"
            )));
        }
        (passed, failed, skipped) = (passed + p, failed + f, skipped + i);
    }
    let ok = failed == 0;
    let word = if ok { "ok" } else { "FAILED" };
    Ok(Some(Parsed {
        line: format!("test result: {word}. {passed} passed; {failed} failed"),
        passed,
        failed,
        skipped,
        ok,
    }))
}

/// go: `ok  \tpkg\t0.01s` per passing package, `FAIL\tpkg` per failing one;
/// a `--- FAIL:` line needs a failing package, and no package both passes
/// and fails.
fn go(output: &str) -> Result<Option<Parsed>, Conflict> {
    let mut ok_packages: Vec<&str> = Vec::new();
    let mut failed_packages: Vec<&str> = Vec::new();
    for line in output.lines() {
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("ok"), Some(pkg)) if !line.contains("[no tests to run]") => ok_packages.push(pkg),
            (Some("FAIL"), Some(pkg)) => failed_packages.push(pkg),
            _ => {}
        }
    }
    let (passed, failed) = (ok_packages.len() as u64, failed_packages.len() as u64);
    if passed + failed == 0 {
        return Ok(None);
    }
    if let Some(both) = ok_packages.iter().find(|p| failed_packages.contains(p)) {
        return Err(Conflict(format!("go reported {both} both ok and FAIL")));
    }
    let test_failures = output
        .lines()
        .filter(|l| l.trim_start().starts_with("--- FAIL:"))
        .count();
    if test_failures > 0 && failed == 0 {
        return Err(Conflict(format!(
            "go reported {test_failures} failed test(s) but every package ok"
        )));
    }
    Ok(Some(Parsed {
        line: format!("{passed} packages ok, {failed} failed"),
        passed,
        failed,
        skipped: 0,
        ok: failed == 0,
    }))
}

#[cfg(test)]
#[path = "test_summary_tests.rs"]
mod tests;
