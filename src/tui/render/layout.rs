//! Where each pane goes for a terminal size: stacked panes below 120 columns,
//! conversation beside tool calls and diff from 120 on, and the "too small"
//! cut-off. A pure function of the size and a few counts from the state.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Borders;

/// Smallest usable terminal.
pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 16;
/// From this width the conversation sits beside the tool calls and the diff.
pub const WIDE: u16 = 120;
pub const HEADER_ROWS: u16 = 2;
/// Blank columns between a border and the text beside it.
pub const PADDING: u16 = 1;

/// What the layout needs to know about the state.
#[derive(Debug, Clone, Copy, Default)]
pub struct Needs {
    pub tool_rows: usize,
    pub has_diff: bool,
    /// The approval prompt replaces the input box.
    pub prompt_rows: u16,
    /// Rows of text in the input box.
    pub input_rows: u16,
    /// The diff takes the whole body (`f` at a prompt).
    pub diff_full: bool,
}

/// A pane's outer rectangle and the borders of its block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pane {
    pub outer: Rect,
    pub borders: Borders,
}

impl Pane {
    fn new(outer: Rect, borders: Borders) -> Self {
        Pane { outer, borders }
    }

    /// The area inside the block's borders, one column of padding after a
    /// left border so text never touches it.
    pub fn inner(&self) -> Rect {
        let mut r = self.outer;
        if self.borders.contains(Borders::TOP) && r.height > 0 {
            r.y += 1;
            r.height -= 1;
        }
        if self.borders.contains(Borders::LEFT) {
            let cut = r.width.min(1 + PADDING);
            r.x += cut;
            r.width -= cut;
        }
        r
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Panes {
    pub area: Rect,
    pub too_small: bool,
    pub header: Rect,
    /// Everything between the header and the input (overlays cover it).
    pub body: Rect,
    pub conversation: Pane,
    pub tools: Pane,
    pub diff: Option<Pane>,
    pub prompt: Option<Rect>,
    pub input: Option<Pane>,
}

/// The detail overlay's text area inside the body.
pub fn detail_area(body: Rect) -> Rect {
    ratatui::widgets::Block::bordered().inner(body)
}

pub fn compute(area: Rect, needs: Needs) -> Panes {
    let mut panes = Panes {
        area,
        ..Panes::default()
    };
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        panes.too_small = true;
        return panes;
    }
    let bottom_rows = if needs.prompt_rows > 0 {
        needs.prompt_rows
    } else {
        needs.input_rows.max(1) + 1
    };
    let [header, body, bottom] = area.layout(&Layout::vertical([
        Constraint::Length(HEADER_ROWS),
        Constraint::Fill(1),
        Constraint::Length(bottom_rows),
    ]));
    panes.header = header;
    panes.body = body;
    if needs.prompt_rows > 0 {
        panes.prompt = Some(bottom);
    } else {
        panes.input = Some(Pane::new(bottom, Borders::TOP));
    }
    let tool_rows = needs.tool_rows.max(1) as u16;
    if needs.diff_full && needs.has_diff {
        let hidden = Rect { height: 0, ..body };
        panes.conversation = Pane::new(hidden, Borders::TOP);
        panes.tools = Pane::new(hidden, Borders::TOP);
        panes.diff = Some(Pane::new(body, Borders::TOP));
    } else if area.width >= WIDE {
        // The conversation gets at least half; a blank column keeps its
        // text off the border of the panes beside it.
        let [left, _gap, right] = body.layout(&Layout::horizontal([
            Constraint::Percentage(50),
            Constraint::Length(PADDING),
            Constraint::Fill(1),
        ]));
        let [tools, diff] = right.layout(&Layout::vertical([
            Constraint::Length(tool_rows.min(10) + 1),
            Constraint::Fill(1),
        ]));
        let side = Borders::TOP | Borders::LEFT;
        panes.conversation = Pane::new(left, Borders::TOP);
        panes.tools = Pane::new(tools, side);
        panes.diff = Some(Pane::new(diff, side));
    } else if needs.has_diff {
        // While approving, the diff gets the most room; otherwise the conversation.
        let (conv_share, diff_share) = if needs.prompt_rows > 0 {
            (2, 3)
        } else {
            (3, 2)
        };
        let [conv, tools, diff] = body.layout(&Layout::vertical([
            Constraint::Fill(conv_share),
            Constraint::Length(tool_rows.min(4) + 1),
            Constraint::Fill(diff_share),
        ]));
        panes.conversation = Pane::new(conv, Borders::TOP);
        panes.tools = Pane::new(tools, Borders::TOP);
        panes.diff = Some(Pane::new(diff, Borders::TOP));
    } else {
        let [conv, tools] = body.layout(&Layout::vertical([
            Constraint::Fill(1),
            Constraint::Length(tool_rows.min(6) + 1),
        ]));
        panes.conversation = Pane::new(conv, Borders::TOP);
        panes.tools = Pane::new(tools, Borders::TOP);
    }
    panes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_terminals_are_refused_and_panes_fit_at_80x24() {
        assert!(compute(Rect::new(0, 0, 59, 30), Needs::default()).too_small);
        assert!(compute(Rect::new(0, 0, 100, 15), Needs::default()).too_small);
        let p = compute(
            Rect::new(0, 0, 80, 24),
            Needs {
                tool_rows: 5,
                has_diff: true,
                prompt_rows: 2,
                input_rows: 1,
                diff_full: false,
            },
        );
        assert!(!p.too_small);
        let diff = p.diff.map(|d| d.inner().height).unwrap_or(0);
        assert!(diff >= 7, "diff gets room while approving: {diff}");
        assert!(p.conversation.inner().height >= 4);
    }

    #[test]
    fn side_by_side_the_conversation_gets_half_and_text_keeps_off_borders() {
        let p = compute(
            Rect::new(0, 0, 120, 40),
            Needs {
                tool_rows: 5,
                has_diff: true,
                prompt_rows: 2,
                input_rows: 1,
                diff_full: false,
            },
        );
        let conv = p.conversation.inner();
        assert!(conv.width >= 60, "at least half of 120: {}", conv.width);
        let tools = p.tools.inner();
        assert_eq!(
            tools.x,
            p.tools.outer.x + 2,
            "border, then one blank column"
        );
        assert!(
            conv.right() < p.tools.outer.x,
            "a blank column before the border"
        );
    }
}
