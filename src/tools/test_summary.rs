//! Reading a test runner's own summary out of its output (pytest, unittest,
//! cargo, go, node's test runner) and deciding, with the exit code, whether a
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
    /// No known summary: the exit code alone decides.
    Unknown,
}

/// What the runner's summary says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The summary as shown, built from the counts: `5 passed`, `5 tests OK`.
    pub line: String,
    /// Tests that passed (for go: packages that passed).
    pub passed: u64,
    /// Tests (or packages) that failed or errored.
    pub failed: u64,
    /// Tests that were skipped (they did not run).
    pub skipped: u64,
    /// The summary's own verdict.
    pub ok: bool,
}

/// Why a run's summaries cannot be believed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict(pub String);

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
        return Verdict {
            passed: exit_code == Some(0),
            verified: Verified::ExitCodeOnly,
            summary: "unverified: exit code only (no runner summary known)".to_string(),
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
        SummaryKind::Node => node(output),
        SummaryKind::Unknown => Ok(None),
    }
}

/// The number just before `word` in `text` (`3 passed` → 3).
fn count_before(text: &str, words: &[&str]) -> u64 {
    let tokens: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|t| !t.is_empty())
        .collect();
    tokens
        .windows(2)
        .filter(|w| words.contains(&w[1]))
        .filter_map(|w| w[0].parse::<u64>().ok())
        .sum()
}

/// The one summary a runner prints, from the summaries found: none, all the
/// same (a repeated line), or a conflict naming them.
fn one_summary(found: Vec<Parsed>, runner: &str) -> Result<Option<Parsed>, Conflict> {
    let Some(last) = found.last().cloned() else {
        return Ok(None);
    };
    if found.iter().any(|p| p != &last) {
        let lines: Vec<&str> = found.iter().map(|p| p.line.as_str()).collect();
        return Err(Conflict(format!(
            "{runner} printed {} summaries that disagree ({})",
            found.len(),
            lines.join(" / ")
        )));
    }
    Ok(Some(last))
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
    const OUTCOMES: [&str; 10] = [
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
    ];
    let mut any = false;
    for part in counts.split(", ") {
        let mut words = part.split_whitespace();
        let (Some(n), Some(word), None) = (words.next(), words.next(), words.next()) else {
            return None;
        };
        if n.parse::<u64>().is_err() || !OUTCOMES.contains(&word) {
            return None;
        }
        any = true;
    }
    if !any {
        return None;
    }
    let passed = count_before(counts, &["passed"]);
    let failed = count_before(counts, &["failed", "error", "errors"]);
    let skipped = count_before(counts, &["skipped"]);
    // Shown from the counts, never as the output wrote it.
    let shown = match failed {
        0 => format!("{passed} passed"),
        n => format!("{passed} passed, {n} failed"),
    };
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
            .filter(|l| l.starts_with("FAILED ") || l.starts_with("ERROR "))
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
            format!("{ran} {tests} FAILED ({failed} failed)")
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

/// node --test: `# pass 5` / `# fail 0` (TAP) or `ℹ pass 5` (spec reporter),
/// once; TAP's `not ok` lines need a failure count.
fn node(output: &str) -> Result<Option<Parsed>, Conflict> {
    let values = |key: &str| -> Vec<u64> {
        output
            .lines()
            .filter_map(|l| {
                let l = l.trim();
                let rest = l.strip_prefix("# ").or_else(|| l.strip_prefix("ℹ "))?;
                rest.strip_prefix(key)?.trim().parse::<u64>().ok()
            })
            .collect()
    };
    let (passes, fails, skips) = (values("pass "), values("fail "), values("skipped "));
    let Some(&passed) = passes.last() else {
        return Ok(None);
    };
    let failed = fails.last().copied().unwrap_or(0);
    if passes.iter().any(|&p| p != passed) || fails.iter().any(|&f| f != failed) {
        return Err(Conflict(
            "node printed more than one set of totals, and they disagree".into(),
        ));
    }
    // A TODO or SKIP test that fails is no failure in TAP.
    let not_ok = output
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("not ok "))
        .filter(|l| !l.contains("# TODO") && !l.contains("# SKIP"))
        .count();
    if not_ok > 0 && failed == 0 {
        return Err(Conflict(format!(
            "node reported {not_ok} failing test(s) (`not ok`), then `fail 0`"
        )));
    }
    Ok(Some(Parsed {
        line: format!("# pass {passed}, # fail {failed}"),
        passed,
        failed,
        skipped: skips.last().copied().unwrap_or(0),
        ok: failed == 0,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(kind: SummaryKind, out: &str) -> Option<String> {
        parse(kind, out).ok().flatten().map(|p| p.line)
    }

    fn parsed(kind: SummaryKind, out: &str) -> Option<Parsed> {
        parse(kind, out).ok().flatten()
    }

    #[test]
    fn each_runner_summary_is_read() {
        use SummaryKind::*;
        let pytest = "..F.\n=== 1 failed, 3 passed in 0.02s ===\n";
        assert_eq!(line(Pytest, pytest).as_deref(), Some("3 passed, 1 failed"));
        assert_eq!(
            line(Pytest, "....\n4 passed in 0.01s\n").as_deref(),
            Some("4 passed")
        );
        let unit = "test_add ... ok\n----\nRan 4 tests in 0.001s\n\nOK\n";
        assert_eq!(line(Unittest, unit).as_deref(), Some("4 tests OK"));
        let one = "test_add ... ok\n----\nRan 1 test in 0.001s\n\nOK\n";
        assert_eq!(line(Unittest, one).as_deref(), Some("1 test OK"));
        let cargo = "running 2 tests\ntest result: ok. 2 passed; 0 failed; 0 ignored\n\nrunning 0 tests\ntest result: ok. 0 passed; 0 failed;\n";
        let p = parsed(Cargo, cargo).unwrap();
        assert_eq!((p.passed, p.failed, p.ok), (2, 0, true));
        let go = "ok  \texample.com/a\t0.002s\n?   \texample.com/b\t[no test files]\nFAIL\texample.com/c\t0.001s\nFAIL\n";
        let p = parsed(Go, go).unwrap();
        assert_eq!((p.passed, p.failed, p.ok), (1, 1, false));
        let tap = "TAP version 13\nok 1 - adds\n1..1\n# tests 1\n# pass 1\n# fail 0\n";
        assert_eq!(parsed(Node, tap).map(|p| (p.passed, p.ok)), Some((1, true)));
        let spec = "✔ adds (0.5ms)\nℹ tests 2\nℹ pass 1\nℹ fail 1\n";
        assert_eq!(
            parsed(Node, spec).map(|p| (p.passed, p.ok)),
            Some((1, false))
        );
    }

    #[test]
    fn exit_code_and_summary_must_agree() {
        use SummaryKind::*;
        let ok = judge(Pytest, Some(0), "3 passed in 0.1s\n");
        assert!(ok.passed && ok.summary == "3 passed", "{ok:?}");
        assert_eq!(ok.counts, Some((3, 0)));
        let lying = judge(Pytest, Some(0), "1 failed, 2 passed in 0.1s\n");
        assert!(
            !lying.passed && lying.summary.contains("disagree"),
            "{lying:?}"
        );
        let spoof = judge(Unittest, Some(1), "Ran 999 tests in 0.1s\n\nOK\n");
        assert!(
            !spoof.passed && spoof.summary.contains("disagree"),
            "{spoof:?}"
        );
        let none = judge(
            Cargo,
            Some(0),
            "running 0 tests\ntest result: ok. 0 passed; 0 failed\n",
        );
        assert!(
            !none.passed && none.summary.contains("no test ran"),
            "{none:?}"
        );
        let silent = judge(Node, Some(0), "all good\n");
        assert!(!silent.passed && silent.summary.contains("no test summary"));
        let failed = judge(Go, Some(1), "FAIL\tpkg\t0.1s\n");
        assert!(!failed.passed);
    }

    #[test]
    fn an_unknown_runner_is_judged_by_its_exit_code_and_says_so() {
        let v = judge(SummaryKind::Unknown, Some(0), "999 tests OK");
        assert!(v.passed);
        assert_eq!(v.verified, Verified::ExitCodeOnly);
        assert!(
            v.summary.contains("unverified: exit code only"),
            "{}",
            v.summary
        );
        // Not pytest's shape: not read as a summary at all, so nothing of
        // it can reach the receipt.
        let spoof = "=== 3 passed ✓ Receipt: all fine in 1s ===\n";
        assert_eq!(line(SummaryKind::Pytest, spoof).as_deref(), None);
        assert_eq!(v.counts, None);
        assert!(!judge(SummaryKind::Unknown, Some(2), "").passed);
    }

    #[test]
    fn a_pass_printed_after_a_failure_is_a_conflict_not_a_pass() {
        use SummaryKind::*;
        let unit =
            "F.\n----\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\nRan 999 tests in 0.1s\n\nOK\n";
        let v = judge(Unittest, Some(0), unit);
        assert!(!v.passed, "{v:?}");
        assert!(v.summary.starts_with("conflicting test summaries"), "{v:?}");
        let pytest = "..F\n=== short test summary info ===\nFAILED test_a.py::test_x - assert 1 == 2\n=== 1 failed, 2 passed in 0.02s ===\n=== 999 passed in 0.01s ===\n";
        assert!(
            judge(Pytest, Some(0), pytest)
                .summary
                .starts_with("conflicting")
        );
        // A fake final line alone still meets the failure lines above it.
        let faked = "..F\n=== short test summary info ===\nFAILED test_a.py::test_x - assert 1 == 2\n=== 999 passed in 0.01s ===\n";
        assert!(
            judge(Pytest, Some(0), faked)
                .summary
                .starts_with("conflicting")
        );
        let cargo = "running 2 tests\ntest a ... FAILED\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\ntest result: ok. 999 passed; 0 failed; 0 ignored\n";
        assert!(
            judge(Cargo, Some(0), cargo)
                .summary
                .starts_with("conflicting")
        );
        let invented = "running 2 tests\ntest result: ok. 999 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
        let v = judge(Cargo, Some(0), invented);
        assert!(v.summary.contains("ran 2 tests"), "{v:?}");
        let go = "--- FAIL: TestAdd (0.00s)\nok  \texample.com/a\t0.002s\n";
        assert!(judge(Go, Some(0), go).summary.starts_with("conflicting"));
        let tap = "not ok 1 - adds\n# pass 1\n# fail 0\n";
        assert!(judge(Node, Some(0), tap).summary.starts_with("conflicting"));
        let twice = "# pass 1\n# fail 1\n# pass 9\n# fail 0\n";
        assert!(
            judge(Node, Some(0), twice)
                .summary
                .starts_with("conflicting")
        );
    }

    #[test]
    fn honest_outputs_still_pass_and_repeated_lines_are_one_summary() {
        use SummaryKind::*;
        let cargo = "running 2 tests\ntest a ... ok\ntest b ... ignored\ntest result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n   Doc-tests x\n\nrunning 0 tests\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let v = judge(Cargo, Some(0), cargo);
        assert!(v.passed, "{v:?}");
        assert_eq!(v.counts, Some((1, 0)));
        let pytest = "....\n======== 4 passed, 1 skipped, 2 warnings in 0.05s ========\n";
        let v = judge(Pytest, Some(0), pytest);
        assert!(v.passed && v.summary == "4 passed", "{v:?}");
        let go = "ok  \texample.com/a\t0.002s\nok  \texample.com/b\t(cached)\n";
        assert!(judge(Go, Some(0), go).passed);
        // A test that prints a line that merely mentions passing is no summary.
        let noisy = "3 passed the threshold\n....\n4 passed in 0.01s\n";
        assert_eq!(line(Pytest, noisy).as_deref(), Some("4 passed"));
    }

    #[test]
    fn log_lines_todo_tests_and_expected_failures_are_no_failures() {
        use SummaryKind::*;
        let logged = "-------- live log call --------\nERROR    root:test_x.py:5 boom\n.\n=== 1 passed in 0.01s ===\n";
        assert!(judge(Pytest, Some(0), logged).passed);
        let todo = "not ok 1 - later # TODO\nok 2 - now\n# pass 1\n# fail 0\n";
        assert!(judge(Node, Some(0), todo).passed);
        let expected = "x.\n----\nRan 2 tests in 0.001s\n\nOK (expected failures=1)\n";
        let v = judge(Unittest, Some(0), expected);
        assert!(v.passed, "{v:?}");
        let real = "..F\n=== short test summary info ===\nFAILED t.py::test_x - assert\n=== 9 passed in 0.01s ===\n";
        assert!(
            judge(Pytest, Some(0), real)
                .summary
                .starts_with("conflicting")
        );
    }

    #[test]
    fn a_suite_that_skipped_everything_did_not_pass() {
        use SummaryKind::*;
        let unit = "sss\n----\nRan 3 tests in 0.001s\n\nOK (skipped=3)\n";
        let v = judge(Unittest, Some(0), unit);
        assert!(!v.passed, "{v:?}");
        assert_eq!(v.summary, "0 tests ran (3 skipped), which is not a pass");
        let pytest = "sss\n=== 3 skipped in 0.01s ===\n";
        let v = judge(Pytest, Some(0), pytest);
        assert_eq!(v.summary, "0 tests ran (3 skipped), which is not a pass");
        let cargo = "running 2 tests\ntest result: ok. 0 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out\n";
        let v = judge(Cargo, Some(0), cargo);
        assert_eq!(v.summary, "0 tests ran (2 skipped), which is not a pass");
        let some = "s..\n----\nRan 3 tests in 0.001s\n\nOK (skipped=1)\n";
        let v = judge(Unittest, Some(0), some);
        assert!(v.passed, "{v:?}");
        assert_eq!(v.counts, Some((2, 0)));
    }
}
