//! Pane chrome: the titled rule above each pane (highlighted when focused)
//! and the frame of a full-body overlay. Every pane and overlay draws its
//! block through here, so they all look alike.

use crate::tui::render::layout::Pane;
use crate::tui::render::text::truncate;
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Widget};

/// A full-body overlay's frame.
pub fn overlay_frame(title: &str, body: Rect, buf: &mut Buffer) {
    Clear.render(body, buf);
    let title = Line::styled(title.to_string(), Style::new().add_modifier(Modifier::BOLD));
    Block::bordered()
        .title(title)
        .border_style(theme::ACCENT)
        .render(body, buf);
}

/// A pane's block: a rule with the title; the focused pane's title is highlighted.
pub fn block(pane: &Pane, title: &str, focused: bool, buf: &mut Buffer) {
    let (border, title_style) = if focused {
        (theme::ACCENT, theme::ACCENT_BOLD)
    } else {
        (theme::DIM, theme::MUTED)
    };
    let room = (pane.outer.width as usize).saturating_sub(4);
    let title = Line::from(vec![Span::styled(
        format!(" {} ", truncate(title, room)),
        title_style,
    )]);
    Block::new()
        .borders(pane.borders)
        .border_style(border)
        .title(title)
        .render(pane.outer, buf);
}
