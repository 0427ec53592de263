//! Lazy syntax colours and the bounded re-rendering of a streaming reply:
//! work is counted (lines coloured, text rendered again), never timed.

use super::*;
use crate::tui::render::highlight::coloured_lines;
use crate::tui::render::theme;
use std::time::Duration;

fn rust_block(lines: usize) -> String {
    let body: String = (0..lines)
        .map(|i| format!("let v{i} = {i}; // n\n"))
        .collect();
    format!("Here:\n\n```rust\n{body}```\n")
}

fn coloured(c: &Conversation) -> usize {
    c.lines
        .iter()
        .filter(|l| l.kind == Kind::Code)
        .filter(|l| {
            l.styled
                .as_ref()
                .is_some_and(|md| md.spans.iter().any(|s| s.style == theme::SYN_KEYWORD))
        })
        .count()
}

#[test]
fn a_big_block_is_not_coloured_until_drawn_then_within_bounded_frames() {
    let mut c = Conversation::new();
    let before = coloured_lines();
    c.delta(&rust_block(500));
    c.close_reply();
    assert_eq!(
        coloured_lines(),
        before,
        "completing a reply colours nothing"
    );
    assert_eq!(coloured(&c), 0);
    // In view: a slice per frame (no time budget: MIN_LINES a frame).
    let mut frames = 0;
    c.ensure_wrapped(80, 30);
    while c.colours.waiting() > 0 {
        frames += 1;
        let visible = 0..c.lines.len();
        let done = c.colours.step_with(visible, Duration::ZERO);
        assert!(done.is_empty() || c.colours.waiting() == 0);
        assert!(frames <= 500 / markdown::pending::MIN_LINES + 1, "bounded");
        for (line, rows) in done {
            for (l, spans) in c.lines.iter_mut().skip(line).zip(rows) {
                if let Some(md) = l.styled.as_mut() {
                    md.spans = spans;
                }
            }
        }
    }
    assert!(frames > 1, "spread over frames, not all in one");
    assert_eq!(coloured(&c), 500, "shown all at once when done");
}

#[test]
fn frames_colour_what_is_in_view_and_ask_for_more() {
    let mut c = Conversation::new();
    c.push_entry(Kind::Final, &rust_block(40));
    for i in 0..200 {
        c.push_entry(Kind::Notice, &format!("later {i}"));
    }
    let before = coloured_lines();
    c.ensure_wrapped(80, 20);
    assert_eq!(
        coloured_lines(),
        before,
        "following the bottom: block not in view"
    );
    assert!(!c.colouring_due());
    c.scroll_by(ScrollMove::Top, 20);
    let mut frames = 0;
    loop {
        c.ensure_wrapped(80, 20);
        frames += 1;
        if !c.colouring_due() {
            break;
        }
        assert!(frames < 100, "colouring never finished");
    }
    assert_eq!(coloured(&c), 40);
    assert_eq!(coloured_lines() - before, 40, "each line coloured once");
}

#[test]
fn pushing_400_entries_with_code_colours_nothing() {
    let mut c = Conversation::new();
    let before = coloured_lines();
    for _ in 0..400 {
        c.push_entry(Kind::Final, &rust_block(50));
    }
    assert_eq!(coloured_lines(), before);
    c.ensure_wrapped(120, 40);
    let mut frames = 0;
    while c.colouring_due() && frames < 100 {
        c.ensure_wrapped(120, 40);
        frames += 1;
    }
    let work = coloured_lines() - before;
    assert!(
        work > 0 && work <= 100,
        "only the blocks in view: {work} lines"
    );
}

#[test]
fn coloured_rows_match_colouring_at_once() {
    let md = "Intro\n\n```py\nx = 1  # one\n```\n\n- item `a`\n\n```rust\nfn f() {}\n```\n";
    let mut c = Conversation::new();
    c.push_entry(Kind::Final, md);
    for _ in 0..10 {
        c.ensure_wrapped(60, 20);
    }
    let eager: Vec<MdLine> = markdown::render(md, true);
    let lazy: Vec<MdLine> = c
        .lines
        .iter()
        .filter_map(|l| l.styled.as_deref().cloned())
        .collect();
    assert_eq!(lazy, eager);
}

#[test]
fn streaming_renders_again_only_after_the_last_cut() {
    let mut c = Conversation::new();
    let mut full = String::new();
    for i in 0..300 {
        let para = match i % 10 {
            3 => format!("```py\nx = {i}\n\ny = {i}\n```\n\n"),
            6 => format!("- item {i}\n\n  more {i}\n\n"),
            _ => format!("Paragraph {i} with `code` and **bold**.\n\n"),
        };
        full.push_str(&para);
        c.delta(&para);
        let open = c.open.as_ref().map_or(0, |o| full.len() - o.kept);
        assert!(open < 200, "re-rendered {open} bytes at paragraph {i}");
    }
    c.refresh_open();
    let streamed: Vec<String> = c.lines.iter().map(|l| l.text.clone()).collect();
    let rows: Vec<Vec<Line>> = c.lines.iter().map(|l| wrap_logical(l, 50)).collect();
    let (whole, _) = markdown_lines(Kind::Assistant, &full);
    let whole_text: Vec<String> = whole.iter().map(|l| l.text.clone()).collect();
    let whole_rows: Vec<Vec<Line>> = whole.iter().map(|l| wrap_logical(l, 50)).collect();
    assert_eq!(streamed, whole_text);
    assert_eq!(rows, whole_rows, "the pieces render as the whole does");
}

#[test]
fn with_grammars_off_thread_blocks_in_view_are_coloured_on_the_worker() {
    let mut c = Conversation::new();
    c.grammars().set_off_thread();
    c.grammars().ready("rust", true);
    c.push_entry(Kind::Final, &rust_block(300));
    let md = rust_block(300);
    let before = coloured_lines();
    let waited = std::time::Instant::now();
    loop {
        c.ensure_wrapped(80, 400);
        if !c.colouring_due() {
            break;
        }
        assert!(waited.elapsed() < Duration::from_secs(20), "never coloured");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(coloured_lines(), before, "no line coloured on this thread");
    assert_eq!(coloured(&c), 300);
    let eager: Vec<MdLine> = markdown::render(&md, true);
    let lazy: Vec<MdLine> = c
        .lines
        .iter()
        .filter_map(|l| l.styled.as_deref().cloned())
        .collect();
    assert_eq!(lazy, eager, "the colours the UI thread would give");
}

#[test]
fn colours_arriving_rewrap_only_their_block_and_draw_as_a_fresh_wrap() {
    let mut c = Conversation::new();
    for i in 0..5 {
        c.push_entry(Kind::Notice, &format!("before {i}"));
    }
    c.push_entry(Kind::Final, &rust_block(30));
    for i in 0..300 {
        c.push_entry(Kind::Notice, &format!("after {i}"));
    }
    c.ensure_wrapped(60, 20);
    c.scroll_by(ScrollMove::Top, 20);
    c.ensure_wrapped(60, 20);
    let known = c.cache.known();
    for _ in 0..100 {
        if !c.colouring_due() {
            break;
        }
        c.ensure_wrapped(60, 20);
    }
    assert_eq!(coloured(&c), 30, "the block is coloured");
    assert!(c.cache.known() >= known, "no height forgotten");
    let area = Rect::new(0, 0, 60, 20);
    let mut lazy = Buffer::empty(area);
    c.render(area, &mut lazy);
    c.invalidate_from(0);
    c.ensure_wrapped(60, 20);
    let mut fresh = Buffer::empty(area);
    c.render(area, &mut fresh);
    assert_eq!(lazy, fresh, "drawn as wrapping every line again draws it");
}
