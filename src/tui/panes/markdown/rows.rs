//! A rendered markdown line as screen rows: the entry's marker (`•`, `✓`
//! for a final answer, none for a discarded reply), then the line's own
//! prefix (quote bars, list markers, code gutter), wrapped with the hanging
//! indent its container asks for.

use crate::tui::panes::line_kind::Kind;
use crate::tui::panes::markdown::table::TableRow;
use crate::tui::render::text::{width as text_width, wrap};
use crate::tui::render::theme;
use ratatui::text::{Line, Span};

/// One rendered line: what goes before it on its first row and on the rows
/// it wraps to, and its own spans.
#[derive(Debug, Clone, PartialEq)]
pub struct MdLine {
    pub kind: Kind,
    pub prefix: Vec<Span<'static>>,
    pub cont: Vec<Span<'static>>,
    pub spans: Vec<Span<'static>>,
    /// A table's row: laid out again when the pane is narrower than the
    /// table (see `table::TableRow::rows`); `spans` is its natural layout.
    pub table: Option<Box<TableRow>>,
}

impl MdLine {
    /// The line as plain text (prefix and spans).
    pub fn text(&self) -> String {
        self.prefix
            .iter()
            .chain(&self.spans)
            .map(|s| s.content.as_ref())
            .collect()
    }
}

/// The rows of `md`, a line of an entry of `kind`, at `width` columns.
pub fn rows(md: &MdLine, kind: Kind, first_of_entry: bool, width: usize) -> Vec<Line<'static>> {
    if md.spans.is_empty() && md.prefix.is_empty() {
        return vec![Line::default()];
    }
    let (marker, marker_style) = match kind {
        Kind::Final => ("✓ ", theme::GOOD_BOLD),
        _ => ("• ", theme::DIM),
    };
    let lead = match first_of_entry && kind != Kind::Discarded {
        true => marker,
        false => "  ",
    };
    let mut first = vec![Span::styled(lead, marker_style)];
    first.extend(md.prefix.iter().cloned());
    let mut cont = vec![Span::raw("  ")];
    cont.extend(md.cont.iter().cloned());
    if let Some(row) = &md.table {
        let used: usize = first.iter().map(|s| text_width(&s.content)).sum();
        if let Some(rows) = row.rows(width.saturating_sub(used)) {
            return rows
                .into_iter()
                .enumerate()
                .map(|(i, spans)| {
                    let mut line = if i == 0 { first.clone() } else { cont.clone() };
                    line.extend(spans);
                    Line::from(line)
                })
                .collect();
        }
    }
    if kind == Kind::Discarded {
        let struck: Vec<Span<'static>> = md
            .spans
            .iter()
            .map(|s| Span::styled(s.content.clone(), theme::DISCARDED))
            .collect();
        return wrap(&struck, width, &first, &cont);
    }
    wrap(&md.spans, width, &first, &cont)
}
