//! No keystroke loses work, and approvals are the ones the user meant:
//! Ctrl+C with a draft, quitting while work is pending, Enter and `n` on the
//! user's own edited version, keys typed ahead into a prompt that just
//! opened, `a` asking for a second `a`, and every decision on record.

use crate::support::tui::*;
use crossterm::event::KeyCode;
use serde_json::json;
use std::time::Duration;
use stepwise::agent::{AgentEvent, CallStatus, Decision, FinishReason};
use stepwise::tui::{App, Effect, Msg};
use tokio::sync::oneshot::Receiver;

fn quit_asked(app: &mut App) -> bool {
    app.take_effects()
        .into_iter()
        .any(|e| matches!(e, Effect::Quit))
}

fn later(app: &mut App, ms: u64) {
    app.set_now(app.now() + Duration::from_millis(ms));
}

fn flash(app: &App) -> String {
    app.flash().clone().unwrap_or_default()
}

fn conversation(app: &App) -> Vec<String> {
    app.conversation().texts().map(str::to_string).collect()
}

#[test]
fn ctrl_c_clears_a_draft_first_and_up_brings_it_back() {
    let mut app = app();
    type_text(&mut app, "half a task");
    app.update(Msg::from(ctrl('c')));
    assert!(
        !quit_asked(&mut app) && !app.quitting(),
        "a draft is not lost"
    );
    assert!(app.input().is_empty());
    assert!(flash(&app).contains("↑"), "{}", flash(&app));
    press(&mut app, KeyCode::Up);
    assert_eq!(app.input().text(), "half a task");
    press(&mut app, KeyCode::Down);
    later(&mut app, 2500);
    app.update(Msg::from(ctrl('c')));
    assert!(quit_asked(&mut app), "Ctrl+C on an empty input quits");
}

#[test]
fn quitting_while_a_task_runs_takes_a_second_key_within_two_seconds() {
    let mut app = app();
    submit(&mut app, "task one");
    let token = app.cancel_token().cloned().expect("running");
    app.update(Msg::from(ctrl('d')));
    assert!(!quit_asked(&mut app) && !token.is_cancelled());
    assert!(flash(&app).contains("Ctrl+D again"), "{}", flash(&app));
    assert!(app.wake_at().is_some(), "the question runs out by itself");
    later(&mut app, 2100);
    assert!(app.flash().is_none(), "the question is gone after 2 s");
    app.update(Msg::from(ctrl('d')));
    assert!(!quit_asked(&mut app), "too late: asks again");
    later(&mut app, 500);
    app.update(Msg::from(ctrl('d')));
    assert!(quit_asked(&mut app) && token.is_cancelled());
}

#[test]
fn ctrl_c_interrupts_and_a_second_one_quits() {
    let mut app = app();
    explored(&mut app);
    let mut rx = write_calculator(&mut app);
    app.update(Msg::from(ctrl('c')));
    assert_eq!(rx.try_recv().ok(), Some(Decision::Decline { reason: None }));
    assert!(!quit_asked(&mut app));
    assert!(flash(&app).contains("Ctrl+C again"), "{}", flash(&app));
    later(&mut app, 1000);
    app.update(Msg::from(ctrl('c')));
    assert!(quit_asked(&mut app));
}

/// At the prompt of the three-hunk edit, with the user's own version back
/// from the editor.
fn at_edited_version() -> (App, Receiver<Decision>, String) {
    let mut app = app();
    explored(&mut app);
    let rx = three_hunk_request(&mut app, true);
    let serial = app.approvals().serial();
    let (_, proposed) = three_hunks();
    let mine = proposed.replace("line twenty-and-a-half\n", "my own line\n");
    edited(&mut app, serial, Ok(mine.clone()));
    (app, rx, mine)
}

#[test]
fn enter_and_esc_never_discard_the_users_edit_and_n_asks_once_more() {
    let (mut app, mut rx, mine) = at_edited_version();
    for k in [KeyCode::Enter, KeyCode::Esc] {
        press(&mut app, k);
        assert!(undecided(&mut rx), "{k:?} does not decide");
        assert!(flash(&app).contains("y writes it, n discards it"));
    }
    press(&mut app, KeyCode::Char('n'));
    assert!(undecided(&mut rx), "the first n asks");
    assert!(flash(&app).contains("n again"), "{}", flash(&app));
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('n'));
    assert!(undecided(&mut rx), "another key in between starts over");
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::Decline { reason: None }));
    let lines = conversation(&app);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("discarded your edited version of notes.txt")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l == "my own line"), "kept whole");
    assert!(mine.contains("my own line"));
}

#[test]
fn y_writes_the_edited_version_and_says_so_in_the_conversation() {
    let (mut app, mut rx, mine) = at_edited_version();
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(
        rx.try_recv().ok(),
        Some(Decision::ApproveEdited { content: mine })
    );
    let lines = conversation(&app);
    assert!(
        lines
            .iter()
            .any(|l| l == "You approved your edited version for write_file notes.txt"),
        "{lines:?}"
    );
}

#[test]
fn letters_typed_ahead_never_answer_a_prompt_that_just_opened() {
    let mut app = app();
    explored(&mut app);
    type_text(&mut app, "so wh");
    // The prompt opens while the user is still typing.
    let (reply, mut rx) = tokio::sync::oneshot::channel();
    app.update(Msg::Agent(AgentEvent::ApprovalRequested(
        stepwise::agent::ApprovalRequest {
            step: 4,
            call_id: "call_4".into(),
            tool: stepwise::tools::ToolName::RUN_TESTS.into(),
            action: stepwise::agent::ApprovalAction::RunTests {
                command: vec!["python3".into(), "-m".into(), "unittest".into()],
                sandbox: String::new(),
            },
            allow_for_task: true,
            reply,
        },
    )));
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(shown.contains("arming"), "{shown}");
    // A sentence with y, e, n and a in it, at human speed, through the moment
    // the prompt opened and long after.
    for word in ["at next, yes and ", "anyway leave it"] {
        later(&mut app, 150);
        type_text(&mut app, word);
        assert!(undecided(&mut rx), "nothing typed answers: {word}");
        assert!(
            app.approvals().confirm().is_none(),
            "not even half of `a a`"
        );
    }
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(shown.contains("prompt waiting"), "{shown}");
    assert!(
        shown.contains("draft: so what next, yes and anyway leave it"),
        "the draft stays on screen: {shown}"
    );
    // An explicit move to the prompt gives it the keys; a reflexive second
    // Esc is not an answer.
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Esc);
    assert!(undecided(&mut rx), "Esc right after Esc decides nothing");
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::Approve));
    assert_eq!(app.input().text(), "so what next, yes and anyway leave it");
}

#[test]
fn once_the_keys_stop_a_left_draft_no_longer_holds_later_prompts() {
    let mut app = app();
    explored(&mut app);
    type_text(&mut app, "a note for later");
    later(&mut app, 2_000);
    for step in 4..7 {
        let mut rx = run_tests_request(&mut app, step);
        later(&mut app, 400);
        let shown = screen(&draw(&mut app, 80, 24));
        assert!(
            shown.contains("draft: a note for later") && !shown.contains("prompt waiting"),
            "the draft shows, and nobody is typing: {shown}"
        );
        press(&mut app, KeyCode::Char('y'));
        assert_eq!(rx.try_recv().ok(), Some(Decision::Approve), "step {step}");
    }
    assert_eq!(app.input().text(), "a note for later", "the draft is kept");
}

#[test]
fn a_user_who_stopped_typing_answers_as_before() {
    let mut app = app();
    explored(&mut app);
    let mut rx = write_calculator(&mut app);
    // The task was sent (the input is empty) and the user has been idle.
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::Approve));
}

#[test]
fn enter_on_the_tool_calls_pane_opens_details_and_never_answers() {
    let mut app = app();
    explored(&mut app);
    let mut rx = write_calculator(&mut app);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), stepwise::tui::Focus::ToolCalls);
    press(&mut app, KeyCode::Enter);
    assert!(
        undecided(&mut rx),
        "Enter on a row is not the prompt's Enter"
    );
    assert!(
        matches!(app.overlay(), Some(stepwise::tui::Overlay::Detail(_))),
        "the details open while the prompt waits"
    );
    press(&mut app, KeyCode::Esc);
    assert!(
        app.overlay().is_none() && undecided(&mut rx),
        "Esc closes them only"
    );
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::Approve));
}

#[test]
fn a_next_prompt_arms_again_after_an_answer() {
    let mut app = app();
    explored(&mut app);
    let mut first = write_calculator(&mut app);
    let mut tests = run_tests_request(&mut app, 5);
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(first.try_recv().ok(), Some(Decision::Approve));
    press(&mut app, KeyCode::Char('y'));
    assert!(
        undecided(&mut tests),
        "a double y does not approve the next one"
    );
    // Typed while the next prompt armed, the y is text, kept in the input.
    assert_eq!(app.input().text(), "y");
    settle(&mut app);
    press(&mut app, KeyCode::Char('y'));
    assert!(undecided(&mut tests), "a draft keeps the keys text");
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(tests.try_recv().ok(), Some(Decision::Approve));
}

#[test]
fn a_then_another_key_cancels_and_a_a_approves_for_the_task() {
    let mut app = app();
    explored(&mut app);
    let mut rx = run_tests_request(&mut app, 4);
    press(&mut app, KeyCode::Char('a'));
    let asked = flash(&app);
    assert!(
        asked.contains("every later run_tests call until the task ends") && asked.contains("F3"),
        "{asked}"
    );
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("Press a again"), "{shown}");
    press(&mut app, KeyCode::PageDown);
    press(&mut app, KeyCode::Char('a'));
    assert!(undecided(&mut rx), "the second a must follow the first");
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::ApproveToolForTask));
    let lines = conversation(&app);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("You approved every run_tests call for the rest of this task")),
        "{lines:?}"
    );
}

#[test]
fn declines_and_auto_approved_steps_are_on_record() {
    let mut app = app();
    explored(&mut app);
    keep_open(write_calculator(&mut app));
    press(&mut app, KeyCode::Char('r'));
    type_text(&mut app, "use a comment");
    press(&mut app, KeyCode::Enter);
    let lines = conversation(&app);
    assert!(
        lines
            .iter()
            .any(|l| l == "You declined replace_text calculator.py: \"use a comment\""),
        "{lines:?}"
    );
    // The core runs a step of a tool approved for the task without asking.
    feed(
        &mut app,
        vec![AgentEvent::ToolCallProposed {
            step: 5,
            call_id: "call_5".into(),
            tool: "run_tests".into(),
            kind: stepwise::agent::CallKind::Execute,
            target: "unittest".into(),
            arguments: json!({}),
            diff: None,
            needs_approval: false,
        }],
    );
    app.update(Msg::Agent(AgentEvent::ToolRunning {
        step: 5,
        call_id: "call_5".into(),
        auto_approved: true,
    }));
    app.update(Msg::Agent(AgentEvent::ToolFinished {
        step: 5,
        call_id: "call_5".into(),
        tool: "run_tests".into(),
        status: CallStatus::Ok,
        summary: "6 tests OK".into(),
        result: json!({"success": true}),
        coloured_output: None,
    }));
    let lines = conversation(&app);
    assert!(
        lines
            .iter()
            .any(|l| l == "Auto-approved run_tests unittest (run_tests is approved for this task)"),
        "{lines:?}"
    );
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("auto · 6 tests OK"), "{shown}");
    app.update(Msg::Agent(task_finished(FinishReason::Answered, 5)));
}

#[test]
fn ctrl_r_searches_the_earlier_tasks() {
    let mut app = app();
    for task in ["fix the parser", "add docs"] {
        submit(&mut app, task);
        app.update(Msg::Agent(task_finished(FinishReason::Answered, 1)));
    }
    type_text(&mut app, "pars");
    app.update(Msg::from(ctrl('r')));
    assert_eq!(app.input().text(), "fix the parser");
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(shown.contains("History search “pars”"), "{shown}");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.input().text(), "pars", "Esc puts back what was typed");
    type_text(&mut app, "zz");
    app.update(Msg::from(ctrl('r')));
    assert!(flash(&app).contains("No earlier task contains “parszz”"));
    assert_eq!(app.input().text(), "parszz");
}

fn notified(app: &mut App) -> Vec<String> {
    app.take_effects()
        .into_iter()
        .filter_map(|e| match e {
            Effect::Notify(text) => Some(text),
            _ => None,
        })
        .collect()
}

#[test]
fn an_approval_waiting_unfocused_rings_once_and_never_when_focused_or_off() {
    use crossterm::event::Event;
    let mut app = app();
    app.set_notify(true);
    explored(&mut app);
    app.take_effects();
    keep_open(write_calculator(&mut app));
    assert!(notified(&mut app).is_empty(), "focused: no bell");
    app.update(Msg::Terminal(Event::FocusLost));
    assert_eq!(
        notified(&mut app),
        ["stepwise: approval waiting: Write calculator.py (+7 −0)"]
    );
    app.update(Msg::Terminal(Event::FocusGained));
    app.update(Msg::Terminal(Event::FocusLost));
    assert!(notified(&mut app).is_empty(), "once per request");
    app.update(Msg::Terminal(Event::FocusGained));
    let mut off = self::app();
    explored(&mut off);
    off.update(Msg::Terminal(Event::FocusLost));
    keep_open(write_calculator(&mut off));
    assert!(notified(&mut off).is_empty(), "notify = false: nothing");
}

/// Type a slash command and press Enter, leaving its effects in place.
fn command(app: &mut App, text: &str) {
    type_text(app, text);
    press(app, KeyCode::Enter);
}

#[test]
fn slash_quit_while_a_task_runs_asks_like_ctrl_d() {
    let mut app = app();
    submit(&mut app, "task one");
    let token = app.cancel_token().cloned().expect("running");
    command(&mut app, "/quit");
    assert!(!quit_asked(&mut app) && !token.is_cancelled());
    assert!(flash(&app).contains("/quit again"), "{}", flash(&app));
    later(&mut app, 2100);
    assert!(
        app.flash().is_none(),
        "the question is gone after 2 s: {}",
        flash(&app)
    );
    command(&mut app, "/exit");
    assert!(!quit_asked(&mut app), "too late: asks again");
    later(&mut app, 500);
    command(&mut app, "/quit");
    assert!(quit_asked(&mut app) && token.is_cancelled());
}

#[test]
fn slash_quit_when_idle_quits_at_once() {
    let mut app = app();
    command(&mut app, "/quit");
    assert!(quit_asked(&mut app));
}

/// A `run_tests` step the core runs without asking, finished.
fn auto_run_tests(app: &mut App, step: u32) {
    let call_id = format!("call_{step}");
    feed(
        app,
        vec![
            AgentEvent::ToolCallProposed {
                step,
                call_id: call_id.clone(),
                tool: "run_tests".into(),
                kind: stepwise::agent::CallKind::Execute,
                target: "unittest".into(),
                arguments: json!({}),
                diff: None,
                needs_approval: false,
            },
            AgentEvent::ToolRunning {
                step,
                call_id: call_id.clone(),
                auto_approved: true,
            },
            AgentEvent::ToolFinished {
                step,
                call_id,
                tool: "run_tests".into(),
                status: CallStatus::Ok,
                summary: "6 tests OK".into(),
                result: json!({"success": true}),
                coloured_output: None,
            },
        ],
    );
}

#[test]
fn consecutive_auto_approved_steps_fold_into_one_line() {
    let mut app = app();
    explored(&mut app);
    for step in 4..7 {
        auto_run_tests(&mut app, step);
    }
    let lines = conversation(&app);
    let auto: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("Auto-approved"))
        .collect();
    assert_eq!(
        auto,
        [
            "Auto-approved 3 steps: run_tests unittest, run_tests unittest, run_tests unittest (run_tests is approved for this task)"
        ],
        "{lines:?}"
    );
    // Something else in between starts a new line.
    app.notice("a note");
    auto_run_tests(&mut app, 7);
    let lines = conversation(&app);
    assert_eq!(
        lines.iter().filter(|l| l.contains("Auto-approved")).count(),
        2,
        "{lines:?}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some("Auto-approved run_tests unittest (run_tests is approved for this task)")
    );
}
