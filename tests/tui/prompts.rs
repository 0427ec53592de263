//! What a prompt shows about the request it asks for: a `run_tests` prompt
//! shows the run (command, working directory, timeout, sandbox), not the
//! previous edit's diff.

use crate::support::tui::*;
use std::time::Duration;

#[test]
fn a_test_run_prompt_shows_the_run_not_the_last_edit() {
    let mut app = app();
    app.set_test_timeout(Duration::from_secs(90));
    explored(&mut app);
    keep_open(write_calculator(&mut app));
    app.answer(stepwise::agent::Decision::Approve);
    finish_call(
        &mut app,
        4,
        "replace_text",
        stepwise::agent::CallStatus::Ok,
        "+7 −0",
        serde_json::json!({}),
    );
    keep_open(run_tests_request(&mut app, 5));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("Test run · step 5"), "{shown}");
    for row in [
        "Command            python3 -m unittest discover -v",
        "Working directory  ~/projects/calculator",
        "Timeout            90 s (then killed, children too)",
        "Sandbox",
    ] {
        assert!(shown.contains(row), "{row}:\n{shown}");
    }
    assert!(
        !shown.contains("+def divide"),
        "the previous edit is not shown:\n{shown}"
    );
}

#[test]
fn a_test_run_prompt_names_the_sandbox_state_the_core_reports() {
    let mut app = app();
    explored(&mut app);
    let quiet = screen(&draw(&mut app, 120, 40));
    keep_open(propose(
        &mut app,
        5,
        stepwise::tools::ToolName::RUN_TESTS,
        stepwise::agent::ApprovalAction::RunTests {
            command: vec!["cargo".into(), "test".into()],
            sandbox: "sandbox: no network isolation".into(),
        },
    ));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(
        shown.contains("Sandbox            sandbox: no network isolation"),
        "{shown}"
    );
    assert!(!quiet.contains("no network isolation"));
}

#[test]
fn the_prompt_counts_only_the_accepted_hunks() {
    let mut app = app();
    explored(&mut app);
    keep_open(three_hunk_request(&mut app, true));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(
        shown.contains("Step 4 · Write notes.txt (+2 −2)?"),
        "{shown}"
    );
    // Reject the middle hunk (one added line).
    press(&mut app, crossterm::event::KeyCode::Char('j'));
    press(&mut app, crossterm::event::KeyCode::Char(' '));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(
        shown.contains("Step 4 · Write notes.txt (+1 −2 accepted)?"),
        "{shown}"
    );
}

#[test]
fn f_shows_the_diff_full_screen_and_esc_comes_back_without_declining() {
    use crossterm::event::KeyCode;
    let mut app = app();
    explored(&mut app);
    let mut rx = write_calculator(&mut app);
    let normal = screen(&draw(&mut app, 80, 24));
    assert!(normal.contains("Tool calls"), "{normal}");
    assert!(normal.contains("lines 1–8 of 11"), "{normal}");
    press(&mut app, KeyCode::Char('f'));
    let full = screen(&draw(&mut app, 80, 24));
    assert!(!full.contains("Tool calls"), "{full}");
    assert!(!full.contains("Conversation"), "{full}");
    assert!(full.contains("Diff · calculator.py"), "{full}");
    assert!(
        full.contains("+    return a / b"),
        "the whole diff fits: {full}"
    );
    assert!(
        !full.contains("lines 1–"),
        "no position when all of it shows"
    );
    press(&mut app, KeyCode::Esc);
    assert!(
        undecided(&mut rx),
        "Esc leaves the full screen, it does not decline"
    );
    assert!(screen(&draw(&mut app, 80, 24)).contains("Tool calls"));
    press(&mut app, KeyCode::Char('f'));
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(rx.try_recv().ok(), Some(stepwise::agent::Decision::Approve));
    assert!(screen(&draw(&mut app, 80, 24)).contains("Tool calls"));
}
