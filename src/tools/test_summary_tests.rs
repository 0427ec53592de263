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
