//! Snapshot tests of every visible state at 80x24 and 120x40 (ratatui's
//! `TestBackend` + insta), plus style checks so a diff that lost its colors fails.
// These tests check the exact colours drawn, so they name them.
#![allow(clippy::disallowed_types)]

use crate::support::tui::*;
use crossterm::event::KeyCode;
use insta::{assert_debug_snapshot, assert_snapshot};
use ratatui::style::{Color, Modifier};
use stepwise::agent::{AgentEvent, FinishReason};
use stepwise::tui::App;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn snap(name: &str, build: impl Fn() -> App) {
    for (w, h) in SIZES {
        let mut app = build();
        let term = draw(&mut app, w, h);
        assert_snapshot!(format!("{name}_{w}x{h}"), term.backend());
    }
}

#[test]
fn idle() {
    snap("idle", app);
}

#[test]
fn streaming_answer() {
    snap("streaming", || {
        let mut app = app();
        explored(&mut app);
        feed(
            &mut app,
            vec![
                AgentEvent::ModelRequest { steps_done: 3 },
                AgentEvent::AssistantDelta {
                    text: "Both files are small. I'll add `divide` right after `subtract`,\nthen a `TestDivide` class with two te".into(),
                },
            ],
        );
        app
    });
}

#[test]
fn pending_write_approval() {
    snap("approve_write", || {
        let mut app = app();
        explored(&mut app);
        keep_open(write_calculator(&mut app));
        app
    });
}

#[test]
fn pending_test_run_approval() {
    snap("approve_tests", || {
        let mut app = app();
        app.set_test_timeout(std::time::Duration::from_secs(300));
        explored(&mut app);
        keep_open(write_calculator(&mut app));
        press(&mut app, KeyCode::Char('a'));
        press(&mut app, KeyCode::Char('a'));
        finish_call(
            &mut app,
            4,
            "replace_text",
            stepwise::agent::CallStatus::Ok,
            "+7 −0",
            serde_json::json!({}),
        );
        keep_open(run_tests_request(&mut app, 5));
        app
    });
}

#[test]
fn hunk_review_with_the_middle_hunk_rejected() {
    snap("hunk_review", || {
        let mut app = app();
        explored(&mut app);
        keep_open(three_hunk_request(&mut app, true));
        draw(&mut app, 80, 24);
        press(&mut app, KeyCode::Char('j'));
        press(&mut app, KeyCode::Char(' '));
        app
    });
}

#[test]
fn live_preview_of_a_streaming_write() {
    snap("live_preview", || {
        let mut app = app();
        explored(&mut app);
        feed(
            &mut app,
            vec![
                AgentEvent::ModelRequest { steps_done: 3 },
                AgentEvent::LiveEditBase {
                    index: 0,
                    tool: "write_file".into(),
                    path: "calculator.py".into(),
                    old: Some(CALCULATOR.into()),
                },
                AgentEvent::ToolCallStreaming {
                    index: 0,
                    tool: "write_file".into(),
                    preview: stepwise::tools::calls::registry::LivePreview::WriteFile,
                    fragment: serde_json::json!({"path": "calculator.py", "content": format!("{CALCULATOR}{DIVIDE}")})
                        .to_string()
                        .chars()
                        .take(430)
                        .collect(),
                },
            ],
        );
        app
    });
}

#[test]
fn undo_prompt() {
    snap("undo_prompt", || {
        let mut app = app();
        finished(&mut app);
        type_text(&mut app, "/undo");
        press(&mut app, KeyCode::Enter);
        let new = format!("{CALCULATOR}{DIVIDE}");
        let (reply, rx) = tokio::sync::oneshot::channel();
        keep_open(rx);
        app.update(Msg::Agent(AgentEvent::ApprovalRequested(
            stepwise::agent::ApprovalRequest {
                step: 0,
                call_id: "undo_1".into(),
                tool: stepwise::tools::ToolName::WRITE_FILE.into(),
                action: stepwise::agent::ApprovalAction::Undo {
                    files: vec![stepwise::diff::FileDiff::compute(
                        "calculator.py",
                        Some(&new),
                        CALCULATOR,
                    )],
                },
                allow_for_task: false,
                reply,
            },
        )));
        settle(&mut app);
        app
    });
}

#[test]
fn session_diff_overlay() {
    snap("session_diff", || {
        let mut app = app();
        finished(&mut app);
        type_text(&mut app, "/diff");
        press(&mut app, KeyCode::Enter);
        app.update(Msg::Agent(AgentEvent::SessionDiff {
            files: vec![
                calculator_diff(),
                stepwise::diff::FileDiff::compute("notes.md", None, "# Notes\n"),
            ],
            git: Some(stepwise::agent::GitStatus {
                branch: Some("main".into()),
                other_dirty: vec!["README.md".into(), "setup.cfg".into()],
            }),
        }));
        app
    });
}

#[test]
fn finished_task() {
    snap("finished", || {
        let mut app = app();
        finished(&mut app);
        app
    });
}

#[test]
fn error_message() {
    snap("error", || {
        let mut app = app();
        submit(&mut app, "fix the bug");
        feed(
            &mut app,
            vec![
                AgentEvent::TaskStarted {
                    task: "fix the bug".into(),
                    max_steps: 20,
                    rules: vec![],
                },
                AgentEvent::ModelRequest { steps_done: 0 },
                AgentEvent::Error {
                    message: "the model server answered HTTP 401: Incorrect API key provided"
                        .into(),
                },
                task_finished(FinishReason::Error("401".into()), 0),
            ],
        );
        app
    });
}

#[test]
fn configuration_error() {
    snap("config_error", || {
        let mut app = app();
        app.set_config_error(
            "OPENAI_API_KEY is not set: add `OPENAI_API_KEY=...` to .env in the current directory (or export it), or point --base-url at a local server",
        );
        app
    });
}

#[test]
fn help_overlay() {
    snap("help", || {
        let mut app = app();
        draw(&mut app, 80, 24);
        press(&mut app, KeyCode::Char('?'));
        app
    });
}

#[test]
fn tool_call_details() {
    snap("details", || {
        let mut app = app();
        explored(&mut app);
        draw(&mut app, 80, 24);
        press(&mut app, KeyCode::Tab);
        press(&mut app, KeyCode::Tab);
        press(&mut app, KeyCode::Up);
        press(&mut app, KeyCode::Enter);
        app
    });
}

#[test]
fn too_small_terminal() {
    for (w, h) in [(59, 24), (80, 15)] {
        let mut app = app();
        explored(&mut app);
        let term = draw(&mut app, w, h);
        assert_snapshot!(format!("too_small_{w}x{h}"), term.backend());
    }
}

/// The whole buffer with its styles: a diff that lost its colors changes this snapshot.
#[test]
fn write_approval_styles() {
    let mut app = app();
    explored(&mut app);
    keep_open(write_calculator(&mut app));
    let term = draw(&mut app, 80, 24);
    assert_debug_snapshot!("approve_write_styles_80x24", term.backend().buffer());
}

/// The hunk review with its styles: the cursor bar, the struck-out rejected
/// hunk and the labels change this snapshot if they are lost.
#[test]
fn hunk_review_styles() {
    let mut app = app();
    explored(&mut app);
    keep_open(three_hunk_request(&mut app, true));
    draw(&mut app, 80, 24);
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char(' '));
    let term = draw(&mut app, 80, 24);
    assert_debug_snapshot!("hunk_review_styles_80x24", term.backend().buffer());
}

/// Added lines are green with their syntax colours, the hunk separator
/// cyan, context dim, and the gutter holds old/new line numbers.
#[test]
fn diff_colors() {
    let mut app = app();
    explored(&mut app);
    keep_open(write_calculator(&mut app));
    let term = draw(&mut app, 120, 40);
    let buf = term.backend().buffer();
    let text = screen(&term);
    let rows: Vec<&str> = text.lines().collect();
    let find = |needle: &str| {
        rows.iter()
            .position(|r| r.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} not on screen:\n{text}"))
    };
    let cell_of = |y: usize, needle: &str| {
        let col = rows[y]
            .find(needle)
            .map(|b| rows[y][..b].chars().count())
            .unwrap_or(0);
        &buf[(col as u16, y as u16)]
    };
    let added = find("def divide(a, b):");
    assert_eq!(cell_of(added, "+def").fg, Color::Green, "the + is green");
    let keyword = cell_of(added, "def divide").fg;
    assert!(
        keyword != Color::Green && keyword != Color::Reset,
        "added lines have syntax colours: {keyword:?}"
    );
    assert_eq!(
        cell_of(added, "(a, b)").fg,
        Color::Green,
        "text no scope colours stays green"
    );
    let context = find("return a - b");
    assert!(
        cell_of(context, "return a - b")
            .modifier
            .contains(Modifier::DIM),
        "context is dim"
    );
    let hunk = find("@@ -");
    assert_eq!(
        cell_of(hunk, "@@").fg,
        Color::Cyan,
        "hunk separators stand out"
    );
    assert!(
        rows[added].contains("14 │+def divide"),
        "new line number in the gutter: {}",
        rows[added]
    );
}

#[test]
fn removed_lines_are_red() {
    let mut app = app();
    explored(&mut app);
    let old = "x = 1\ny = 2\n";
    let diff = stepwise::diff::FileDiff::compute("vars.py", Some(old), "x = 1\ny = 3\n");
    let _open = propose(
        &mut app,
        4,
        stepwise::tools::ToolName::WRITE_FILE,
        stepwise::agent::ApprovalAction::Edit {
            path: "vars.py".into(),
            diff,
            proposed: String::new(),
            original: None,
        },
    );
    let term = draw(&mut app, 120, 40);
    let text = screen(&term);
    let y = text
        .lines()
        .position(|r| r.contains("-y = 2"))
        .expect("removed line shown");
    let x = text
        .lines()
        .nth(y)
        .and_then(|r| r.find("-y = 2").map(|b| r[..b].chars().count()))
        .unwrap_or(0);
    assert_eq!(term.backend().buffer()[(x as u16, y as u16)].fg, Color::Red);
}
