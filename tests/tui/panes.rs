//! The panes in the App state machine: following and scrolling the
//! conversation, the mouse, selecting older steps, retried replies, tiny
//! terminals, control characters, and configuration errors.

use crate::support::tui::*;
use crossterm::event::{Event, KeyCode, KeyModifiers, MouseEvent, MouseEventKind};
use stepwise::agent::{AgentEvent, ApprovalAction, CallStatus, Decision};
use stepwise::diff::FileDiff;
use stepwise::tools::ToolName;
use stepwise::tui::{App, Effect, Focus, Overlay};
use tokio::sync::oneshot::error::TryRecvError;

fn effects(app: &mut App) -> Vec<String> {
    app.take_effects()
        .into_iter()
        .map(|e| match e {
            Effect::SetMouseCapture(on) => format!("mouse {on}"),
            other => format!("{other:?}"),
        })
        .collect()
}

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
fn conversation_follows_until_scrolled_up_and_resumes_at_the_end() {
    let mut app = app();
    for i in 0..60 {
        app.update(Msg::Agent(AgentEvent::Error {
            message: format!("line {i}"),
        }));
    }
    draw(&mut app, 80, 24);
    assert!(app.conversation().scroll().is_following());
    press(&mut app, KeyCode::PageUp);
    assert!(!app.conversation().scroll().is_following());
    let term = draw(&mut app, 80, 24);
    let before = screen(&term);
    app.update(Msg::Agent(AgentEvent::Error {
        message: "newest".into(),
    }));
    let term = draw(&mut app, 80, 24);
    assert_eq!(
        screen(&term).lines().nth(4),
        before.lines().nth(4),
        "scrolled view stays put"
    );
    assert!(!screen(&term).contains("newest"));
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Conversation);
    press(&mut app, KeyCode::End);
    assert!(app.conversation().scroll().is_following());
    let term = draw(&mut app, 80, 24);
    assert!(screen(&term).contains("newest"));
}

#[test]
fn mouse_wheel_scrolls_the_pane_under_the_pointer_and_f2_releases_the_mouse() {
    let mut app = app();
    for i in 0..60 {
        app.update(Msg::Agent(AgentEvent::Error {
            message: format!("line {i}"),
        }));
    }
    draw(&mut app, 80, 24);
    let wheel = |kind| {
        Event::Mouse(MouseEvent {
            kind,
            column: 10,
            row: 5,
            modifiers: KeyModifiers::NONE,
        })
    };
    app.update(Msg::Terminal(wheel(MouseEventKind::ScrollUp)));
    assert!(!app.conversation().scroll().is_following());
    for _ in 0..5 {
        app.update(Msg::Terminal(wheel(MouseEventKind::ScrollDown)));
    }
    assert!(
        app.conversation().scroll().is_following(),
        "back at the bottom it follows again"
    );
    press(&mut app, KeyCode::F(2));
    assert!(!app.mouse_capture());
    assert_eq!(effects(&mut app), ["mouse false"]);
}

#[test]
fn older_steps_can_be_selected_and_opened() {
    let mut app = app();
    explored(&mut app);
    keep_open(write_calculator(&mut app));
    press(&mut app, KeyCode::Char('y'));
    finish_call(
        &mut app,
        4,
        "replace_text",
        CallStatus::Ok,
        "+7 −0",
        serde_json::json!({}),
    );
    let diff = FileDiff::compute("test_calculator.py", Some("a\n"), "a\nb\n");
    let _open = propose(
        &mut app,
        5,
        ToolName::REPLACE_TEXT,
        ApprovalAction::Edit {
            path: "test_calculator.py".into(),
            diff,
            proposed: String::new(),
            original: None,
        },
    );
    press(&mut app, KeyCode::Char('y'));
    draw(&mut app, 80, 24);
    assert_eq!(
        app.calls().diff_row(),
        Some(4),
        "follows the newest proposal"
    );
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::ToolCalls);
    press(&mut app, KeyCode::Up);
    assert_eq!(
        app.calls().diff_row(),
        Some(3),
        "an older selected step shows its diff"
    );
    let term = draw(&mut app, 80, 24);
    assert!(screen(&term).contains("Diff · calculator.py"));
    press(&mut app, KeyCode::Enter);
    assert!(matches!(app.overlay(), Some(Overlay::Detail(_))));
    press(&mut app, KeyCode::Esc);
    assert!(app.overlay().is_none());
    press(&mut app, KeyCode::End);
    assert_eq!(
        app.calls().diff_row(),
        Some(4),
        "End follows the newest again"
    );
}

#[test]
fn a_retried_request_keeps_its_partial_text_marked_discarded() {
    let mut app = app();
    submit(&mut app, "task");
    app.update(Msg::Agent(AgentEvent::AssistantDelta {
        text: "half an ans".into(),
    }));
    app.update(Msg::Agent(AgentEvent::Retrying {
        retry: 1,
        max_retries: 3,
        delay_ms: 500,
        error: "the model stream broke: reset".into(),
    }));
    let term = draw(&mut app, 80, 24);
    let s = screen(&term);
    assert!(s.contains("half an ans"), "kept on screen: {s}");
    assert!(s.contains("discarded"), "{s}");
    assert!(s.contains("retrying (1/3)"), "{s}");
}

#[test]
fn keys_do_nothing_when_the_terminal_is_too_small() {
    let (mut app, mut rx) = at_write_prompt();
    draw(&mut app, 50, 12);
    press(&mut app, KeyCode::Char('y'));
    assert!(
        matches!(rx.try_recv(), Err(TryRecvError::Empty)),
        "nothing approved unseen"
    );
    draw(&mut app, 80, 24);
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(decision(&mut rx), Some(Decision::Approve));
}

#[test]
fn control_characters_never_reach_the_screen() {
    let mut app = app();
    explored(&mut app);
    app.update(Msg::Agent(AgentEvent::AssistantDelta {
        text: "evil \x1b[2J\x1b]0;title\x07 text\r\n\tindented\u{202e}".into(),
    }));
    let term = draw(&mut app, 80, 24);
    let shown = screen(&term);
    // Escapes are shown as symbols (not dropped), tabs expanded to tab stops.
    assert!(shown.contains("evil ␛[2J␛]0;title␇ text"), "{shown}");
    // Markdown drops a continuation line's leading whitespace (CommonMark);
    // tabs still expand to tab stops in code (the markdown unit tests).
    assert!(shown.contains("\n  indented�"), "{shown}");
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Enter);
    assert!(
        matches!(app.overlay(), Some(Overlay::Detail(_))),
        "details of the read with escapes"
    );
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(
        shown.contains("        indented    with tabs␛[31m"),
        "{shown}"
    );
    for (w, h) in [(80, 24), (120, 40)] {
        let term = draw(&mut app, w, h);
        let buf = term.backend().buffer();
        for cell in buf.content() {
            assert!(
                !cell
                    .symbol()
                    .chars()
                    .any(|c| c.is_control() || c == '\u{202e}'),
                "control character in a cell: {:?}",
                cell.symbol()
            );
        }
    }
}

#[test]
fn config_errors_show_in_the_ui_and_block_tasks() {
    let mut app = app();
    app.set_config_error("OPENAI_API_KEY is not set");
    assert_eq!(submit(&mut app, "do it"), None);
    let term = draw(&mut app, 80, 24);
    assert!(screen(&term).contains("Cannot run the task: OPENAI_API_KEY is not set"));
    assert!(!app.is_running());
}

#[test]
fn the_header_says_how_test_runs_are_confined() {
    let mut app = app();
    let before = screen(&draw(&mut app, 120, 40));
    assert!(!before.contains("tests: "), "{before}");
    app.update(Msg::Agent(AgentEvent::SessionReady {
        rules: vec![],
        sandbox: "sandbox: no network isolation".into(),
        limits: String::new(),
    }));
    assert_eq!(app.sandbox(), "sandbox: no network isolation");
    let header = screen(&draw(&mut app, 120, 40));
    assert!(
        header.contains("tests: sandbox: no network isolation"),
        "{header}"
    );
}
