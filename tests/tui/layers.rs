//! The layers own their keys: a key that closes a view never reaches the
//! prompt beneath (and the reflex after it decides nothing), the focused
//! pane takes the navigation keys while a prompt waits, and a paste is
//! always text in the draft.

use crate::support::tui::*;
use crossterm::event::{Event, KeyCode};
use std::time::Duration;
use stepwise::agent::Decision;
use stepwise::tui::{App, Focus, Msg};

fn later(app: &mut App, ms: u64) {
    app.set_now(app.now() + Duration::from_millis(ms));
}

/// At the write prompt of the calculator task, armed and idle.
fn at_prompt() -> (App, tokio::sync::oneshot::Receiver<Decision>) {
    let mut app = app();
    explored(&mut app);
    let rx = write_calculator(&mut app);
    draw(&mut app, 80, 24);
    later(&mut app, 2_000);
    (app, rx)
}

#[test]
fn a_key_that_closes_a_view_and_the_reflex_after_it_decide_nothing() {
    // `?`, `f` and Enter on a tool-call row each open a view over the prompt.
    let openers: [&[KeyCode]; 3] = [
        &[KeyCode::Char('?')],
        &[KeyCode::Char('f')],
        &[KeyCode::Tab, KeyCode::Tab, KeyCode::Enter],
    ];
    for open in openers {
        let (mut app, mut rx) = at_prompt();
        for &k in open {
            press(&mut app, k);
        }
        assert!(app.overlay().is_some(), "{open:?} opens a view");
        press(&mut app, KeyCode::Esc);
        assert!(app.overlay().is_none(), "Esc closes it");
        later(&mut app, 200);
        press(&mut app, KeyCode::Esc);
        assert!(undecided(&mut rx), "{open:?} Esc Esc declined the edit");
        let flash = app.flash().clone().unwrap_or_default();
        assert!(flash.contains("n declines"), "{flash}");
        // Enter too (on the tool calls it opens the row: not the prompt's).
        if app.focus() == Focus::Input {
            press(&mut app, KeyCode::Enter);
            assert!(
                undecided(&mut rx),
                "{open:?} Esc Esc Enter declined the edit"
            );
        }
        // A deliberate answer still works at once, and Esc after a pause too.
        later(&mut app, 1_500);
        press(&mut app, KeyCode::Esc);
        assert_eq!(
            rx.try_recv().ok(),
            Some(Decision::Decline { reason: None }),
            "{open:?}: a deliberate Esc declines"
        );
    }
    let (mut app, mut rx) = at_prompt();
    press(&mut app, KeyCode::Char('?'));
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(
        rx.try_recv().ok(),
        Some(Decision::Approve),
        "y is deliberate"
    );
}

#[test]
fn a_view_open_when_a_prompt_arrives_stays_and_its_esc_only_closes_it() {
    let mut app = app();
    explored(&mut app);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Enter);
    assert!(app.overlay().is_some());
    let mut rx = write_calculator(&mut app);
    draw(&mut app, 80, 24);
    later(&mut app, 2_000);
    assert!(
        app.overlay().is_some(),
        "the user's view is not pulled away"
    );
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Esc);
    assert!(undecided(&mut rx));
    assert!(app.overlay().is_none());
}

/// A conversation longer than its pane: a numbered line per notice.
fn long_conversation(app: &mut App) {
    for i in 1..=40 {
        app.notice(&format!("note number {i}"));
    }
}

#[test]
fn the_focused_pane_scrolls_and_selects_while_a_prompt_waits() {
    let mut app = app();
    long_conversation(&mut app);
    explored(&mut app);
    let mut rx = write_calculator(&mut app);
    draw(&mut app, 100, 30);
    later(&mut app, 2_000);
    let first = "Welcome";
    let before = screen(&draw(&mut app, 100, 30));
    assert!(!before.contains("note number 1\n"), "{before}");
    // Tab to the conversation, then PgUp and Home: its first line shows.
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Conversation);
    press(&mut app, KeyCode::PageUp);
    press(&mut app, KeyCode::Home);
    let top = screen(&draw(&mut app, 100, 30));
    assert!(
        top.contains("note number 1 ") || top.contains(first) || top.contains("note number 1\n"),
        "the conversation scrolled to its top:\n{top}"
    );
    assert!(top.contains("scrolled"), "{top}");
    assert!(undecided(&mut rx));
    // Tab to the tool calls: Up selects the step before, Enter opens it.
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::ToolCalls);
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Up);
    let selected = screen(&draw(&mut app, 100, 30));
    assert!(selected.contains("step 2 selected"), "{selected}");
    press(&mut app, KeyCode::Enter);
    let detail = screen(&draw(&mut app, 100, 30));
    assert!(
        detail.contains("Tool call details") && detail.contains("Step 2 · read_file"),
        "the selected call opens, not the waiting one:\n{detail}"
    );
    assert!(!detail.contains("Step 4 · replace_text"), "{detail}");
    press(&mut app, KeyCode::Esc);
    // The prompt's own letters answer whatever pane has the focus.
    later(&mut app, 1_500);
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::Approve));
}

#[test]
fn a_paste_at_an_open_prompt_lands_in_the_draft_on_screen() {
    let (mut app, mut rx) = at_prompt();
    app.update(Msg::Terminal(Event::Paste("yes please\nand n".into())));
    assert!(undecided(&mut rx), "a paste never answers");
    assert_eq!(app.input().text(), "yes please\nand n");
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(shown.contains("draft: yes please ⏎ and n"), "{shown}");
    assert!(shown.contains("[y/N]"), "the prompt stays open: {shown}");
    // The keys right after are still text (the user is at the keyboard) ...
    press(&mut app, KeyCode::Char('y'));
    assert!(undecided(&mut rx));
    assert_eq!(app.input().text(), "yes please\nand ny");
    // ... and answer once the keys have stopped.
    later(&mut app, 1_500);
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::Approve));
}

#[test]
fn a_burst_typed_while_a_prompt_opens_is_on_screen_with_the_prompt_open() {
    let mut app = app();
    explored(&mut app);
    let burst = "yes and now please add a docstring to it";
    assert_eq!(burst.chars().count(), 40);
    let (before, after) = burst.split_at(20);
    for c in before.chars() {
        later(&mut app, 30);
        type_text(&mut app, &c.to_string());
    }
    let mut rx = write_calculator(&mut app);
    for c in after.chars() {
        later(&mut app, 30);
        type_text(&mut app, &c.to_string());
    }
    assert!(undecided(&mut rx), "nothing typed answers");
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(shown.contains(&format!("draft: {burst}")), "{shown}");
    assert!(shown.contains("[y/N]"), "the prompt is open: {shown}");
    assert!(shown.contains("you are typing"), "{shown}");
    // When the keys stop, the prompt has them; the draft stays.
    later(&mut app, 1_500);
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(!shown.contains("you are typing"), "{shown}");
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::Decline { reason: None }));
    assert_eq!(app.input().text(), burst);
}
