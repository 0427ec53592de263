//! Scrolling the conversation across terminal resizes: a scrolled view keeps
//! the same logical line at its top, page and jump keys move from there,
//! following survives a resize, and a line taller than the viewport scrolls
//! row by row and stays put across a resize too.

use crate::support::tui::*;
use crossterm::event::KeyCode;
use stepwise::agent::AgentEvent;
use stepwise::tui::{App, Focus};

/// Entries long enough to wrap differently at each width.
fn long_session(entries: usize) -> App {
    let mut app = app();
    for i in 0..entries {
        app.update(Msg::Agent(AgentEvent::Error {
            message: format!("entry {i:03} {}", "word ".repeat(16)),
        }));
    }
    app
}

/// The conversation's visible rows (drawn at `width` x `height`).
fn rows(app: &mut App, width: u16, height: u16) -> Vec<String> {
    let term = draw(app, width, height);
    let inner = app.panes().conversation.inner();
    let buf = term.backend().buffer();
    (inner.y..inner.y + inner.height)
        .map(|y| {
            (inner.x..inner.x + inner.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

fn focus_conversation(app: &mut App) {
    while app.focus() != Focus::Conversation {
        press(app, KeyCode::Tab);
    }
}

/// Scroll up until an entry's first row is the top row; its number.
fn scrolled_to_an_entry(app: &mut App, width: u16, height: u16) -> String {
    for _ in 0..6 {
        let top = rows(app, width, height)[0].clone();
        if let Some(at) = top.find("✗ entry ") {
            return top[at..at + 13].to_string();
        }
        press(app, KeyCode::Up);
    }
    panic!("no entry at the top");
}

#[test]
fn a_scrolled_view_keeps_its_top_line_across_resizes() {
    let mut app = long_session(200);
    rows(&mut app, 100, 30);
    focus_conversation(&mut app);
    for _ in 0..5 {
        press(&mut app, KeyCode::PageUp);
    }
    let top = scrolled_to_an_entry(&mut app, 100, 30);
    for (w, h) in [(70, 30), (140, 40), (60, 20), (100, 30)] {
        assert!(
            rows(&mut app, w, h)[0].starts_with(&top),
            "{w}x{h}: {:?} at the top, not {top:?}",
            rows(&mut app, w, h)[0]
        );
        assert!(!app.conversation().scroll().is_following());
    }
}

#[test]
fn page_and_jump_keys_after_a_resize() {
    let mut app = long_session(200);
    rows(&mut app, 100, 30);
    focus_conversation(&mut app);
    for _ in 0..3 {
        press(&mut app, KeyCode::PageUp);
    }
    rows(&mut app, 100, 30);
    let before = rows(&mut app, 64, 24);
    press(&mut app, KeyCode::PageDown);
    let after = rows(&mut app, 64, 24);
    assert_eq!(
        after[0],
        *before.last().unwrap(),
        "a page is the view less one row"
    );
    press(&mut app, KeyCode::PageUp);
    assert_eq!(rows(&mut app, 64, 24), before, "PageUp undoes PageDown");
    press(&mut app, KeyCode::Home);
    assert!(rows(&mut app, 64, 24)[0].starts_with("✗ entry 000"));
    press(&mut app, KeyCode::End);
    assert!(app.conversation().scroll().is_following());
    let end = rows(&mut app, 64, 24);
    assert!(end.iter().any(|r| r.starts_with("✗ entry 199")), "{end:?}");
    press(&mut app, KeyCode::PageUp);
    let up = rows(&mut app, 64, 24);
    assert_eq!(up.last(), end.first(), "one page up from the end");
}

#[test]
fn following_survives_a_resize_and_shows_the_newest_rows() {
    let mut app = long_session(200);
    rows(&mut app, 100, 30);
    for (w, h) in [(60, 20), (150, 45), (80, 24)] {
        let visible = rows(&mut app, w, h);
        assert!(app.conversation().scroll().is_following());
        let last = visible.iter().rposition(|r| !r.is_empty()).unwrap();
        assert!(
            visible[..=last]
                .iter()
                .any(|r| r.starts_with("✗ entry 199")),
            "{w}x{h}: {visible:?}"
        );
        assert!(
            visible[last].ends_with("word"),
            "the newest row is at the bottom"
        );
    }
    app.update(Msg::Agent(AgentEvent::Error {
        message: "newest".into(),
    }));
    assert_eq!(
        rows(&mut app, 70, 22).iter().rev().find(|r| !r.is_empty()),
        Some(&"✗ newest".to_string())
    );
}

#[test]
fn a_line_taller_than_the_viewport_scrolls_row_by_row_and_keeps_its_place() {
    let mut app = app();
    let words: String = (0..400).map(|i| format!("w{i:03} ")).collect();
    app.update(Msg::Agent(AgentEvent::Error {
        message: "before".into(),
    }));
    app.update(Msg::Agent(AgentEvent::Error { message: words }));
    app.update(Msg::Agent(AgentEvent::Error {
        message: "after".into(),
    }));
    let end = rows(&mut app, 80, 24);
    assert!(end.iter().any(|r| r == "✗ after"));
    focus_conversation(&mut app);
    press(&mut app, KeyCode::Home);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    let top = rows(&mut app, 80, 24);
    assert!(top[0].starts_with("✗ w000"), "{:?}", top[0]);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    let inside = rows(&mut app, 80, 24);
    assert_eq!(inside[0], top[3], "three rows further into the tall line");
    // Wider: fewer rows in the line; the view stays inside it, not elsewhere.
    let wide = rows(&mut app, 140, 30);
    assert!(wide[0].starts_with("  w"), "{:?}", wide[0]);
    assert!(!app.conversation().scroll().is_following());
    press(&mut app, KeyCode::End);
    assert!(rows(&mut app, 140, 30).iter().any(|r| r == "✗ after"));
}
