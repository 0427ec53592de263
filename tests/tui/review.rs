//! Reviewing proposals in the App state machine: hunk-level approval, the
//! user's edited version, approval scopes (`a`, the header, revoking), and
//! live diffs of edits still streaming in.
// These tests check the exact colours drawn, so they name them.
#![allow(clippy::disallowed_types)]

use crate::support::tui::*;
use crossterm::event::KeyCode;
use ratatui::style::{Color, Modifier};
use std::time::Duration;
use stepwise::agent::{AgentEvent, Decision};
use stepwise::tui::{App, Effect};
use tokio::sync::oneshot::Receiver;

fn decision(rx: &mut Receiver<Decision>) -> Option<Decision> {
    rx.try_recv().ok()
}

fn at_three_hunks(allow_for_task: bool) -> (App, Receiver<Decision>) {
    let mut app = app();
    explored(&mut app);
    let rx = three_hunk_request(&mut app, allow_for_task);
    draw(&mut app, 80, 24);
    (app, rx)
}

#[test]
fn the_middle_hunk_rejected_applies_exactly_the_others() {
    let (mut app, mut rx) = at_three_hunks(true);
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("hunk 1/3 · 3 of 3 accepted"), "{shown}");
    assert!(shown.contains("✓ hunk 1/3"), "{shown}");
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(app.approvals().review().accepted, [true, false, true]);
    let term = draw(&mut app, 120, 40);
    let shown = screen(&term);
    assert!(shown.contains("hunk 2/3 · 2 of 3 accepted"), "{shown}");
    assert!(shown.contains("✗ hunk 2/3 rejected"), "{shown}");
    // The rejected hunk's lines are struck out, the others are not.
    let buf = term.backend().buffer();
    let (x, y) = find(&shown, "line twenty-and-a-half").expect("hunk 2 on screen");
    assert!(buf[(x, y)].modifier.contains(Modifier::CROSSED_OUT));
    let (x, y) = find(&shown, "line two").expect("hunk 1 on screen");
    assert!(!buf[(x, y)].modifier.contains(Modifier::CROSSED_OUT));
    assert!(undecided(&mut rx), "toggling decides nothing");
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(
        decision(&mut rx),
        Some(Decision::ApproveHunks {
            accepted: vec![0, 2]
        })
    );
}

#[test]
fn y_without_toggling_accepts_all_n_rejects_all_and_toggling_back_restores() {
    let (mut app, mut rx) = at_three_hunks(true);
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(decision(&mut rx), Some(Decision::Approve));

    let (mut app, mut rx) = at_three_hunks(true);
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(decision(&mut rx), Some(Decision::Decline { reason: None }));

    let (mut app, mut rx) = at_three_hunks(true);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(decision(&mut rx), Some(Decision::Approve));

    let (mut app, mut rx) = at_three_hunks(true);
    for _ in 0..3 {
        press(&mut app, KeyCode::Char(' '));
        press(&mut app, KeyCode::Char('j'));
    }
    press(&mut app, KeyCode::Char('y'));
    assert!(
        matches!(decision(&mut rx), Some(Decision::Decline { reason: Some(r) }) if r.contains("every hunk")),
        "rejecting every hunk declines"
    );
}

#[test]
fn moving_to_a_hunk_scrolls_it_into_view() {
    let (mut app, _rx) = at_three_hunks(true);
    let before = screen(&draw(&mut app, 80, 24));
    assert!(
        !before.contains("-line 38"),
        "hunk 3 is below the fold:\n{before}"
    );
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.approvals().review().cursor, 2);
    let term = draw(&mut app, 80, 24);
    let shown = screen(&term);
    assert!(shown.contains("-line 38"), "{shown}");
    // The cursor's hunk is marked in the margin.
    let (_, y) = find(&shown, "-line 38").expect("on screen");
    let margin = &term.backend().buffer()[(0, y)];
    assert_eq!(margin.symbol(), "▌");
    assert_eq!(margin.fg, Color::Yellow);
    press(&mut app, KeyCode::Char('k'));
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Up);
    assert_eq!(
        app.approvals().review().cursor,
        0,
        "stops at the first hunk"
    );
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(shown.contains("+line two"), "{shown}");
}

#[test]
fn a_single_hunk_edit_keeps_arrows_for_scrolling_and_space_does_nothing() {
    let mut app = app();
    explored(&mut app);
    let mut rx = write_calculator(&mut app);
    draw(&mut app, 80, 24);
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Down);
    assert_eq!(app.diff().scroll().top(app.diff().total_rows(), 8), 1);
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(!shown.contains("Space"), "no hunk keys offered:\n{shown}");
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(decision(&mut rx), Some(Decision::Approve));
}

#[test]
fn e_opens_the_editor_and_y_writes_the_users_version() {
    let (mut app, mut rx) = at_three_hunks(true);
    press(&mut app, KeyCode::Char('e'));
    let (serial, content) = app
        .take_effects()
        .into_iter()
        .find_map(|e| match e {
            Effect::EditProposal {
                serial,
                path,
                content,
            } => {
                assert_eq!(path, "notes.txt");
                Some((serial, content))
            }
            _ => None,
        })
        .expect("the run loop is asked to open the editor");
    let (_, proposed) = three_hunks();
    assert_eq!(content, proposed, "the editor gets the proposal");
    assert!(undecided(&mut rx));

    // Saved without changes: nothing to review again.
    edited(&mut app, serial, Ok(proposed.clone()));
    assert!(app.approvals().review().edited.is_none());
    assert!(
        app.flash()
            .as_deref()
            .is_some_and(|f| f.contains("Nothing was changed"))
    );
    // The editor failed: the proposal stands.
    edited(&mut app, serial, Err("the editor `vi` failed".into()));
    assert!(app.approvals().review().edited.is_none());

    let mine = proposed.replace("line twenty-and-a-half\n", "my own line\n");
    edited(&mut app, serial, Ok(mine.clone()));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("your edited version"), "{shown}");
    assert!(shown.contains("+my own line"), "{shown}");
    assert!(
        shown.contains("Write your edited version of notes.txt"),
        "{shown}"
    );
    assert!(
        app.approvals().current().is_some(),
        "shown again for y/N, not approved"
    );
    press(&mut app, KeyCode::Char('a'));
    assert!(undecided(&mut rx), "a would drop the user's version");
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(
        decision(&mut rx),
        Some(Decision::ApproveEdited { content: mine })
    );
}

/// The diff pane's text (the right-hand column of a 120-column screen).
fn diff_pane(app: &mut App) -> String {
    screen(&draw(app, 120, 40))
}

#[test]
fn after_y_on_the_users_version_the_diff_pane_shows_what_was_written() {
    let (mut app, mut rx) = at_three_hunks(true);
    press(&mut app, KeyCode::Char('e'));
    let serial = app
        .take_effects()
        .into_iter()
        .find_map(|e| match e {
            Effect::EditProposal { serial, .. } => Some(serial),
            _ => None,
        })
        .expect("edit requested");
    let (_, proposed) = three_hunks();
    let mine = proposed.replace("line twenty-and-a-half\n", "my own line\n");
    edited(&mut app, serial, Ok(mine.clone()));
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(
        decision(&mut rx),
        Some(Decision::ApproveEdited { content: mine })
    );
    let shown = diff_pane(&mut app);
    assert!(shown.contains("+my own line"), "{shown}");
    assert!(!shown.contains("twenty-and-a-half"), "{shown}");
}

#[test]
fn after_y_on_some_hunks_the_diff_pane_shows_only_those() {
    let (mut app, mut rx) = at_three_hunks(true);
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('y'));
    assert!(matches!(
        decision(&mut rx),
        Some(Decision::ApproveHunks { .. })
    ));
    let shown = diff_pane(&mut app);
    assert!(shown.contains("+line two"), "{shown}");
    assert!(!shown.contains("twenty-and-a-half"), "{shown}");
}

#[test]
fn an_edit_for_a_request_that_went_away_is_not_used() {
    let (mut app, rx) = at_three_hunks(true);
    press(&mut app, KeyCode::Char('e'));
    let serial = app
        .take_effects()
        .into_iter()
        .find_map(|e| match e {
            Effect::EditProposal { serial, .. } => Some(serial),
            _ => None,
        })
        .expect("edit requested");
    drop(rx);
    app.update(Msg::Agent(AgentEvent::Error {
        message: "interrupted".into(),
    }));
    assert!(!app.approvals().is_open());
    edited(&mut app, serial, Ok("x\n".into()));
    assert!(
        app.flash()
            .as_deref()
            .is_some_and(|f| f.contains("withdrawn"))
    );
}

#[test]
fn a_is_not_offered_when_configuration_forbids_it() {
    let (mut app, mut rx) = at_three_hunks(false);
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(!shown.contains("yes to every"), "{shown}");
    press(&mut app, KeyCode::Char('a'));
    assert!(undecided(&mut rx));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("Configuration does not allow"), "{shown}");
    assert!(app.auto_approved().is_empty());
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(decision(&mut rx), Some(Decision::Approve));
}

#[test]
fn the_header_says_what_a_covers_and_f3_revokes_it() {
    let mut app = app();
    explored(&mut app);
    let mut rx = write_calculator(&mut app);
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(
        shown.contains("a yes to every replace_text this task"),
        "{shown}"
    );
    press(&mut app, KeyCode::Char('a'));
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(decision(&mut rx), Some(Decision::ApproveToolForTask));
    let term = draw(&mut app, 120, 40);
    let header = screen(&term).lines().next().unwrap_or("").to_string();
    assert!(
        header.contains("auto-approve: replace_text (this task) · F3 revokes"),
        "{header}"
    );
    // The core's list is the truth the header shows.
    app.sync_scopes(vec!["replace_text".into(), "run_tests".into()]);
    let header = screen(&draw(&mut app, 120, 40))
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    assert!(
        header.contains("replace_text, run_tests (this task)"),
        "{header}"
    );
    app.take_effects();
    press(&mut app, KeyCode::F(3));
    let revoked: Vec<Vec<String>> = app
        .take_effects()
        .into_iter()
        .filter_map(|e| match e {
            Effect::Agent(stepwise::agent::AgentCommand::RevokeApprovals(tools)) => {
                Some(tools.iter().map(|t| t.to_string()).collect())
            }
            _ => None,
        })
        .collect();
    assert_eq!(revoked, [vec!["replace_text", "run_tests"]]);
    assert!(app.auto_approved().is_empty());
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(!shown.lines().next().unwrap_or("").contains("auto-approve"));
    assert!(
        shown.contains("Auto-approval revoked for replace_text, run_tests"),
        "{shown}"
    );
    // /revoke with nothing approved just says so.
    type_text(&mut app, "/revoke");
    press(&mut app, KeyCode::Enter);
    assert!(
        app.flash()
            .as_deref()
            .is_some_and(|f| f.contains("Nothing is auto-approved"))
    );
}

#[test]
fn f3_is_listed_in_the_prompt_while_something_is_auto_approved() {
    let mut app = app();
    explored(&mut app);
    keep_open(write_calculator(&mut app));
    press(&mut app, KeyCode::Char('a'));
    press(&mut app, KeyCode::Char('a'));
    keep_open(run_tests_request(&mut app, 5));
    let shown = screen(&draw(&mut app, 80, 24));
    let hints = shown.lines().last().unwrap_or("");
    assert!(hints.contains("F3 revoke auto-approve"), "{shown}");
}

fn streaming(app: &mut App, fragment: &str) {
    app.update(Msg::Agent(AgentEvent::ToolCallStreaming {
        index: 0,
        tool: "write_file".into(),
        preview: stepwise::tools::calls::registry::LivePreview::WriteFile,
        fragment: fragment.into(),
    }));
}

#[test]
fn a_streaming_write_shows_its_diff_building_up_then_the_proposal_replaces_it() {
    let mut app = app();
    explored(&mut app);
    app.update(Msg::Agent(AgentEvent::ModelRequest { steps_done: 3 }));
    streaming(
        &mut app,
        r#"{"path": "calculator.py", "content": "\"\"\"A tiny calculator"#,
    );
    app.update(Msg::Agent(AgentEvent::LiveEditBase {
        index: 0,
        tool: "write_file".into(),
        path: "calculator.py".into(),
        old: Some(CALCULATOR.into()),
    }));
    streaming(
        &mut app,
        r#": the sample project stepwise works on by default.\"\"\"\n\n\ndef add(a, b):\n    \"\"\"Return the total of a and b.\"\"\"\n"#,
    );
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("streaming… (incomplete)"), "{shown}");
    assert!(
        shown.contains("+    \"\"\"Return the total of a and b.\"\"\""),
        "{shown}"
    );
    assert!(shown.contains("still writing"), "{shown}");
    assert!(
        !shown.contains("-    return a - b"),
        "lines not streamed yet are not shown as removed:\n{shown}"
    );
    // More arrives: not recomputed before the throttle allows.
    streaming(&mut app, r#"    return a + b\n\n\ndef mul(a, b):\n"#);
    let held = screen(&draw(&mut app, 120, 40));
    assert!(!held.contains("def mul"), "{held}");
    assert!(app.live().next_refresh().is_some());
    app.set_now(app.now() + Duration::from_millis(150));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("+def mul(a, b):"), "{shown}");
    // The whole reply is in: the real proposal replaces the preview.
    keep_open(write_calculator(&mut app));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(!shown.contains("streaming"), "{shown}");
    assert!(shown.contains("+def divide(a, b):"), "{shown}");
}

#[test]
fn a_streaming_replacement_previews_once_its_old_text_is_known() {
    let mut app = app();
    explored(&mut app);
    app.update(Msg::Agent(AgentEvent::ModelRequest { steps_done: 3 }));
    app.update(Msg::Agent(AgentEvent::LiveEditBase {
        index: 0,
        tool: "replace_text".into(),
        path: "calculator.py".into(),
        old: Some(CALCULATOR.into()),
    }));
    app.update(Msg::Agent(AgentEvent::ToolCallStreaming {
        index: 0,
        tool: "replace_text".into(),
        preview: stepwise::tools::calls::registry::LivePreview::ReplaceText,
        fragment: r#"{"path": "calculator.py", "old": "    return a - b"#.into(),
    }));
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(shown.contains("waiting for the text to replace"), "{shown}");
    app.update(Msg::Agent(AgentEvent::ToolCallStreaming {
        index: 0,
        tool: "replace_text".into(),
        preview: stepwise::tools::calls::registry::LivePreview::ReplaceText,
        fragment: r#"\n", "new": "    return b - a\n"#.into(),
    }));
    app.set_now(app.now() + Duration::from_millis(150));
    let term = draw(&mut app, 80, 24);
    let shown = screen(&term);
    assert!(shown.contains("-    return a - b"), "{shown}");
    assert!(shown.contains("+    return b - a"), "{shown}");
    // Word-level highlight: only the swapped operands stand out.
    let (x, y) = find(&shown, "+    return b - a").expect("added line");
    let buf = term.backend().buffer();
    assert_eq!(buf[(x + 12, y)].bg, Color::Green, "`b` is highlighted");
    assert_eq!(buf[(x + 8, y)].bg, Color::Reset, "`return` is not");
    // A retry voids the reply, and its preview with it.
    app.update(Msg::Agent(AgentEvent::Retrying {
        retry: 1,
        max_retries: 3,
        delay_ms: 100,
        error: "reset".into(),
    }));
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(!shown.contains("return b - a"), "{shown}");
}
