//! The UI's looks: no colour at all under `NO_COLOR` / `--color never` (the
//! marks that matter still show), the dark and light palettes in snapshots
//! (styles included), markdown and syntax colours in a drawn answer, and
//! combined emoji that never push the right pane.
// These tests check the exact colours drawn, so they name them.
#![allow(clippy::disallowed_types)]

use crate::support::tui::*;
use crossterm::event::KeyCode;
use insta::assert_debug_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use stepwise::agent::AgentEvent;
use stepwise::tui::App;
use stepwise::tui::render::theme::{self, DARK, LIGHT, Look, Slot};

fn rejected_middle_hunk() -> App {
    let mut app = app();
    explored(&mut app);
    keep_open(three_hunk_request(&mut app, true));
    draw(&mut app, 80, 24);
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char(' '));
    app
}

#[test]
fn without_colour_the_buffer_has_none_but_cursor_rejects_and_bars_still_show() {
    let mut app = rejected_middle_hunk();
    app.set_look(Look::Plain);
    let term = draw(&mut app, 80, 24);
    let buf = term.backend().buffer();
    for cell in buf.content.iter() {
        assert_eq!((cell.fg, cell.bg), (Color::Reset, Color::Reset), "{cell:?}");
    }
    let text = screen(&term);
    assert!(text.contains('▌'), "the hunk cursor is a glyph:\n{text}");
    assert!(text.contains("rejected"), "{text}");
    let struck = buf
        .content
        .iter()
        .filter(|c| c.modifier.contains(Modifier::CROSSED_OUT));
    assert!(struck.count() > 10, "rejected rows are struck through");
    assert!(
        buf[(1, 0)].modifier.contains(Modifier::REVERSED),
        "the header bar is reverse video"
    );
}

#[test]
fn palettes_paint_every_cell_with_their_colours() {
    for palette in [&DARK, &LIGHT] {
        let mut app = rejected_middle_hunk();
        app.set_look(Look::Colored(palette));
        let term = draw(&mut app, 80, 24);
        let buf = term.backend().buffer();
        for cell in buf.content.iter() {
            for c in [cell.fg, cell.bg] {
                assert!(
                    theme::xterm_rgb(c).is_some(),
                    "{}: {c:?} has no known RGB",
                    palette.name
                );
            }
        }
        assert_eq!(buf[(0, 0)].bg, palette.slots[Slot::HeaderBg as usize]);
        assert_eq!(buf[(0, 5)].bg, palette.background);
    }
    let mut dark = rejected_middle_hunk();
    dark.set_look(Look::Colored(&DARK));
    let mut light = rejected_middle_hunk();
    light.set_look(Look::Colored(&LIGHT));
    let (d, l) = (draw(&mut dark, 80, 24), draw(&mut light, 80, 24));
    assert_ne!(d.backend().buffer()[(0, 5)], l.backend().buffer()[(0, 5)]);
}

const MARKDOWN: &str = "## Done\n\n| file | change |\n|---|--:|\n| calculator.py | +7 |\n\n> tests pass\n\n1. added `divide`\n   - raises on zero\n\n```rust\nfn main() { let n = 42; } // ok\n```\n";

fn markdown_answer() -> App {
    let mut app = app();
    submit(&mut app, "explain");
    feed(
        &mut app,
        vec![
            AgentEvent::ModelRequest { steps_done: 0 },
            AgentEvent::AssistantDelta {
                text: MARKDOWN.into(),
            },
            AgentEvent::AssistantMessage {
                text: MARKDOWN.into(),
            },
        ],
    );
    app
}

#[test]
fn markdown_answers_in_both_themes_at_both_sizes() {
    for (name, palette) in [("dark", &DARK), ("light", &LIGHT)] {
        for (w, h) in [(80, 24), (120, 40)] {
            let mut app = markdown_answer();
            app.set_look(Look::Colored(palette));
            let term = draw(&mut app, w, h);
            assert_debug_snapshot!(format!("markdown_{name}_{w}x{h}"), term.backend().buffer());
        }
    }
}

#[test]
fn a_finished_reply_has_syntax_colours_and_no_backtick_lines() {
    let mut app = markdown_answer();
    app.set_look(Look::Colored(&DARK));
    let term = draw(&mut app, 80, 24);
    let text = screen(&term);
    assert!(!text.contains("```"), "{text}");
    assert!(
        text.contains("calculator.py │     +7"),
        "aligned table:\n{text}"
    );
    let (x, y) = find(&text, "fn main").expect("code on screen");
    let keyword = term.backend().buffer()[(x, y)].fg;
    assert_eq!(keyword, DARK.slots[Slot::SynKeyword as usize]);
}

#[test]
fn combined_emoji_do_not_push_the_right_pane() {
    let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
    let flag = "🇩🇪";
    let mut app = app();
    explored(&mut app);
    keep_open(write_calculator(&mut app));
    let line = format!("{family}{flag} ").repeat(30);
    feed(
        &mut app,
        vec![AgentEvent::AssistantDelta {
            text: format!("{line}\n| a | b |\n|---|---|\n| {family} | {flag}{flag} |\n"),
        }],
    );
    let term = draw(&mut app, 120, 40);
    let buf = term.backend().buffer();
    let text = screen(&term);
    let corner = (0..buf.area.height).find_map(|y| {
        (0..buf.area.width - 2).find_map(|x| {
            let diff = buf[(x, y)].symbol() == "┌" && buf[(x + 2, y)].symbol() == "D";
            diff.then_some((x, y))
        })
    });
    let (border, top) = corner.expect("the diff pane's corner");
    assert!(border > 40, "the diff pane is on the right: {border}");
    assert!(text.contains(family), "{text}");
    for y in top + 1..buf.area.height - 4 {
        assert_eq!(buf[(border, y)].symbol(), "│", "row {y}:\n{text}");
    }
}

/// A markdown table wider than the conversation pane keeps its columns:
/// they are capped to fit and their cells wrap inside them, so every row's
/// separators stand under the rule's crossings.
#[test]
fn a_wide_table_wraps_inside_its_columns() {
    let mut app = app();
    explored(&mut app);
    let table = "| file | what changed | why it matters |\n|---|---|---|\n| calculator.py | a new divide function that raises ValueError when b is zero | callers get a clear error instead of ZeroDivisionError deep inside |\n| test_calculator.py | two tests | both cases are covered |\n";
    app.update(stepwise::tui::Msg::Agent(AgentEvent::AssistantMessage {
        text: table.into(),
    }));
    let term = draw(&mut app, 100, 40);
    let text = screen(&term);
    let rows: Vec<Vec<char>> = text.lines().map(|l| l.chars().collect()).collect();
    let rule = rows
        .iter()
        .position(|r| r.contains(&'┼'))
        .unwrap_or_else(|| panic!("no rule:\n{text}"));
    let crossings: Vec<usize> = (0..rows[rule].len())
        .filter(|&x| rows[rule][x] == '┼')
        .collect();
    assert_eq!(crossings.len(), 2, "{text}");
    let body: Vec<&Vec<char>> = rows[rule + 1..]
        .iter()
        .take_while(|r| crossings.iter().all(|&x| r.get(x) == Some(&'│')))
        .collect();
    assert!(
        body.len() >= 3,
        "the body wraps inside its columns:\n{text}"
    );
    assert!(
        body.len() > 2,
        "a long row takes two rows, aligned:\n{text}"
    );
    let shown: String = body.iter().map(|r| r.iter().collect::<String>()).collect();
    assert!(shown.contains("ZeroDivisionError"), "{text}");
    assert!(shown.contains("both cases"), "{text}");
    assert!(rows[rule - 1].contains(&'│'), "the header too:\n{text}");
}

/// The screens where text sits on something other than the background:
/// the `/` menu, the `@` picker with a selected row, the header with every
/// safety notice (auto-approve, a weakened sandbox, mouse off), a prompt
/// over a reviewed diff, and the help over it all.
fn composed_screens(look: Look) -> Vec<(&'static str, Terminal<TestBackend>)> {
    let mut out = Vec::new();
    let mut menu = app();
    menu.set_look(look);
    type_text(&mut menu, "/m");
    out.push(("the / menu", draw(&mut menu, 80, 24)));

    let mut picking = app();
    picking.set_look(look);
    let ws = crate::support::copy_workspace();
    picking.set_file_source(stepwise::tools::Workspace::open(ws.path()).expect("workspace"));
    type_text(&mut picking, "see @");
    picking.update(stepwise::tui::Msg::Files {
        files: vec![
            "calculator.py".into(),
            "test_calculator.py".into(),
            "README.md".into(),
        ],
        more: false,
    });
    press(&mut picking, KeyCode::Down);
    out.push(("the @ picker", draw(&mut picking, 80, 24)));

    let mut notices = rejected_middle_hunk();
    notices.set_look(look);
    notices.update(stepwise::tui::Msg::Agent(AgentEvent::SessionReady {
        rules: vec!["AGENTS.md".into()],
        sandbox: "not sandboxed".into(),
        limits: String::new(),
    }));
    notices.update(stepwise::tui::Msg::Agent(AgentEvent::ScopesChanged {
        approved: vec![stepwise::tools::ToolName::RUN_TESTS.into()],
    }));
    press(&mut notices, KeyCode::F(2));
    out.push((
        "the header's notices over a prompt",
        draw(&mut notices, 160, 30),
    ));
    press(&mut notices, KeyCode::F(1));
    out.push(("the help", draw(&mut notices, 100, 30)));
    out
}

#[test]
fn every_cell_is_readable_as_composed_on_screen_in_both_themes() {
    for palette in [&DARK, &LIGHT] {
        for (what, term) in composed_screens(Look::Colored(palette)) {
            let buf = term.backend().buffer();
            let bad = theme::unreadable(buf);
            let shown: Vec<String> = bad
                .iter()
                .take(8)
                .map(|&(x, y, r)| {
                    let c = &buf[(x, y)];
                    format!("({x},{y}) {:?} {:?} on {:?} {r:.2}", c.symbol(), c.fg, c.bg)
                })
                .collect();
            assert!(
                bad.is_empty(),
                "{}: {what}: {} cells below {}:1: {shown:?}\n{}",
                palette.name,
                bad.len(),
                theme::MIN_CONTRAST,
                screen(&term)
            );
        }
    }
}

#[test]
fn without_colour_the_pickers_selection_stands_out() {
    let screens = composed_screens(Look::Plain);
    let (_, term) = &screens[1];
    let text = screen(term);
    let (x, y) = find(&text, "test_calculator.py").expect("the selected file");
    let buf = term.backend().buffer();
    let (ox, oy) = find(&text, " calculator.py").expect("another file");
    assert_ne!(oy, y, "{text}");
    assert_ne!(
        buf[(x, y)].modifier.contains(Modifier::REVERSED),
        buf[(ox + 1, oy)].modifier.contains(Modifier::REVERSED),
        "the selected row differs from the others:\n{text}"
    );
}
