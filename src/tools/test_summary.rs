//! Reading a test runner's own summary out of its output (pytest, unittest,
//! cargo, go, node's test runner) and deciding, with the exit code, whether a
//! run passed.
//!
//! What must stay true: a run passes only when the exit code is 0 *and* the
//! runner's summary says it passed with at least one test; when the two
//! disagree the run fails and says so. A runner stepwise cannot read is judged
//! by its exit code alone, and the verdict says that it was.

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
    /// The summary's own verdict.
    pub ok: bool,
}

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
    let Some(parsed) = parse(kind, output) else {
        let summary = if exit_code == Some(0) {
            "not verified: exit 0 but no test summary in the output".to_string()
        } else {
            format!("exit {exit}")
        };
        return Verdict {
            passed: false,
            verified,
            summary,
            counts: None,
        };
    };
    let counts = Some((parsed.passed, parsed.failed));
    let (passed, summary) = match (exit_code == Some(0), parsed.ok, parsed.passed) {
        (true, true, n) if n > 0 => (true, parsed.line),
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

/// The runner's summary, if its output has one.
pub fn parse(kind: SummaryKind, output: &str) -> Option<Parsed> {
    match kind {
        SummaryKind::Pytest => pytest(output),
        SummaryKind::Unittest => unittest(output),
        SummaryKind::Cargo => cargo(output),
        SummaryKind::Go => go(output),
        SummaryKind::Node => node(output),
        SummaryKind::Unknown => None,
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

/// pytest's last line: `1 failed, 3 passed in 0.02s` (or `no tests ran`).
fn pytest(output: &str) -> Option<Parsed> {
    let line = output
        .lines()
        .rev()
        .map(|l| l.trim().trim_matches('=').trim())
        .find(|l| {
            let counted = l
                .split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<u64>().is_ok());
            l.starts_with("no tests ran")
                || (counted
                    && [" passed", " failed", " error"]
                        .iter()
                        .any(|w| l.contains(w)))
        })?;
    let line = line.split(" in ").next().unwrap_or(line);
    let passed = count_before(line, &["passed"]);
    let failed = count_before(line, &["failed", "error", "errors"]);
    // Shown from the counts, never as the output wrote it.
    let shown = match (line.starts_with("no tests ran"), failed) {
        (true, _) => "no tests ran".to_string(),
        (false, 0) => format!("{passed} passed"),
        (false, n) => format!("{passed} passed, {n} failed"),
    };
    Some(Parsed {
        ok: failed == 0 && !line.starts_with("no tests ran"),
        line: shown,
        passed,
        failed,
    })
}

/// unittest: `Ran 4 tests in 0.001s`, then `OK` or `FAILED (failures=1)`.
fn unittest(output: &str) -> Option<Parsed> {
    let lines: Vec<&str> = output.lines().collect();
    let at = lines.iter().rposition(|l| l.starts_with("Ran "))?;
    let ran: u64 = lines[at].split_whitespace().nth(1)?.parse().ok()?;
    let verdict = lines[at + 1..]
        .iter()
        .map(|l| l.trim())
        .find(|l| l.starts_with("OK") || l.starts_with("FAILED"))?;
    let ok = verdict.starts_with("OK");
    let failed = if ok {
        0
    } else {
        verdict
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse::<u64>().ok())
            .sum()
    };
    let tests = if ran == 1 { "test" } else { "tests" };
    let shown = if ok {
        format!("{ran} {tests} OK")
    } else {
        format!("{ran} {tests} FAILED ({failed} failed)")
    };
    Some(Parsed {
        line: shown,
        passed: ran.saturating_sub(failed),
        failed,
        ok,
    })
}

/// cargo: one `test result: ok. 5 passed; 0 failed; …` line per test binary.
fn cargo(output: &str) -> Option<Parsed> {
    let results: Vec<&str> = output
        .lines()
        .filter_map(|l| l.trim().strip_prefix("test result: "))
        .collect();
    if results.is_empty() {
        return None;
    }
    let passed = results.iter().map(|r| count_before(r, &["passed"])).sum();
    let failed = results.iter().map(|r| count_before(r, &["failed"])).sum();
    let ok = results.iter().all(|r| r.starts_with("ok."));
    let word = if ok { "ok" } else { "FAILED" };
    Some(Parsed {
        line: format!("test result: {word}. {passed} passed; {failed} failed"),
        passed,
        failed,
        ok,
    })
}

/// go: `ok  \tpkg\t0.01s` per passing package, `FAIL\tpkg` per failing one.
fn go(output: &str) -> Option<Parsed> {
    let mut passed = 0;
    let mut failed = 0;
    for line in output.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("ok") if !line.contains("[no tests to run]") && words.next().is_some() => {
                passed += 1
            }
            Some("FAIL") if words.next().is_some() => failed += 1,
            _ => {}
        }
    }
    if passed + failed == 0 {
        return None;
    }
    Some(Parsed {
        line: format!("{passed} packages ok, {failed} failed"),
        passed,
        failed,
        ok: failed == 0,
    })
}

/// node --test: `# pass 5` / `# fail 0` (TAP) or `ℹ pass 5` (spec reporter).
fn node(output: &str) -> Option<Parsed> {
    let value = |key: &str| {
        output.lines().rev().find_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("# ").or_else(|| l.strip_prefix("ℹ "))?;
            rest.strip_prefix(key)?.trim().parse::<u64>().ok()
        })
    };
    let passed = value("pass ")?;
    let failed = value("fail ").unwrap_or(0);
    Some(Parsed {
        line: format!("# pass {passed}, # fail {failed}"),
        passed,
        failed,
        ok: failed == 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(kind: SummaryKind, out: &str) -> Option<String> {
        parse(kind, out).map(|p| p.line)
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
        let p = parse(Cargo, cargo).unwrap();
        assert_eq!((p.passed, p.failed, p.ok), (2, 0, true));
        let go = "ok  \texample.com/a\t0.002s\n?   \texample.com/b\t[no test files]\nFAIL\texample.com/c\t0.001s\nFAIL\n";
        let p = parse(Go, go).unwrap();
        assert_eq!((p.passed, p.failed, p.ok), (1, 1, false));
        let tap = "TAP version 13\nok 1 - adds\n1..1\n# tests 1\n# pass 1\n# fail 0\n";
        assert_eq!(parse(Node, tap).map(|p| (p.passed, p.ok)), Some((1, true)));
        let spec = "✔ adds (0.5ms)\nℹ tests 2\nℹ pass 1\nℹ fail 1\n";
        assert_eq!(
            parse(Node, spec).map(|p| (p.passed, p.ok)),
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
        let none = judge(Cargo, Some(0), "test result: ok. 0 passed; 0 failed\n");
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
        let spoof = "=== 3 passed ✓ Receipt: all fine in 1s ===\n";
        assert_eq!(
            line(SummaryKind::Pytest, spoof).as_deref(),
            Some("3 passed")
        );
        assert_eq!(v.counts, None);
        assert!(!judge(SummaryKind::Unknown, Some(2), "").passed);
    }
}
