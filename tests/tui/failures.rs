//! Failed and refused calls are on record in the conversation: each says
//! why, and a failing test run shows the end of its output (the assertion),
//! in the runner's colours through the theme, never its escape codes.
#![allow(clippy::disallowed_types)]

use crate::support::tui::*;
use ratatui::style::Color;
use serde_json::json;
use stepwise::agent::{AgentEvent, CallStatus, Decision};
use stepwise::tui::App;
use stepwise::tui::render::theme::{DARK, Look, Slot};

const FAILING_RUN: &str = "test_adds ... ok\ntest_a ... ok\ntest_b ... ok\ntest_c ... ok\ntest_d ... ok\ntest_divide ... FAIL\n\nFAIL: test_divide (test_calculator.TestDivide)\nTraceback (most recent call last):\n  File \"test_calculator.py\", line 9, in test_divide\n    self.assertEqual(divide(6, 3), 3)\nAssertionError: 2.0 != 3\n\nRan 6 tests in 0.001s\n\nFAILED (failures=1)\n";

fn failed_run(app: &mut App, coloured: Option<String>) {
    explored(app);
    keep_open(run_tests_request(app, 4));
    app.answer(Decision::Approve);
    feed(
        app,
        vec![
            AgentEvent::ToolRunning {
                step: 4,
                call_id: "call_4".into(),
                auto_approved: false,
            },
            AgentEvent::ToolFinished {
                step: 4,
                call_id: "call_4".into(),
                tool: "run_tests".into(),
                status: CallStatus::Failed,
                summary: "1 failed, 5 passed (exit 1)".into(),
                result: json!({"success": false, "error": "the tests failed; read the output", "output": FAILING_RUN, "returncode": 1}),
                coloured_output: coloured,
            },
        ],
    );
}

#[test]
fn a_failing_test_run_shows_its_summary_and_its_assertion_in_the_conversation() {
    let mut app = app();
    failed_run(&mut app, None);
    let texts: Vec<&str> = app.conversation().texts().collect();
    let all = texts.join("\n");
    assert!(
        all.contains("run_tests unittest failed: 1 failed, 5 passed (exit 1)"),
        "{all}"
    );
    assert!(all.contains("AssertionError: 2.0 != 3"), "{all}");
    assert!(all.contains("FAILED (failures=1)"), "{all}");
    assert!(
        !all.contains("test_adds ... ok"),
        "only the last lines: {all}"
    );
    let term = draw(&mut app, 100, 40);
    let text = screen(&term);
    assert!(text.contains("AssertionError: 2.0 != 3"), "{text}");
}

#[test]
fn a_refused_call_says_why_in_the_conversation() {
    let mut app = app();
    explored(&mut app);
    feed(
        &mut app,
        read_step(4, "read_file", "../secret.txt", "x", json!({})),
    );
    // The same call again, refused by stepwise.
    app.update(stepwise::tui::Msg::Agent(AgentEvent::ToolFinished {
        step: 4,
        call_id: "call_4".into(),
        tool: "read_file".into(),
        status: CallStatus::Failed,
        summary: "path escapes the workspace".into(),
        result: json!({"success": false, "error": "path escapes the workspace: ../secret.txt"}),
        coloured_output: None,
    }));
    let all: Vec<&str> = app.conversation().texts().collect();
    assert!(
        all.contains(&"read_file ../secret.txt failed: path escapes the workspace: ../secret.txt"),
        "{all:?}"
    );
}

#[test]
fn a_runners_colours_become_theme_colours_and_no_escape_reaches_the_screen() {
    let coloured = FAILING_RUN
        .replace("AssertionError", "\u{1b}[31mAssertionError\u{1b}[39m")
        .replace("FAILED", "\u{1b}[90mFAILED\u{1b}[0m");
    let mut app = app();
    app.set_look(Look::Colored(&DARK));
    failed_run(&mut app, Some(coloured));
    let term = draw(&mut app, 100, 40);
    let text = screen(&term);
    assert!(!text.contains('␛') && !text.contains("[31m"), "{text}");
    let (x, y) = find(&text, "AssertionError: 2.0").unwrap();
    let buf = term.backend().buffer();
    assert_eq!(
        buf[(x, y)].fg,
        DARK.slots[Slot::Bad as usize],
        "red is the theme's bad"
    );
    let (x, y) = find(&text, "FAILED (failures").unwrap();
    assert_eq!(buf[(x, y)].fg, DARK.slots[Slot::Dim as usize]);
    // Under NO_COLOR the text is there, uncoloured.
    app.set_look(Look::Plain);
    let term = draw(&mut app, 100, 40);
    let (x, y) = find(&screen(&term), "AssertionError: 2.0").unwrap();
    assert_eq!(term.backend().buffer()[(x, y)].fg, Color::Reset);
}
