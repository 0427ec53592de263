//! The detail view of one tool call (Enter on a row): its full arguments and
//! result — file content, test output — as a scrollable overlay. Rows are
//! built once per width, like every other pane.

use crate::tui::panes::scroll::{Scroll, ScrollMove};
use crate::tui::panes::tool_calls::CallRow;
use crate::tui::render::text::{sanitize, wrap};
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

#[derive(Debug)]
pub struct DetailView {
    /// Index of the call in the tool-call pane.
    pub row: usize,
    width: usize,
    rows: Vec<Line<'static>>,
    scroll: Scroll,
}

impl DetailView {
    pub fn new(row: usize) -> Self {
        DetailView {
            row,
            width: 0,
            rows: Vec::new(),
            scroll: Scroll::at_top(),
        }
    }

    pub fn ensure(&mut self, call: &CallRow, width: usize) {
        if width != self.width {
            self.width = width;
            self.rows = detail_rows(call, width);
        }
    }

    pub fn total_rows(&self) -> usize {
        self.rows.len()
    }

    /// Where the view is scrolled to.
    pub fn scroll(&self) -> &Scroll {
        &self.scroll
    }

    /// Scroll by `m` in a viewport of `height` rows.
    pub fn scroll_by(&mut self, m: ScrollMove, height: usize) {
        let total = self.total_rows();
        self.scroll.apply(m, total, height);
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        self.scroll.draw_window(&self.rows, area, buf);
    }
}

fn detail_rows(call: &CallRow, width: usize) -> Vec<Line<'static>> {
    let bold = Style::new().add_modifier(Modifier::BOLD);
    let key_style = theme::ACCENT;
    let mut lines: Vec<(Vec<Span<'static>>, usize)> = Vec::new();
    let mut push = |spans: Vec<Span<'static>>, indent: usize| lines.push((spans, indent));
    push(
        vec![Span::styled(
            sanitize(&format!(
                "Step {} · {} · {}",
                call.step, call.tool, call.target
            )),
            bold,
        )],
        0,
    );
    let (glyph, style) = call.status.glyph();
    push(
        vec![
            Span::styled(format!("{glyph} {}", call.status.label()), style),
            Span::raw(sanitize(&format!(
                "  {}",
                call.summary.lines().next().unwrap_or("")
            ))),
        ],
        0,
    );
    push(vec![], 0);
    push(
        vec![Span::styled(
            "Arguments",
            bold.add_modifier(Modifier::UNDERLINED),
        )],
        0,
    );
    value_lines(&call.arguments, &mut push, key_style);
    push(vec![], 0);
    push(
        vec![Span::styled(
            "Result",
            bold.add_modifier(Modifier::UNDERLINED),
        )],
        0,
    );
    match &call.result {
        Some(result) => value_lines(result, &mut push, key_style),
        None => push(vec![Span::styled("(not carried out yet)", theme::DIM)], 2),
    }
    let mut rows = Vec::new();
    for (spans, indent) in lines {
        let pad = [Span::raw(" ".repeat(indent))];
        rows.extend(wrap(&spans, width, &pad, &pad));
    }
    rows
}

/// An object as `key: value` lines; multi-line strings and arrays below their key.
fn value_lines(value: &Value, push: &mut impl FnMut(Vec<Span<'static>>, usize), key_style: Style) {
    let Value::Object(map) = value else {
        for line in serde_json::to_string_pretty(value)
            .unwrap_or_default()
            .lines()
        {
            push(vec![Span::raw(sanitize(line))], 2);
        }
        return;
    };
    for (key, v) in map {
        if key == "success" {
            continue;
        }
        let key_span = Span::styled(format!("{key}:"), key_style);
        match v {
            Value::String(s) if s.contains('\n') => {
                push(vec![key_span], 2);
                for line in s.trim_end_matches('\n').split('\n') {
                    push(vec![Span::raw(sanitize(line))], 4);
                }
            }
            Value::String(s) => push(vec![key_span, Span::raw(format!(" {}", sanitize(s)))], 2),
            Value::Array(items) if !items.is_empty() => {
                push(vec![key_span], 2);
                for item in items {
                    let text = item
                        .as_str()
                        .map_or_else(|| item.to_string(), str::to_string);
                    push(vec![Span::raw(sanitize(&text))], 4);
                }
            }
            other => push(
                vec![
                    key_span,
                    Span::raw(format!(" {}", sanitize(&other.to_string()))),
                ],
                2,
            ),
        }
    }
}
