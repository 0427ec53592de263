//! The diff pane's lazy layout: a resize keeps the same diff line at the
//! top and hunk jumps land on the hunk at the new width; hunks are styled
//! once (only those shown), so toggling a hunk or resizing restyles nothing;
//! a live preview is still rebuilt only as often as its throttle allows.

use crate::support::tui::*;
use crossterm::event::KeyCode;
use ratatui::style::Modifier;
use std::time::Duration;
use stepwise::agent::{AgentEvent, ApprovalAction};
use stepwise::diff::FileDiff;
use stepwise::tools::ToolName;
use stepwise::tui::panes::scroll::ScrollMove;
use stepwise::tui::{App, Focus, Msg};

/// A file of `n` lines where every 10th line changes into a long one (long
/// enough to wrap in a narrow pane, not in a wide one): `n / 10` hunks.
fn long_lines(n: usize) -> (String, String) {
    let old: String = (1..=n).map(|i| format!("line {i}\n")).collect();
    let new: String = (1..=n)
        .map(|i| match i % 10 {
            5 => format!("line {i} {}\n", "and a long tail of words".repeat(2)),
            _ => format!("line {i}\n"),
        })
        .collect();
    (old, new)
}

fn reviewing(n: usize) -> App {
    let mut app = app();
    explored(&mut app);
    let (old, new) = long_lines(n);
    let diff = FileDiff::compute("notes.txt", Some(&old), &new);
    assert_eq!(diff.hunks.len(), n / 10);
    keep_open(propose_scoped(
        &mut app,
        4,
        ToolName::WRITE_FILE,
        ApprovalAction::Edit {
            path: "notes.txt".into(),
            diff,
            proposed: new,
            original: Some(old),
        },
        true,
    ));
    app.set_now(app.now() + stepwise::tui::approval::ARMING);
    app
}

/// The text of the diff pane's first row.
fn first_diff_row(app: &App, shown: &str) -> String {
    let inner = app.panes().diff.expect("diff pane").inner();
    let row = shown.lines().nth(inner.y as usize).unwrap_or_default();
    row.chars()
        .skip(inner.x as usize)
        .take(inner.width as usize)
        .collect::<String>()
        .trim_end()
        .to_string()
}

#[test]
fn a_resize_keeps_the_same_diff_line_at_the_top() {
    let mut app = reviewing(200);
    draw(&mut app, 200, 50);
    let wide_total = app.diff().total_rows();
    for _ in 0..2 {
        app.scroll(Focus::Diff, ScrollMove::PageDown);
    }
    app.scroll(Focus::Diff, ScrollMove::Down(2));
    let shown = screen(&draw(&mut app, 200, 50));
    let top = first_diff_row(&app, &shown);
    assert!(
        top.ends_with("│ line 88"),
        "a line of hunk 9 at the top: {top:?}"
    );
    let shown = screen(&draw(&mut app, 60, 50));
    assert!(
        app.diff().total_rows() > wide_total,
        "long lines wrap when narrow, so row numbers move"
    );
    assert_eq!(first_diff_row(&app, &shown), top, "{shown}");
    let shown = screen(&draw(&mut app, 200, 50));
    assert_eq!(first_diff_row(&app, &shown), top, "and back: {shown}");
}

#[test]
fn hunk_jumps_after_a_resize_land_on_the_hunk() {
    let mut app = reviewing(200);
    draw(&mut app, 200, 50);
    for _ in 0..5 {
        press(&mut app, KeyCode::Char('j'));
    }
    draw(&mut app, 200, 50);
    draw(&mut app, 90, 30);
    for _ in 0..6 {
        press(&mut app, KeyCode::Char('j'));
    }
    let term = draw(&mut app, 90, 30);
    let shown = screen(&term);
    assert_eq!(app.approvals().review().cursor, 11);
    let (_, y) = find(&shown, "✓ hunk 12/20").expect("the hunk's separator is in view");
    assert!(
        shown
            .lines()
            .nth(y as usize)
            .unwrap_or_default()
            .contains("@@ -")
    );
    let inner = app.panes().diff.expect("diff pane").inner();
    let margin = &term.backend().buffer()[(inner.x, y)];
    assert_eq!(margin.symbol(), "▌", "{shown}");
    assert!(
        shown.contains("+line 115 and a long"),
        "its lines follow: {shown}"
    );
}

#[test]
fn hunks_are_styled_once_and_only_when_shown() {
    let mut app = reviewing(400);
    draw(&mut app, 120, 40);
    let styled = app.diff().stylings();
    assert!(styled > 0 && styled < 40, "only hunks in view: {styled}");
    // A toggle is painted over the rows: nothing is styled again.
    press(&mut app, KeyCode::Char(' '));
    let term = draw(&mut app, 120, 40);
    assert!(!app.approvals().review().accepted[0]);
    assert_eq!(app.diff().stylings(), styled);
    let shown = screen(&term);
    let cell = |needle: &str| {
        let (x, y) = find(&shown, needle).expect("on screen");
        term.backend().buffer()[(x, y)].modifier
    };
    assert!(
        cell("+line 5 and").contains(Modifier::CROSSED_OUT),
        "{shown}"
    );
    assert!(
        !cell("+line 15 and").contains(Modifier::CROSSED_OUT),
        "{shown}"
    );
    // A resize re-wraps the styled spans it kept.
    draw(&mut app, 90, 40);
    draw(&mut app, 120, 40);
    assert_eq!(app.diff().stylings(), styled);
    // Scrolling further styles the hunks that come into view, once each.
    app.scroll(Focus::Diff, ScrollMove::Bottom);
    draw(&mut app, 120, 40);
    let after = app.diff().stylings();
    assert!(after > styled && after < 40, "{after}");
    app.scroll(Focus::Diff, ScrollMove::Top);
    draw(&mut app, 120, 40);
    assert_eq!(app.diff().stylings(), after);
}

#[test]
fn a_live_preview_is_rebuilt_no_more_often_than_its_throttle() {
    let mut app = app();
    explored(&mut app);
    app.update(Msg::Agent(AgentEvent::ModelRequest { steps_done: 3 }));
    app.update(Msg::Agent(AgentEvent::LiveEditBase {
        index: 0,
        tool: "write_file".into(),
        path: "notes.txt".into(),
        old: Some("a\n".into()),
    }));
    let stream = |app: &mut App, fragment: &str| {
        app.update(Msg::Agent(AgentEvent::ToolCallStreaming {
            index: 0,
            tool: "write_file".into(),
            preview: stepwise::tools::calls::registry::LivePreview::WriteFile,
            fragment: fragment.into(),
        }))
    };
    stream(&mut app, r#"{"path": "notes.txt", "content": "a\nb\n"#);
    draw(&mut app, 120, 40);
    let key = app.diff().key();
    for i in 0..5 {
        app.set_now(app.now() + Duration::from_millis(16));
        stream(&mut app, &format!("line {i}\\n"));
        let shown = screen(&draw(&mut app, 120, 40));
        assert_eq!(app.diff().key(), key, "held back by the throttle");
        assert!(!shown.contains(&format!("+line {i}")), "{shown}");
    }
    app.set_now(app.now() + stepwise::tui::panes::diff::live::REFRESH);
    let shown = screen(&draw(&mut app, 120, 40));
    assert_ne!(app.diff().key(), key);
    assert!(shown.contains("+line 4"), "{shown}");
}

/// A diff pane that goes away (here a retried stream clears the live
/// preview) while its hunks' colours are still being computed asks for no
/// more frames: nothing in view waits for them.
#[test]
fn colours_pending_for_a_diff_no_longer_shown_ask_for_no_frames() {
    let mut app = app();
    submit(&mut app, "task");
    let old: String = (0..40)
        .map(|i| format!("def f{i}():\n    return {i}\n"))
        .collect();
    app.update(Msg::Agent(AgentEvent::LiveEditBase {
        index: 0,
        tool: "write_file".into(),
        path: "f.py".into(),
        old: Some(old.clone()),
    }));
    let new = old.replacen("return 20", "return 21", 1);
    let args = serde_json::json!({"path": "f.py", "content": new}).to_string();
    app.update(Msg::Agent(AgentEvent::ToolCallStreaming {
        index: 0,
        tool: "write_file".into(),
        preview: stepwise::tools::calls::registry::LivePreview::WriteFile,
        fragment: args,
    }));
    // One frame, as the run loop draws it: the hunk's colours are started
    // on a thread and picked up by a later frame.
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    let frame = |app: &mut App, term: &mut ratatui::Terminal<_>| {
        term.draw(|f| stepwise::tui::prepare_and_draw(f, app))
            .unwrap();
    };
    frame(&mut app, &mut term);
    assert!(app.colouring_due(), "the hunk's colours are on their way");
    app.update(Msg::Agent(AgentEvent::Retrying {
        retry: 1,
        max_retries: 3,
        delay_ms: 500,
        error: "the model stream broke: reset".into(),
    }));
    for _ in 0..50 {
        frame(&mut app, &mut term);
        if !app.colouring_due() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let shown = screen(&term);
    assert!(!shown.contains("Diff"), "{shown}");
    assert!(
        !app.colouring_due(),
        "frames asked for a diff that is not shown"
    );
}
