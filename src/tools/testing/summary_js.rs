//! Reading the summaries of JavaScript's test runners: node's own
//! (`node --test`, TAP or spec form), mocha, jest, vitest and ava, each in
//! its own shape only and checked against the failure marks the same runner
//! prints beside it.
//!
//! What must stay true (as for every runner, see `test_summary`): two
//! summaries that disagree, a pass beside the runner's own failure marks, or
//! counts that do not add up to the runner's own total are a conflict, never
//! a pass; a failed test file or suite is a failure even when no single test
//! failed.

use crate::tools::testing::summary_lines::{Conflict, Parsed, counted_parts, one_summary, sum_of};

/// node --test: `# pass 5` / `# fail 0` (TAP) or `ℹ pass 5` (spec), once;
/// `ℹ tests N` is the sum of every outcome, a cancelled test is a failure,
/// and TAP's `not ok` lines or spec's `✖ failing tests:` need a failure.
pub fn node(output: &str) -> Result<Option<Parsed>, Conflict> {
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
    let one = |key: &str| -> Result<Option<u64>, Conflict> {
        let all = values(key);
        match all.last() {
            Some(&last) if all.iter().any(|&v| v != last) => Err(Conflict(
                "node printed more than one set of totals, and they disagree".into(),
            )),
            last => Ok(last.copied()),
        }
    };
    let Some(passed) = one("pass ")? else {
        return Ok(None);
    };
    let fail = one("fail ")?.unwrap_or(0);
    let cancelled = one("cancelled ")?.unwrap_or(0);
    let skipped = one("skipped ")?.unwrap_or(0);
    let todo = one("todo ")?.unwrap_or(0);
    if let Some(tests) = one("tests ")?
        && tests != passed + fail + cancelled + skipped + todo
    {
        return Err(Conflict(format!(
            "node counted {tests} tests but its outcomes add up to {}",
            passed + fail + cancelled + skipped + todo
        )));
    }
    let failed = fail + cancelled;
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
    if failed == 0 && output.lines().any(|l| l.trim() == "✖ failing tests:") {
        return Err(Conflict(
            "node listed failing tests, then `fail 0`".to_string(),
        ));
    }
    Ok(Some(Parsed {
        line: format!("# pass {passed}, # fail {failed}"),
        passed,
        failed,
        skipped,
        ok: failed == 0,
    }))
}

/// `N word` alone on a line (leading spaces allowed): its count.
fn alone(line: &str, word: &str) -> Option<u64> {
    let (n, rest) = line.trim().split_once(' ')?;
    (rest == word).then(|| n.parse().ok()).flatten()
}

/// mocha's `N passing (2s)` line: its count, when the rest is a duration.
fn mocha_passing(line: &str) -> Option<u64> {
    let (n, rest) = line.trim().split_once(' ')?;
    let time = rest.strip_prefix("passing (")?.strip_suffix(')')?;
    let digits = time.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &time[digits.len()..];
    let timed = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
        && ["ms", "s", "m", "h"].contains(&unit);
    timed.then(|| n.parse().ok()).flatten()
}

/// mocha (the spec, dot and list reporters' epilogue): `N passing (2s)`,
/// then `N pending` and `N failing` when there are any. A failure mark of
/// the spec reporter (`  1) name`) needs a failing count.
pub fn mocha(output: &str) -> Result<Option<Parsed>, Conflict> {
    let lines: Vec<&str> = output.lines().collect();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(passed) = mocha_passing(line) else {
            continue;
        };
        let (mut pending, mut failing) = (0, 0);
        for next in lines[at + 1..].iter().take(2) {
            if let Some(n) = alone(next, "pending") {
                pending = n;
            } else if let Some(n) = alone(next, "failing") {
                failing = n;
            } else {
                break;
            }
        }
        found.push(Parsed {
            line: format!("{passed} passing, {failing} failing"),
            passed,
            failed: failing,
            skipped: pending,
            ok: failing == 0,
        });
    }
    let summary = one_summary(found, "mocha")?;
    if let Some(p) = &summary {
        let marked = lines.iter().any(|l| {
            let t = l.trim_start();
            let digits = t.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && t[digits..].starts_with(") ") && l.starts_with("  ")
        });
        if p.ok && marked {
            return Err(Conflict(
                "mocha marked a failing test (`1) …`), then a summary without failures".into(),
            ));
        }
    }
    Ok(summary)
}

/// jest: `Tests:       1 failed, 41 passed, 42 total` at the start of a line
/// (a test's own `console.log` is printed indented), its outcomes adding up
/// to the total; `Test Suites:` with a failed suite fails the run as well.
pub fn jest(output: &str) -> Result<Option<Parsed>, Conflict> {
    const TESTS: [&str; 6] = ["failed", "skipped", "todo", "passed", "pending", "total"];
    let mut found = Vec::new();
    let mut suites_failed = Vec::new();
    for line in output.lines() {
        if let Some(rest) = line.strip_prefix("Test Suites:") {
            if let Some(parts) = counted_parts(rest.trim(), ", ", &TESTS) {
                suites_failed.push(sum_of(&parts, &["failed"]));
            }
            continue;
        }
        let Some(rest) = line.strip_prefix("Tests:") else {
            continue;
        };
        let Some(parts) = counted_parts(rest.trim(), ", ", &TESTS) else {
            continue;
        };
        let total = sum_of(&parts, &["total"]);
        let failed = sum_of(&parts, &["failed"]);
        let passed = sum_of(&parts, &["passed"]);
        let skipped = sum_of(&parts, &["skipped", "pending", "todo"]);
        if passed + failed + skipped != total {
            return Err(Conflict(format!(
                "jest counted {total} tests but its outcomes add up to {}",
                passed + failed + skipped
            )));
        }
        found.push(Parsed {
            line: format!("{passed} passed, {failed} failed"),
            passed,
            failed,
            skipped,
            ok: failed == 0,
        });
    }
    let summary = one_summary(found, "jest")?;
    let suites = suites_failed.iter().max().copied().unwrap_or(0);
    Ok(summary.map(|p| with_failed_files(p, suites, "test suite")))
}

/// A summary whose runner also says `files` test files (or suites) failed:
/// not ok, and the line says so.
fn with_failed_files(p: Parsed, files: u64, what: &str) -> Parsed {
    if files == 0 {
        return p;
    }
    let s = if files == 1 { "" } else { "s" };
    Parsed {
        line: format!("{}, {files} {what}{s} failed", p.line),
        ok: false,
        ..p
    }
}

/// A vitest summary row (`      Tests  1 failed | 41 passed (42)`), after
/// its title: the counts and the total in brackets, or `no tests`.
fn vitest_row(rest: &str) -> Option<(Vec<(u64, &str)>, u64)> {
    const WORDS: [&str; 5] = ["failed", "passed", "expected fail", "skipped", "todo"];
    let rest = rest.trim();
    if rest == "no tests" {
        return Some((Vec::new(), 0));
    }
    let (counts, total) = rest.strip_suffix(')')?.rsplit_once(" (")?;
    Some((counted_parts(counts, " | ", &WORDS)?, total.parse().ok()?))
}

/// vitest: `Tests  41 passed (42)` and `Test Files  1 passed (1)`, every
/// test accounted for; a failed file, or a `FAIL` mark beside a summary
/// without failures, is no pass.
pub fn vitest(output: &str) -> Result<Option<Parsed>, Conflict> {
    let mut found = Vec::new();
    let mut files_failed = Vec::new();
    for line in output.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("Test Files ") {
            if let Some((parts, _)) = vitest_row(rest) {
                files_failed.push(sum_of(&parts, &["failed"]));
            }
            continue;
        }
        let Some((parts, total)) = t.strip_prefix("Tests ").and_then(vitest_row) else {
            continue;
        };
        let failed = sum_of(&parts, &["failed"]);
        let passed = sum_of(&parts, &["passed"]);
        let others = sum_of(&parts, &["expected fail", "skipped", "todo"]);
        if passed + failed + others > total || (failed == 0 && passed + others < total) {
            return Err(Conflict(format!(
                "vitest counted {total} tests but its outcomes add up to {}",
                passed + failed + others
            )));
        }
        found.push(Parsed {
            line: format!("{passed} passed, {failed} failed"),
            passed,
            failed,
            skipped: sum_of(&parts, &["skipped", "todo"]),
            ok: failed == 0,
        });
    }
    let summary = one_summary(found, "vitest")?;
    let files = files_failed.iter().max().copied().unwrap_or(0);
    let summary = summary.map(|p| with_failed_files(p, files, "test file"));
    if let Some(p) = &summary {
        let marked = output.lines().any(|l| l.trim_start().starts_with("FAIL "));
        if p.ok && marked {
            return Err(Conflict(
                "vitest marked a test FAIL, then a summary without failures".into(),
            ));
        }
    }
    Ok(summary)
}

/// One line of ava's closing block: what it counts and whether that is a
/// failure (`2 tests passed`, `1 test failed`, `1 known failure`, …).
fn ava_line(line: &str) -> Option<(u64, &'static str)> {
    const FORMS: [(&str, &str); 14] = [
        ("test passed", "passed"),
        ("tests passed", "passed"),
        ("test failed", "failed"),
        ("tests failed", "failed"),
        ("hook failed", "failed"),
        ("hooks failed", "failed"),
        ("uncaught exception", "failed"),
        ("uncaught exceptions", "failed"),
        ("unhandled rejection", "failed"),
        ("unhandled rejections", "failed"),
        ("test skipped", "skipped"),
        ("tests skipped", "skipped"),
        ("test todo", "skipped"),
        ("tests todo", "skipped"),
    ];
    let (n, rest) = line.trim().split_once(' ')?;
    let n = n.parse().ok()?;
    let rest = rest.trim_end();
    if rest == "known failure" || rest == "known failures" {
        return Some((n, "known"));
    }
    if rest.ends_with("remained pending after a timeout") {
        return Some((n, "failed"));
    }
    FORMS
        .iter()
        .find(|(form, _)| *form == rest)
        .map(|(_, what)| (n, *what))
}

/// ava: its closing block, one count a line (`41 tests passed`, or
/// `1 test failed` without a passed count); a `✘ [fail]:` mark beside a
/// block without failures is no pass.
pub fn ava(output: &str) -> Result<Option<Parsed>, Conflict> {
    let mut found = Vec::new();
    let mut block: Vec<(u64, &str)> = Vec::new();
    let lines: Vec<&str> = output.lines().chain([""]).collect();
    for line in lines {
        if let Some(count) = ava_line(line) {
            block.push(count);
            continue;
        }
        if block.is_empty() {
            continue;
        }
        let passed = sum_of(&block, &["passed"]);
        let failed = sum_of(&block, &["failed"]);
        found.push(Parsed {
            line: format!("{passed} passed, {failed} failed"),
            passed,
            failed,
            skipped: sum_of(&block, &["skipped"]),
            ok: failed == 0,
        });
        block.clear();
    }
    let summary = one_summary(found, "ava")?;
    if let Some(p) = &summary {
        let marked = output
            .lines()
            .any(|l| l.trim_start().starts_with("✘ [fail]:"));
        if p.ok && marked {
            return Err(Conflict(
                "ava marked a test as failed, then a summary without failures".into(),
            ));
        }
    }
    Ok(summary)
}
