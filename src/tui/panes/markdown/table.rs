//! Markdown tables laid out in columns: each column as wide as its widest
//! cell in display width (so wide and combined characters line up), cells
//! aligned as the table's delimiter row says, the header bold and ruled off.

use crate::tui::render::text::width;
use crate::tui::render::theme;
use pulldown_cmark::Alignment;
use ratatui::style::Modifier;
use ratatui::text::Span;

type Cell = Vec<Span<'static>>;

/// A table being read, row by row.
#[derive(Debug, Default)]
pub struct Table {
    align: Vec<Alignment>,
    rows: Vec<Vec<Cell>>,
    row: Vec<Cell>,
    header_rows: usize,
}

impl Table {
    pub fn new(align: Vec<Alignment>) -> Self {
        Table {
            align,
            ..Table::default()
        }
    }

    pub fn push_cell(&mut self, cell: Cell) {
        self.row.push(cell);
    }

    pub fn end_row(&mut self, header: bool) {
        self.rows.push(std::mem::take(&mut self.row));
        if header {
            self.header_rows = self.rows.len();
        }
    }

    /// The table's lines: header, a rule, then the body.
    pub fn lines(self) -> Vec<Vec<Span<'static>>> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let cell_w = |c: &Cell| c.iter().map(|s| width(&s.content)).sum::<usize>();
        let widths: Vec<usize> = (0..columns)
            .map(|i| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(i))
                    .map(cell_w)
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let sep = || Span::styled(" │ ", theme::DIM);
        let mut out = Vec::new();
        for (r, row) in self.rows.iter().enumerate() {
            let header = r < self.header_rows;
            let mut line: Vec<Span<'static>> = Vec::new();
            for (i, w) in widths.iter().enumerate() {
                if i > 0 {
                    line.push(sep());
                }
                let cell = row.get(i).cloned().unwrap_or_default();
                let pad = w - cell_w(&cell);
                let (left, right) = match self.align.get(i) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                if left > 0 {
                    line.push(Span::raw(" ".repeat(left)));
                }
                for span in cell {
                    match header {
                        true => line.push(Span::styled(
                            span.content,
                            span.style.add_modifier(Modifier::BOLD),
                        )),
                        false => line.push(span),
                    }
                }
                if right > 0 && i + 1 < widths.len() {
                    line.push(Span::raw(" ".repeat(right)));
                }
            }
            out.push(line);
            if header && r + 1 == self.header_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                out.push(vec![Span::styled(rule.join("─┼─"), theme::DIM)]);
            }
        }
        out
    }
}
