//! The diff pane: a `FileDiff` as colored rows (old/new line-number gutters,
//! +/- signs, hunk separators, additions green, removals red, context dim),
//! long lines wrapped with an empty gutter on continuation rows. Rows are
//! built once per (diff, width) and only the visible window is drawn.

use super::scroll::Scroll;
use super::text::{sanitize, wrap};
use crate::diff::{FileDiff, LineKind};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

pub const ADDED: Style = Style::new().fg(Color::Green);
pub const REMOVED: Style = Style::new().fg(Color::Red);
pub const CONTEXT: Style = Style::new().add_modifier(Modifier::DIM);
pub const GUTTER: Style = Style::new().fg(Color::DarkGray);
pub const HUNK: Style = Style::new().fg(Color::Cyan);

#[derive(Debug)]
pub struct DiffView {
    /// Tool-call row whose diff is laid out.
    shown: Option<usize>,
    width: usize,
    rows: Vec<Line<'static>>,
    pub scroll: Scroll,
}

impl Default for DiffView {
    fn default() -> Self {
        DiffView {
            shown: None,
            width: 0,
            rows: Vec::new(),
            scroll: Scroll::at_top(),
        }
    }
}

impl DiffView {
    /// Lay out the diff of call `row` at `width` unless already done.
    /// Showing a different diff starts at its top.
    pub fn ensure(&mut self, row: Option<(usize, &FileDiff)>, width: usize) {
        let key = row.map(|(i, _)| i);
        if key != self.shown {
            self.shown = key;
            self.scroll = Scroll::at_top();
            self.width = 0;
        }
        if width != self.width {
            self.width = width;
            self.rows = row.map(|(_, d)| diff_rows(d, width)).unwrap_or_default();
        }
    }

    pub fn total_rows(&self) -> usize {
        self.rows.len()
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let top = self.scroll.top(self.rows.len(), area.height as usize);
        for (i, row) in self
            .rows
            .iter()
            .skip(top)
            .take(area.height as usize)
            .enumerate()
        {
            buf.set_line(area.x, area.y + i as u16, row, area.width);
        }
    }
}

/// All rows of a diff at `width` columns.
pub fn diff_rows(diff: &FileDiff, width: usize) -> Vec<Line<'static>> {
    if diff.hunks.is_empty() {
        return vec![Line::styled(
            "(no changes: the file already has this content)",
            CONTEXT,
        )];
    }
    let max_no = diff
        .hunks
        .iter()
        .flat_map(|h| h.lines.iter())
        .flat_map(|l| [l.old_no, l.new_no])
        .flatten()
        .max()
        .unwrap_or(1);
    let w = max_no.to_string().len().max(2);
    let blank_gutter = format!("{:w$} {:w$} │", "", "");
    let mut rows = Vec::new();
    for hunk in &diff.hunks {
        let label = format!("{:w$} {:w$} ├─ {} ", "", "", hunk.header());
        let fill = width.saturating_sub(super::text::width(&label));
        rows.push(Line::styled(format!("{label}{}", "─".repeat(fill)), HUNK));
        for line in &hunk.lines {
            let (sign, style) = match line.kind {
                LineKind::Added => ("+", ADDED),
                LineKind::Removed => ("-", REMOVED),
                LineKind::Context => (" ", CONTEXT),
            };
            let no = |n: Option<usize>| n.map_or(String::new(), |n| n.to_string());
            let gutter = format!("{:>w$} {:>w$} │", no(line.old_no), no(line.new_no));
            let first = [
                Span::styled(gutter, GUTTER),
                Span::styled(sign, style.add_modifier(Modifier::BOLD)),
            ];
            let cont = [Span::styled(blank_gutter.clone(), GUTTER), Span::raw(" ")];
            let text = [Span::styled(sanitize(&line.text), style)];
            rows.extend(wrap(&text, width, &first, &cont));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gutters_signs_and_continuation_rows() {
        let old = "a\nb\n";
        let new = "a\nb\nthis line is much too long to fit\n";
        let d = FileDiff::compute("f.py", Some(old), new);
        let rows: Vec<String> = diff_rows(&d, 24).iter().map(|l| l.to_string()).collect();
        assert_eq!(rows[0], "      ├─ @@ -1,2 +1,3 @@ ");
        assert_eq!(rows[1], " 1  1 │ a");
        assert_eq!(rows[3], "    3 │+this line is");
        assert_eq!(rows[4], "      │ much too long to");
        assert_eq!(rows[5], "      │ fit");
        let styled = diff_rows(&d, 24);
        assert_eq!(styled[3].spans.last().map(|s| s.style), Some(ADDED));
    }
}
