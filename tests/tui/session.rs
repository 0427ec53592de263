//! Session-level UI in the App state machine: the verification receipt,
//! `/diff`, `/undo`, `/undo all`, `/compact` (refused while a task runs), the
//! help listing them, and the header's rules file, tokens and cost.
// These tests check the exact colours drawn, so they name them.
#![allow(clippy::disallowed_types)]

use crate::support::tui::*;
use crossterm::event::KeyCode;
use ratatui::style::Color;
use stepwise::agent::AgentCommand;
use stepwise::agent::{
    AgentEvent, ApprovalAction, ApprovalRequest, Decision, FileStat, FinishReason, GitStatus,
    Receipt, TestReceipt,
};
use stepwise::diff::FileDiff;
use stepwise::llm::TokenUsage;
use stepwise::tools::ToolName;
use stepwise::tui::overlays::help;
use stepwise::tui::{App, Effect, Overlay, TaskState};
use tokio::sync::oneshot;

fn command(app: &mut App, text: &str) -> Vec<Effect> {
    type_text(app, text);
    press(app, KeyCode::Enter);
    app.take_effects()
}

fn undo_request(app: &mut App) -> oneshot::Receiver<Decision> {
    let (reply, rx) = oneshot::channel();
    let written = format!("{CALCULATOR}{DIVIDE}");
    app.update(Msg::Agent(AgentEvent::ApprovalRequested(ApprovalRequest {
        step: 0,
        call_id: "undo_1".into(),
        tool: ToolName::WRITE_FILE.into(),
        action: ApprovalAction::Undo {
            files: vec![FileDiff::compute(
                "calculator.py",
                Some(&written),
                CALCULATOR,
            )],
        },
        allow_for_task: false,
        reply,
    })));
    settle(app);
    rx
}

#[test]
fn the_receipt_is_shown_under_the_answer_and_says_who_computed_it() {
    let mut app = app();
    finished(&mut app);
    let shown = screen(&draw(&mut app, 120, 40));
    let answer = shown.find("All 6 tests pass.").expect("answer shown");
    let receipt = shown
        .find("Receipt — computed by stepwise, not the model")
        .expect("receipt shown");
    assert!(receipt > answer, "under the answer:\n{shown}");
    assert!(
        shown.contains("tests  python3 -m pytest -q → exit 0 · 4 passed"),
        "{shown}"
    );
    assert!(shown.contains("diff   #0123456789ab"), "{shown}");

    // Files with their counts; failing tests in red.
    app.update(Msg::Agent(AgentEvent::FinalAnswer {
        text: "Second answer.".into(),
        receipt: Receipt {
            tests: Some(TestReceipt {
                command: "python3 -m unittest discover -v".into(),
                exit_code: Some(1),
                summary: "1 failed".into(),
                sandbox: String::new(),
                passed: false,
                verified: stepwise::tools::testing::test_run::Verified::ExitCodeAndSummary,
            }),
            files: vec![
                FileStat {
                    by: None,
                    path: "calculator.py".into(),
                    added: 7,
                    removed: 0,
                    created: false,
                },
                FileStat {
                    by: None,
                    path: "notes.md".into(),
                    added: 2,
                    removed: 0,
                    created: true,
                },
            ],
            diff_hash: "abcdef012345".into(),
            no_tool_used: false,
            no_test_command: false,
            changed_by_tests: Vec::new(),
            kept_out: Vec::new(),
            rewritten_by_every_run: Vec::new(),
            tests_changed: Vec::new(),
        },
    }));
    let term = draw(&mut app, 120, 40);
    let shown = screen(&term);
    assert!(
        shown.contains("files  calculator.py +7 −0 · notes.md +2 −0 (new)"),
        "{shown}"
    );
    let (y, row) = shown
        .lines()
        .enumerate()
        .find(|(_, r)| r.contains("tests  python3 -m unittest"))
        .expect("failing tests shown");
    assert!(shown.contains("→ exit 1 · 1"), "{shown}");
    let x = row[..row.find("tests").unwrap_or(0)].chars().count() as u16;
    assert_eq!(term.backend().buffer()[(x, y as u16)].fg, Color::Red);
}

#[test]
fn slash_diff_opens_the_session_diff_and_is_refused_while_a_task_runs() {
    let mut app = app();
    submit(&mut app, "a task");
    assert!(command(&mut app, "/diff").is_empty());
    assert!(
        app.flash()
            .as_deref()
            .is_some_and(|f| f.contains("A task is running: /diff"))
    );
    app.update(Msg::Agent(task_finished(FinishReason::Answered, 1)));
    let effects = command(&mut app, "/diff");
    assert!(matches!(
        effects.as_slice(),
        [Effect::Agent(AgentCommand::ShowDiff)]
    ));
    let long: String = (1..=40).map(|i| format!("note {i}\n")).collect();
    app.update(Msg::Agent(AgentEvent::SessionDiff {
        files: vec![
            calculator_diff(),
            FileDiff::compute("notes.md", None, &long),
        ],
        git: Some(GitStatus {
            branch: Some("feature/divide".into()),
            other_dirty: vec!["README.md".into()],
        }),
    }));
    assert!(matches!(app.overlay(), Some(Overlay::SessionDiff(_))));
    let term = draw(&mut app, 80, 24);
    let shown = screen(&term);
    assert!(
        shown.contains("2 files changed by stepwise in this session: +47 −0"),
        "{shown}"
    );
    assert!(shown.contains("git branch feature/divide"), "{shown}");
    assert!(
        shown.contains("other files changed outside stepwise: README.md"),
        "{shown}"
    );
    assert!(shown.contains("━ calculator.py  +7 −0"), "{shown}");
    let (y, row) = shown
        .lines()
        .enumerate()
        .find(|(_, r)| r.contains("+def divide"))
        .expect("diff shown");
    let x = row[..row.find("+def").unwrap_or(0)].chars().count() as u16;
    assert_eq!(term.backend().buffer()[(x, y as u16)].fg, Color::Green);
    // It scrolls, and Esc closes it.
    press(&mut app, KeyCode::PageDown);
    let scrolled = screen(&draw(&mut app, 80, 24));
    assert!(!scrolled.contains("git branch"), "{scrolled}");
    press(&mut app, KeyCode::Esc);
    assert!(app.overlay().is_none());

    // Without git, and with nothing changed.
    app.update(Msg::Agent(AgentEvent::SessionDiff {
        files: vec![],
        git: None,
    }));
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(
        shown.contains("stepwise has not changed any file"),
        "{shown}"
    );
    assert!(!shown.contains("git branch"), "{shown}");
}

#[test]
fn slash_undo_shows_the_revert_as_a_diff_and_asks() {
    let mut app = app();
    finished(&mut app);
    let effects = command(&mut app, "/undo");
    assert!(matches!(
        effects.as_slice(),
        [Effect::Agent(AgentCommand::Undo { all: false, .. })]
    ));
    assert!(app.is_running(), "no task starts while the undo waits");
    let mut rx = undo_request(&mut app);
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(
        shown.contains("Undo: restore calculator.py (+0 −7)? [y/N]"),
        "{shown}"
    );
    assert!(shown.contains("Undo · this file goes back"), "{shown}");
    assert!(shown.contains("━ calculator.py  +0 −7"), "{shown}");
    assert!(shown.contains("-def divide(a, b):"), "{shown}");
    assert!(!shown.contains("Step 0"), "{shown}");
    press(&mut app, KeyCode::Char('r'));
    assert!(app.approvals().reason().is_none(), "no reason for an undo");
    press(&mut app, KeyCode::Char('a'));
    assert!(rx.try_recv().is_err(), "a does not apply to an undo");
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::Approve));
    assert_eq!(app.state(), TaskState::Done, "back to where it was");
    app.update(Msg::Agent(AgentEvent::UndoFinished {
        reverted: vec!["calculator.py".into()],
        error: None,
    }));
    assert!(!app.is_running());
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(
        shown.contains("Reverted calculator.py. The model was told"),
        "{shown}"
    );
}

#[test]
fn slash_undo_all_declined_or_refused_says_so() {
    let mut app = app();
    finished(&mut app);
    let effects = command(&mut app, "/undo all");
    assert!(matches!(
        effects.as_slice(),
        [Effect::Agent(AgentCommand::Undo { all: true, .. })]
    ));
    let mut rx = undo_request(&mut app);
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::Decline { reason: None }));
    app.update(Msg::Agent(AgentEvent::UndoFinished {
        reverted: vec![],
        error: Some("undo declined; nothing was reverted".into()),
    }));
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(
        shown.contains("Undo declined; nothing was reverted."),
        "{shown}"
    );

    command(&mut app, "/undo");
    app.update(Msg::Agent(AgentEvent::UndoFinished {
        reverted: vec![],
        error: Some(
            "undo refused: calculator.py was changed on disk since stepwise wrote it".into(),
        ),
    }));
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(
        shown.contains("✗ undo refused: calculator.py was changed on disk"),
        "{shown}"
    );
    assert!(!app.is_running());

    // Ctrl+C cancels an undo like a task.
    let effects = command(&mut app, "/undo");
    let Some(Effect::Agent(AgentCommand::Undo { cancel, .. })) = effects.into_iter().next() else {
        panic!("undo requested");
    };
    let mut rx = undo_request(&mut app);
    app.update(Msg::from(ctrl('c')));
    assert!(cancel.is_cancelled());
    assert_eq!(rx.try_recv().ok(), Some(Decision::Decline { reason: None }));
    assert!(!app.quitting(), "an interrupt, not a quit");
    app.update(Msg::Agent(AgentEvent::UndoFinished {
        reverted: vec![],
        error: Some("undo declined; nothing was reverted".into()),
    }));
    assert!(!app.is_running());
    assert_eq!(app.state(), TaskState::Done, "back to where it was");
}

#[test]
fn slash_undo_and_compact_are_refused_while_a_task_runs() {
    let mut app = app();
    submit(&mut app, "a task");
    for cmd in ["/undo", "/undo all", "/compact"] {
        assert!(command(&mut app, cmd).is_empty(), "{cmd}");
        let flash = app.flash().clone().unwrap_or_default();
        assert!(
            flash.contains("A task is running") && flash.contains(cmd),
            "{flash}"
        );
    }
    app.update(Msg::Agent(task_finished(FinishReason::Answered, 1)));
    let effects = command(&mut app, "/compact");
    assert!(matches!(
        effects.as_slice(),
        [Effect::Agent(AgentCommand::Compact)]
    ));
    app.update(Msg::Agent(AgentEvent::Compacted {
        before_tokens: 9000,
        after_tokens: 2000,
        elided: 4,
        summarized: 0,
    }));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("9000 → 2000"), "{shown}");
    command(&mut app, "/nope");
    assert!(
        app.flash()
            .as_deref()
            .is_some_and(|f| f.contains("/undo all") && f.contains("/diff"))
    );
}

#[test]
fn help_lists_the_review_keys_and_the_new_commands_and_scrolls() {
    let keys: Vec<&str> = help::KEYS.iter().map(|(k, _)| *k).collect();
    for needle in [
        "/diff",
        "/undo  /undo all",
        "/compact",
        "Space",
        "e",
        "F3  /revoke",
        "j k  ↑ ↓",
    ] {
        assert!(keys.contains(&needle), "{needle} missing from {keys:?}");
    }
    let mut app = app();
    draw(&mut app, 80, 24);
    press(&mut app, KeyCode::F(1));
    let first = screen(&draw(&mut app, 80, 24));
    assert!(first.contains("more ↓"), "{first}");
    assert!(!first.contains("/compact"), "{first}");
    press(&mut app, KeyCode::End);
    let last = screen(&draw(&mut app, 80, 24));
    assert!(
        last.contains("/compact") && last.contains("/undo all"),
        "{last}"
    );
    press(&mut app, KeyCode::Esc);
    assert!(app.overlay().is_none());
}

#[test]
fn the_header_shows_the_rules_file_cached_tokens_and_an_estimated_cost() {
    let mut app = app();
    submit(&mut app, "task");
    feed(
        &mut app,
        vec![
            AgentEvent::TaskStarted {
                task: "task".into(),
                max_steps: 20,
                rules: vec!["AGENTS.md".into()],
            },
            AgentEvent::Usage(TokenUsage {
                prompt_tokens: 2000,
                completion_tokens: 100,
                cached_tokens: 1500,
                cache_write_tokens: 0,
            }),
        ],
    );
    let shown = screen(&draw(&mut app, 120, 40));
    let mut lines = shown.lines();
    let (first, second) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
    assert!(first.contains("rules: AGENTS.md"), "{first}");
    assert!(second.contains("2.0k/100 (1.5k cached, 75%)"), "{second}");
    app.update(Msg::Agent(AgentEvent::Cost {
        request_usd: 0.002,
        task_usd: 0.002,
        session_usd: 0.005,
    }));
    // The cost (an estimate, and marked so) goes before token detail.
    let shown = screen(&draw(&mut app, 120, 40));
    let second = shown.lines().nth(1).unwrap_or("");
    assert!(
        second.contains("≈$0.002") && second.contains("(est.)"),
        "{second}"
    );
}

#[test]
fn a_rule_sets_each_task_off_from_the_one_before() {
    let mut app = app();
    submit(&mut app, "task one");
    app.update(stepwise::tui::Msg::Agent(task_finished(
        stepwise::agent::FinishReason::Answered,
        1,
    )));
    let first = screen(&draw(&mut app, 80, 24));
    let rule = |text: &str| {
        text.lines()
            .filter(|l| l.trim().len() > 20 && l.trim().chars().all(|c| c == '─'))
            .count()
    };
    assert_eq!(rule(&first), 0, "no rule before the first task:\n{first}");
    submit(&mut app, "task two");
    let shown = screen(&draw(&mut app, 80, 24));
    let one = find(&shown, "task one").expect("the first task").1;
    let two = find(&shown, "task two").expect("the second task").1;
    let between: Vec<&str> = shown
        .lines()
        .skip(one as usize + 1)
        .take((two - one) as usize)
        .collect();
    assert_eq!(rule(&between.join("\n")), 1, "{shown}");
}
