//! The help overlay (F1, or `?` with an empty input, or `/help`): every key
//! and slash command, as the key map (`input::keymap`) lists them. It
//! scrolls (↑↓ PgUp PgDn) when the terminal is too short for it.

use crate::tui::input::keymap;
use crate::tui::panes::scroll::{Scroll, ScrollMove};
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};
use std::sync::LazyLock;

/// `(keys, what they do)`; an empty key starts a section. Built once from
/// the key map, so the help lists exactly the keys the handlers read.
pub static KEYS: LazyLock<Vec<(&'static str, &'static str)>> = LazyLock::new(keymap::help_rows);

/// Where the help box goes in `area`, and its text rows.
fn placement(area: Rect) -> (Rect, usize) {
    let key_w = KEYS
        .iter()
        .map(|(k, _)| crate::tui::render::text::width(k))
        .max()
        .unwrap_or(0);
    let what_w = KEYS
        .iter()
        .map(|(_, w)| crate::tui::render::text::width(w))
        .max()
        .unwrap_or(0);
    let width = (key_w + what_w + 5).min(area.width as usize) as u16;
    let height = (KEYS.len() as u16 + 2).min(area.height);
    let rect = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    (rect, height.saturating_sub(2) as usize)
}

/// The first row shown after a scroll move, for a terminal of size `area`.
pub fn scrolled(top: usize, m: ScrollMove, area: Rect) -> usize {
    let (_, rows) = placement(area);
    let mut scroll = Scroll::at_top();
    scroll.apply(ScrollMove::Down(top), KEYS.len(), rows);
    scroll.apply(m, KEYS.len(), rows);
    scroll.top(KEYS.len(), rows)
}

pub fn render(area: Rect, buf: &mut Buffer, top: usize) {
    let (rect, rows) = placement(area);
    let top = top.min(KEYS.len().saturating_sub(rows));
    Clear.render(rect, buf);
    let title = if rows < KEYS.len() {
        " Keys — ↑↓ PgUp PgDn scroll · Esc closes "
    } else {
        " Keys — Esc closes "
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(theme::ACCENT)
        .title(Line::styled(
            title,
            Style::new().add_modifier(Modifier::BOLD),
        ));
    let inner = block.inner(rect);
    block.render(rect, buf);
    let key_w = KEYS
        .iter()
        .map(|(k, _)| crate::tui::render::text::width(k))
        .max()
        .unwrap_or(0);
    let key_style = theme::WARN_BOLD;
    for (i, (keys, what)) in KEYS.iter().skip(top).enumerate().take(rows) {
        let line = if keys.is_empty() {
            Line::styled(
                *what,
                Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            )
        } else {
            Line::from(vec![
                Span::styled(format!(" {keys:<key_w$} "), key_style),
                Span::raw(*what),
            ])
        };
        buf.set_line(inner.x, inner.y + i as u16, &line, inner.width);
    }
    if rows < KEYS.len() {
        let more = match (top > 0, top + rows < KEYS.len()) {
            (true, true) => " ↑ more ↓ ",
            (true, false) => " ↑ more ",
            (false, _) => " more ↓ ",
        };
        let x = rect.x + rect.width.saturating_sub(more.chars().count() as u16 + 2);
        buf.set_string(x, rect.bottom().saturating_sub(1), more, theme::ACCENT);
    }
}
