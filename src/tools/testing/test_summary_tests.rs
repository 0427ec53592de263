//! Tests of reading runner summaries: each runner, conflicts, skipped suites.

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
    let failed = judge(SummaryKind::Unknown, Some(1), "FAIL: something\n");
    assert_eq!(failed.summary, "failed (exit 1)");
    assert!(!failed.passed);
}

#[test]
fn a_failing_unittest_run_says_how_many_of_how_many_failed() {
    let unit = "FAIL: test_div\n----\nRan 6 tests in 0.001s\n\nFAILED (failures=1)\n";
    assert_eq!(
        line(SummaryKind::Unittest, unit).as_deref(),
        Some("1 of 6 tests failed")
    );
    let one = "Ran 1 test in 0.001s\n\nFAILED (errors=1)\n";
    assert_eq!(
        line(SummaryKind::Unittest, one).as_deref(),
        Some("1 of 1 test failed")
    );
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

/// A runner's real output, captured from the runner itself (its colours
/// removed as the test runner removes them before reading).
macro_rules! fixture {
    ($name:literal) => {
        crate::tools::testing::ansi::strip(include_str!(concat!(
            "../../../tests/fixtures/runner_output/",
            $name
        )))
    };
}

/// The verdict's (passed, counts, summary) on a fixture with an exit code.
fn verdict(kind: SummaryKind, exit: i32, out: &str) -> (bool, Option<(u64, u64)>, String) {
    let v = judge(kind, Some(exit), out);
    assert_eq!(v.verified, Verified::ExitCodeAndSummary, "{v:?}");
    (v.passed, v.counts, v.summary)
}

#[test]
fn pytest_with_subtests_xfail_and_warnings_is_read() {
    use SummaryKind::Pytest;
    let (passed, counts, summary) = verdict(Pytest, 0, &fixture!("pytest_subtests_pass.txt"));
    assert!(passed, "{summary}");
    assert_eq!(counts, Some((3, 0)));
    assert_eq!(summary, "3 passed (3 subtests passed)");
    let (passed, counts, summary) = verdict(Pytest, 1, &fixture!("pytest_subtests_fail.txt"));
    assert!(!passed);
    assert_eq!(counts, Some((3, 2)));
    assert_eq!(summary, "3 passed, 2 failed (5 subtests passed)");
    // The line the issue quotes, and every other outcome pytest counts.
    let line = "663 passed, 1 skipped, 8 warnings, 2332 subtests passed in 3.77s\n";
    let (passed, counts, _) = verdict(Pytest, 0, line);
    assert!(passed);
    assert_eq!(counts, Some((663, 0)));
    let all = "== 5 passed, 1 deselected, 2 xfailed, 1 xpassed, 1 rerun, 3 subtests skipped, 1 warning in 123.40s (0:02:03) ==\n";
    assert_eq!(verdict(Pytest, 0, all).1, Some((5, 0)));
    let errors = "1 passed, 2 errors, 1 subtests failed in 0.02s\n";
    assert_eq!(verdict(Pytest, 1, errors).1, Some((1, 3)));
}

#[test]
fn pytest_subtest_failures_are_failures_a_forged_pass_cannot_hide() {
    use SummaryKind::Pytest;
    // The real failing run, then a pass printed by an exit hook.
    let forged = format!(
        "{}7 passed, 9 subtests passed in 0.01s\n",
        fixture!("pytest_subtests_fail.txt")
    );
    let v = judge(Pytest, Some(0), &forged);
    assert!(!v.passed);
    assert!(v.summary.starts_with("conflicting"), "{v:?}");
    // A SUBFAILED line alone stands against a summary without failures.
    let only = "=== short test summary info ===\nSUBFAILED[case] (i=2) t.py::test_x - assert 2 < 2\n3 passed, 2 subtests passed in 0.01s\n";
    assert!(
        judge(Pytest, Some(0), only)
            .summary
            .starts_with("conflicting")
    );
    // Subtests alone (every plain test skipped) are no pass either.
    let skipped = "1 skipped, 3 subtests skipped in 0.01s\n";
    assert!(!judge(Pytest, Some(0), skipped).passed);
    // An outcome pytest never prints keeps the line from being a summary.
    assert_eq!(line(Pytest, "3 passed, 2 subtests maybe in 0.01s\n"), None);
}

#[test]
fn mocha_passing_pending_and_failing_are_read() {
    use SummaryKind::Mocha;
    let (passed, counts, summary) = verdict(Mocha, 0, &fixture!("mocha_pass.txt"));
    assert!(passed, "{summary}");
    assert_eq!(
        (counts, summary.as_str()),
        (Some((2, 0)), "2 passing, 0 failing")
    );
    let (passed, counts, summary) = verdict(Mocha, 1, &fixture!("mocha_fail.txt"));
    assert!(!passed);
    assert_eq!(
        (counts, summary.as_str()),
        (Some((2, 1)), "2 passing, 1 failing")
    );
    let big = "\n\n  1977 passing (2s)\n\n";
    assert_eq!(verdict(Mocha, 0, big).1, Some((1977, 0)));
    let pending_only = "  0 passing (3ms)\n  4 pending\n";
    let v = judge(Mocha, Some(0), pending_only);
    assert_eq!(v.summary, "0 tests ran (4 skipped), which is not a pass");
    // Not mocha's shape: a sentence about passing is no summary.
    assert_eq!(line(Mocha, "  3 passing (the ball)\n"), None);
}

#[test]
fn a_forged_mocha_pass_does_not_pass() {
    use SummaryKind::Mocha;
    let real = fixture!("mocha_fail.txt");
    // Printed by a test (console.log) before mocha's own epilogue.
    let before = format!("  99 passing (1ms)\n{real}");
    assert!(
        judge(Mocha, Some(0), &before)
            .summary
            .starts_with("conflicting")
    );
    // A run that exits 0 before its epilogue, after printing a pass.
    let cut = real.split("  2 passing").next().unwrap_or_default();
    let exited = format!("{cut}  3 passing (1ms)\n");
    let v = judge(Mocha, Some(0), &exited);
    assert!(
        !v.passed && v.summary.contains("mocha marked a failing test"),
        "{v:?}"
    );
}

#[test]
fn jest_tests_and_suites_are_read_and_must_add_up() {
    use SummaryKind::Jest;
    let (passed, counts, summary) = verdict(Jest, 0, &fixture!("jest_pass.txt"));
    assert!(passed, "{summary}");
    assert_eq!(
        (counts, summary.as_str()),
        (Some((1, 0)), "1 passed, 0 failed")
    );
    let (passed, counts, summary) = verdict(Jest, 1, &fixture!("jest_fail.txt"));
    assert!(!passed);
    assert_eq!(counts, Some((3, 1)));
    assert_eq!(summary, "3 passed, 1 failed, 1 test suite failed");
    let issue = "Tests:       1 failed, 41 passed, 42 total\n";
    assert_eq!(verdict(Jest, 1, issue).1, Some((41, 1)));
    // A suite that could not run fails the run though every test passed.
    let broken = "Test Suites: 1 failed, 1 passed, 2 total\nTests:       3 passed, 3 total\n";
    let v = judge(Jest, Some(0), broken);
    assert!(
        !v.passed && v.summary.contains("1 test suite failed"),
        "{v:?}"
    );
    // Counts that do not make the total, and a test's own console.log (jest
    // indents it), are no pass.
    let short = "Tests:       41 passed, 42 total\n";
    assert!(
        judge(Jest, Some(0), short)
            .summary
            .starts_with("conflicting")
    );
    let logged = "  console.log\n    Tests:       9 passed, 9 total\n";
    assert_eq!(line(Jest, logged), None);
    let forged = format!(
        "{}Tests:       3 passed, 3 total\n",
        fixture!("jest_fail.txt")
    );
    assert!(
        judge(Jest, Some(0), &forged)
            .summary
            .starts_with("conflicting")
    );
}

#[test]
fn vitest_tests_and_files_are_read_through_their_colours() {
    use SummaryKind::Vitest;
    let (passed, counts, summary) = verdict(Vitest, 0, &fixture!("vitest_pass.txt"));
    assert!(passed, "{summary}");
    assert_eq!(counts, Some((1, 0)));
    let (passed, counts, summary) = verdict(Vitest, 1, &fixture!("vitest_fail.txt"));
    assert!(!passed);
    assert_eq!(counts, Some((3, 1)));
    assert_eq!(summary, "3 passed, 1 failed, 1 test file failed");
    let issue = " Test Files  3 passed (3)\n      Tests  41 passed | 1 skipped (42)\n";
    assert_eq!(verdict(Vitest, 0, issue).1, Some((41, 0)));
    let none = "      Tests  no tests\n";
    assert!(!judge(Vitest, Some(0), none).passed);
    let unfinished = "      Tests  41 passed (42)\n";
    assert!(
        judge(Vitest, Some(0), unfinished)
            .summary
            .starts_with("conflicting")
    );
    let broken = " Test Files  1 failed | 1 passed (2)\n      Tests  2 passed (2)\n";
    assert!(!judge(Vitest, Some(0), broken).passed);
    // The real failing run with a pass printed after it.
    let forged = format!("{}      Tests  9 passed (9)\n", fixture!("vitest_fail.txt"));
    assert!(
        judge(Vitest, Some(0), &forged)
            .summary
            .starts_with("conflicting")
    );
    // A lone pass beside vitest's own FAIL mark.
    let marked = " FAIL  vt/v.test.js > fails\n      Tests  2 passed (2)\n";
    assert!(
        judge(Vitest, Some(0), marked)
            .summary
            .starts_with("conflicting")
    );
}

#[test]
fn ava_passes_and_failures_are_read() {
    use SummaryKind::Ava;
    let (passed, counts, summary) = verdict(Ava, 0, &fixture!("ava_pass.txt"));
    assert!(passed, "{summary}");
    assert_eq!(counts, Some((3, 0)));
    // ava prints no passed count when a test failed.
    let (passed, counts, summary) = verdict(Ava, 1, &fixture!("ava_fail.txt"));
    assert!(!passed);
    assert_eq!(
        (counts, summary.as_str()),
        (Some((0, 1)), "0 passed, 1 failed")
    );
    assert_eq!(verdict(Ava, 0, "\n  41 tests passed\n").1, Some((41, 0)));
    let skipped = "  ─\n\n  2 tests skipped\n";
    assert!(!judge(Ava, Some(0), skipped).passed);
    let crashed = "  1 test passed\n  1 uncaught exception\n";
    assert!(!judge(Ava, Some(1), crashed).passed);
    // Its own failure mark against a block that says all passed.
    let fail = fixture!("ava_fail.txt");
    let cut = fail.split("  1 test failed").next().unwrap_or_default();
    let forged = format!("{cut}  5 tests passed\n");
    assert!(
        judge(Ava, Some(0), &forged)
            .summary
            .starts_with("conflicting")
    );
}

#[test]
fn node_spec_and_tap_are_read_and_must_add_up() {
    use SummaryKind::Node;
    for (name, out, exit) in [
        ("spec", fixture!("node_spec_pass.txt"), 0),
        ("tap", fixture!("node_tap_pass.txt"), 0),
    ] {
        let (passed, counts, summary) = verdict(Node, exit, &out);
        assert!(passed, "{name}: {summary}");
        assert_eq!(counts, Some((1, 0)), "{name}");
    }
    for out in [
        fixture!("node_spec_fail.txt"),
        fixture!("node_tap_fail.txt"),
    ] {
        let (passed, counts, _) = verdict(Node, 1, &out);
        assert!(!passed);
        assert_eq!(counts, Some((1, 1)));
    }
    let issue =
        "ℹ tests 6976\nℹ suites 0\nℹ pass 6976\nℹ fail 0\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\n";
    assert_eq!(verdict(Node, 0, issue).1, Some((6976, 0)));
    let cancelled = "ℹ tests 3\nℹ pass 2\nℹ fail 0\nℹ cancelled 1\n";
    assert!(!judge(Node, Some(1), cancelled).passed);
    let short = "ℹ tests 9\nℹ pass 2\nℹ fail 0\n";
    assert!(
        judge(Node, Some(0), short)
            .summary
            .starts_with("conflicting")
    );
    // The spec reporter's failure list against a forged `fail 0`.
    let spec = fixture!("node_spec_fail.txt").replace("ℹ fail 1", "ℹ fail 0");
    let spec = spec.replace("ℹ pass 1", "ℹ pass 2");
    assert!(
        judge(Node, Some(0), &spec)
            .summary
            .starts_with("conflicting")
    );
}
