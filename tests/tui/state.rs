//! The App state machine without a terminal: key and core events in, state,
//! effects and approval decisions (through the requests' `oneshot` replies) out.

use crate::support::tui::*;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use stepwise::agent::AgentCommand;
use stepwise::agent::{AgentEvent, ApprovalAction, CallStatus, Decision, FinishReason};
use stepwise::diff::FileDiff;
use stepwise::tools::ToolName;
use stepwise::tui::{App, Effect, Focus, Msg, Overlay, TaskState};
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

fn effects(app: &mut App) -> Vec<String> {
    app.take_effects()
        .into_iter()
        .map(|e| match e {
            Effect::Agent(command) => match command {
                AgentCommand::RunTask { task, .. } => format!("run {task}"),
                AgentCommand::Resume { .. } => "resume".into(),
                AgentCommand::ClearConversation => "clear".into(),
                AgentCommand::ShowDiff => "diff".into(),
                AgentCommand::Undo { all, .. } => format!("undo all={all}"),
                AgentCommand::Compact => "compact".into(),
                AgentCommand::RevokeApprovals(tools) => {
                    let names: Vec<String> = tools.iter().map(|t| t.to_string()).collect();
                    format!("revoke {}", names.join(","))
                }
                AgentCommand::SetModel(name) => format!("model {name}"),
                AgentCommand::ListModels => "list models".to_string(),
                AgentCommand::SetStaged(on) => format!("staged {on}"),
            },
            Effect::SetMouseCapture(on) => format!("mouse {on}"),
            Effect::Quit => "quit".into(),
            Effect::EditProposal { path, .. } => format!("edit {path}"),
            Effect::Notify(text) => format!("notify {text}"),
            Effect::ListFiles(_) => "list files".to_string(),
            Effect::WarmGrammar { lang, .. } => format!("warm {lang}"),
        })
        .collect()
}

/// Type a line and press Enter, leaving the effects to the test.
fn enter_line(app: &mut App, text: &str) {
    type_text(app, text);
    press(app, KeyCode::Enter);
}

fn row_status(app: &App, step: u32) -> &'static str {
    app.calls()
        .rows()
        .iter()
        .find(|r| r.step == step)
        .map(|r| r.status.label())
        .unwrap_or("missing")
}

#[test]
fn y_approves() {
    let (mut app, mut rx) = at_write_prompt();
    assert_eq!(app.state(), TaskState::AwaitingApproval);
    assert_eq!(row_status(&app, 4), "awaiting approval");
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(decision(&mut rx), Some(Decision::Approve));
    assert!(!app.approvals().is_open());
    assert_eq!(row_status(&app, 4), "approved");
    assert_ne!(app.state(), TaskState::AwaitingApproval);
}

#[test]
fn n_enter_and_esc_decline() {
    for code in [KeyCode::Char('n'), KeyCode::Enter, KeyCode::Esc] {
        let (mut app, mut rx) = at_write_prompt();
        press(&mut app, code);
        assert_eq!(
            decision(&mut rx),
            Some(Decision::Decline { reason: None }),
            "{code:?}"
        );
        assert_eq!(row_status(&app, 4), "declined");
        assert!(
            app.take_effects()
                .iter()
                .all(|e| !matches!(e, Effect::Agent(AgentCommand::RunTask { .. })))
        );
    }
}

#[test]
fn r_declines_with_the_typed_reason() {
    let (mut app, mut rx) = at_write_prompt();
    press(&mut app, KeyCode::Char('r'));
    type_text(&mut app, "use a guard clausx");
    press(&mut app, KeyCode::Backspace);
    type_text(&mut app, "e");
    assert!(
        matches!(rx.try_recv(), Err(TryRecvError::Empty)),
        "typing a reason decides nothing"
    );
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        decision(&mut rx),
        Some(Decision::Decline {
            reason: Some("use a guard clause".into())
        })
    );
    assert!(
        app.input().is_empty(),
        "the reason never reaches the task input"
    );
}

#[test]
fn esc_leaves_the_reason_and_keeps_the_prompt() {
    let (mut app, mut rx) = at_write_prompt();
    press(&mut app, KeyCode::Char('r'));
    type_text(&mut app, "nah");
    press(&mut app, KeyCode::Esc);
    assert!(matches!(rx.try_recv(), Err(TryRecvError::Empty)));
    assert!(app.approvals().is_open() && app.approvals().reason().is_none());
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(decision(&mut rx), Some(Decision::Approve));
}

#[test]
fn other_keys_do_nothing_while_a_prompt_is_open() {
    let (mut app, mut rx) = at_write_prompt();
    for code in [
        KeyCode::Char('x'),
        KeyCode::Char('q'),
        // `?` opens the help here (see `commands.rs`).
        KeyCode::Char('/'),
        KeyCode::Backspace,
        KeyCode::Down,
        KeyCode::PageDown,
    ] {
        press(&mut app, code);
    }
    assert!(matches!(rx.try_recv(), Err(TryRecvError::Empty)));
    assert!(app.approvals().is_open());
    assert_eq!(app.focus(), Focus::Input);
    assert!(app.take_effects().is_empty());
    // Tab moves between the panes while the prompt waits, and answers nothing.
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Conversation);
    assert!(matches!(rx.try_recv(), Err(TryRecvError::Empty)));
    app.update(Msg::Terminal(Event::Paste("y".into())));
    assert!(matches!(rx.try_recv(), Err(TryRecvError::Empty)));
    assert_eq!(app.input().text(), "y", "a paste is text in the draft");
}

#[test]
fn the_diff_scrolls_while_the_prompt_is_open() {
    let (mut app, mut rx) = at_write_prompt();
    let top = |app: &App| app.diff().scroll().top(app.diff().total_rows(), 8);
    assert_eq!(top(&app), 0);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    assert_eq!(top(&app), 2);
    press(&mut app, KeyCode::Home);
    assert_eq!(top(&app), 0);
    assert!(matches!(rx.try_recv(), Err(TryRecvError::Empty)));
}

#[test]
fn ctrl_c_during_a_prompt_declines_and_interrupts() {
    let (mut app, mut rx) = at_write_prompt();
    let token = app.cancel_token().cloned().expect("task running");
    app.update(Msg::from(ctrl('c')));
    assert_eq!(decision(&mut rx), Some(Decision::Decline { reason: None }));
    assert!(token.is_cancelled());
    assert_eq!(app.state(), TaskState::Interrupting);
    assert!(!app.quitting(), "an interrupt is not a quit");
    app.update(Msg::Agent(task_finished(FinishReason::Cancelled, 4)));
    assert_eq!(app.state(), TaskState::Interrupted);
    app.update(Msg::from(ctrl('c')));
    assert_eq!(effects(&mut app), ["quit"], "Ctrl+C when idle quits");
}

#[test]
fn quitting_during_a_prompt_declines_it() {
    let (mut app, mut rx) = at_write_prompt();
    let token = app.cancel_token().cloned().expect("task running");
    app.update(Msg::from(ctrl('d')));
    assert!(undecided(&mut rx), "the first Ctrl+D only asks");
    assert!(!app.quitting());
    app.update(Msg::from(ctrl('d')));
    assert_eq!(decision(&mut rx), Some(Decision::Decline { reason: None }));
    assert!(token.is_cancelled());
    assert!(app.quitting());
    assert_eq!(effects(&mut app), ["quit"]);
}

#[test]
fn queued_approvals_are_answered_in_order() {
    let (mut app, mut first) = at_write_prompt();
    let diff = FileDiff::compute("notes.md", None, "hello\n");
    let mut second = propose(
        &mut app,
        5,
        ToolName::WRITE_FILE,
        ApprovalAction::Edit {
            path: "notes.md".into(),
            diff,
            proposed: String::new(),
            original: None,
        },
    );
    assert_eq!(app.approvals().len(), 2);
    assert_eq!(app.approvals().current().map(|r| r.step), Some(4));
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(decision(&mut first), Some(Decision::Approve));
    assert!(matches!(second.try_recv(), Err(TryRecvError::Empty)));
    assert_eq!(app.approvals().current().map(|r| r.step), Some(5));
    assert_eq!(app.state(), TaskState::AwaitingApproval);
    settle(&mut app);
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(
        decision(&mut second),
        Some(Decision::Decline { reason: None })
    );
    assert!(!app.approvals().is_open());
}

#[test]
fn a_request_the_core_gave_up_on_closes_its_prompt() {
    let (mut app, rx) = at_write_prompt();
    drop(rx);
    app.update(Msg::Agent(AgentEvent::ToolFinished {
        step: 4,
        call_id: "call_4".into(),
        tool: "replace_text".into(),
        status: CallStatus::Declined,
        summary: "interrupted".into(),
        result: serde_json::json!({}),
        coloured_output: None,
    }));
    assert!(!app.approvals().is_open());
    assert_ne!(app.state(), TaskState::AwaitingApproval);
}

#[test]
fn ctrl_c_interrupts_a_running_task_and_quits_when_idle() {
    let mut app = app();
    assert_eq!(submit(&mut app, "task one").as_deref(), Some("task one"));
    let token = app.cancel_token().cloned().expect("running");
    app.update(Msg::from(ctrl('c')));
    assert!(token.is_cancelled() && !app.quitting());
    app.update(Msg::Agent(task_finished(FinishReason::Cancelled, 0)));
    assert!(!app.is_running());
    app.update(Msg::from(ctrl('c')));
    assert!(app.quitting());
}

#[test]
fn a_second_task_waits_for_the_first() {
    let mut app = app();
    submit(&mut app, "one");
    assert_eq!(submit(&mut app, "two"), None);
    assert!(app.flash().is_some());
    assert_eq!(app.input().text(), "two", "the text is kept");
    app.update(Msg::Agent(task_finished(FinishReason::Answered, 1)));
    press(&mut app, KeyCode::Enter);
    assert_eq!(effects(&mut app), ["run two"], "the conversation continues");
}

#[test]
fn multi_line_input_and_history() {
    let mut app = app();
    type_text(&mut app, "first line");
    app.update(Msg::from(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)));
    type_text(&mut app, "second");
    app.update(Msg::from(KeyEvent::new(
        KeyCode::Enter,
        KeyModifiers::SHIFT,
    )));
    type_text(&mut app, "third");
    press(&mut app, KeyCode::Enter);
    assert_eq!(effects(&mut app), ["run first line\nsecond\nthird"]);
    app.update(Msg::Agent(task_finished(FinishReason::Answered, 1)));
    submit(&mut app, "another");
    app.update(Msg::Agent(task_finished(FinishReason::Answered, 1)));
    press(&mut app, KeyCode::Up);
    assert_eq!(app.input().text(), "another");
    press(&mut app, KeyCode::Up);
    assert_eq!(app.input().text(), "first line\nsecond\nthird");
    press(&mut app, KeyCode::Down);
    assert_eq!(app.input().text(), "another");
    press(&mut app, KeyCode::Down);
    assert_eq!(app.input().text(), "");
    // Shell-style editing keys.
    type_text(&mut app, "hello world");
    app.update(Msg::from(ctrl('w')));
    assert_eq!(app.input().text(), "hello ");
    app.update(Msg::from(ctrl('u')));
    assert_eq!(app.input().text(), "");
}

#[test]
fn slash_commands() {
    let mut app = app();
    enter_line(&mut app, "/help");
    assert!(matches!(app.overlay(), Some(Overlay::Help)));
    press(&mut app, KeyCode::Esc);
    assert!(app.overlay().is_none());

    finished(&mut app);
    effects(&mut app);
    assert!(app.conversation().line_count() > 5);
    enter_line(&mut app, "/clear");
    assert_eq!(effects(&mut app), ["clear"]);
    assert!(app.calls().rows().is_empty());
    assert_eq!(
        app.conversation().line_count(),
        1,
        "only the 'new conversation' notice"
    );

    enter_line(&mut app, "/continue");
    assert_eq!(effects(&mut app), ["resume"]);
    assert!(app.is_running());
    enter_line(&mut app, "/continue");
    assert!(effects(&mut app).is_empty(), "not while running");
    app.update(Msg::Agent(task_finished(FinishReason::Cancelled, 0)));

    enter_line(&mut app, "/frobnicate");
    assert!(
        app.flash()
            .as_deref()
            .is_some_and(|f| f.contains("/frobnicate"))
    );
    assert!(effects(&mut app).is_empty());

    enter_line(&mut app, "/quit");
    assert_eq!(effects(&mut app), ["quit"]);
}

#[test]
fn help_opens_with_question_mark_only_on_an_empty_input_and_with_f1() {
    let mut app = app();
    type_text(&mut app, "what?");
    assert!(app.overlay().is_none());
    assert_eq!(app.input().text(), "what?");
    press(&mut app, KeyCode::F(1));
    assert!(matches!(app.overlay(), Some(Overlay::Help)));
    press(&mut app, KeyCode::Char('x'));
    assert!(
        matches!(app.overlay(), Some(Overlay::Help)),
        "help takes the keys until closed"
    );
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.input().text(), "what?");
}

#[test]
fn the_header_names_the_rule_files_the_core_reports() {
    let mut app = app();
    assert!(app.rules().is_empty());
    app.update(Msg::Agent(AgentEvent::SessionReady {
        rules: vec!["AGENTS.md".into()],
        sandbox: String::new(),
        limits: String::new(),
    }));
    assert_eq!(app.rules(), ["AGENTS.md"]);
    let header = draw(&mut app, 120, 40);
    assert!(screen(&header).contains("AGENTS.md"), "{}", screen(&header));
}

#[test]
fn continue_is_the_cores_decision_and_a_refusal_returns_to_idle() {
    let mut app = app();
    enter_line(&mut app, "/continue");
    assert_eq!(effects(&mut app), ["resume"], "the TUI does not guess");
    assert!(app.is_running());
    app.update(Msg::Agent(AgentEvent::ResumeRefused {
        message: "nothing to continue: send a task first".into(),
    }));
    assert!(!app.is_running());
    assert_eq!(app.state(), TaskState::Idle);
    assert_eq!(
        app.flash().as_deref(),
        Some("nothing to continue: send a task first")
    );
}

#[test]
fn the_header_follows_the_cores_scope_changes() {
    let mut app = app();
    app.update(Msg::Agent(AgentEvent::ScopesChanged {
        approved: vec![ToolName::REPLACE_TEXT.into(), ToolName::RUN_TESTS.into()],
    }));
    assert_eq!(app.auto_approved(), ["replace_text", "run_tests"]);
    app.update(Msg::Agent(AgentEvent::ScopesChanged { approved: vec![] }));
    assert!(app.auto_approved().is_empty());
}
