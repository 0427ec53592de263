//! "Approve for the rest of the task": `a` asks, a second `a` approves the
//! tool, the header says so, and requests of that tool already queued are
//! covered too (moved out of `state` to keep that file short).

use crate::support::tui::*;
use crossterm::event::KeyCode;
use stepwise::agent::{ApprovalAction, Decision, FinishReason};
use stepwise::diff::FileDiff;
use stepwise::tools::ToolName;
use stepwise::tui::{App, Msg};
use tokio::sync::oneshot::error::TryRecvError;

fn at_write_prompt() -> (App, tokio::sync::oneshot::Receiver<Decision>) {
    let mut app = app();
    explored(&mut app);
    let rx = write_calculator(&mut app);
    draw(&mut app, 80, 24);
    (app, rx)
}

fn decision(rx: &mut tokio::sync::oneshot::Receiver<Decision>) -> Option<Decision> {
    rx.try_recv().ok()
}

#[test]
fn a_approves_the_tool_for_the_task_and_the_header_says_so() {
    let (mut app, mut rx) = at_write_prompt();
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(decision(&mut rx), None, "one a only asks");
    let flash = app.flash().clone().unwrap_or_default();
    assert!(
        flash.contains("a again") && flash.contains("every later replace_text call"),
        "{flash}"
    );
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(decision(&mut rx), Some(Decision::ApproveToolForTask));
    assert_eq!(app.auto_approved(), ["replace_text"]);
    let term = draw(&mut app, 120, 40);
    assert!(
        screen(&term)
            .lines()
            .next()
            .unwrap_or("")
            .contains("auto-approve: replace_text (this task)")
    );
    app.update(Msg::Agent(task_finished(FinishReason::Answered, 4)));
    assert!(
        app.auto_approved().is_empty(),
        "only for the rest of the task"
    );
}

#[test]
fn a_also_covers_requests_of_that_tool_already_queued() {
    let (mut app, mut first) = at_write_prompt();
    let mut tests = run_tests_request(&mut app, 5);
    let diff = FileDiff::compute("b.py", None, "b = 1\n");
    let mut second_write = propose(
        &mut app,
        6,
        ToolName::REPLACE_TEXT,
        ApprovalAction::Edit {
            path: "b.py".into(),
            diff,
            proposed: String::new(),
            original: None,
        },
    );
    press(&mut app, KeyCode::Char('a'));
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(decision(&mut first), Some(Decision::ApproveToolForTask));
    assert_eq!(decision(&mut second_write), Some(Decision::Approve));
    assert!(
        matches!(tests.try_recv(), Err(TryRecvError::Empty)),
        "another tool still asks"
    );
    assert_eq!(app.approvals().current().map(|r| r.step), Some(5));
}
