//! Markdown tables laid out in columns: each column as wide as its widest
//! cell in display width (so wide and combined characters line up), cells
//! aligned as the table's delimiter row says, the header bold and ruled off.
//! A table wider than its pane is laid out again for the width when it is
//! wrapped ([`TableRow::rows`]): columns are capped to share the width and
//! their cells wrap inside them, so a row never breaks across the columns.

use crate::tui::render::text::{width, wrap};
use crate::tui::render::theme;
use pulldown_cmark::Alignment;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use std::sync::Arc;

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

    /// The table's lines: header, a rule, then the body; each with what
    /// laying it out again for a narrower width needs.
    pub fn lines(self) -> Vec<(Vec<Span<'static>>, TableRow)> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
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
        let shape = Arc::new(Shape {
            widths,
            align: self.align.clone(),
        });
        let mut out = Vec::new();
        for (r, row) in self.rows.into_iter().enumerate() {
            let header = r < self.header_rows;
            let cells: Vec<Cell> = (0..columns)
                .map(|i| row.get(i).cloned().unwrap_or_default())
                .map(|cell| match header {
                    true => bold(cell),
                    false => cell,
                })
                .collect();
            let row = TableRow {
                cells,
                rule: false,
                shape: shape.clone(),
            };
            out.push((row.line(&shape.widths), row));
            if header && r + 1 == self.header_rows {
                let rule = TableRow {
                    cells: Vec::new(),
                    rule: true,
                    shape: shape.clone(),
                };
                out.push((rule.line(&shape.widths), rule));
            }
        }
        out
    }
}

fn cell_w(c: &Cell) -> usize {
    c.iter().map(|s| width(&s.content)).sum()
}

fn bold(cell: Cell) -> Cell {
    cell.into_iter()
        .map(|s| Span::styled(s.content, s.style.add_modifier(Modifier::BOLD)))
        .collect()
}

/// What every row of a table shares: its columns' natural widths and alignments.
#[derive(Debug, PartialEq)]
struct Shape {
    widths: Vec<usize>,
    align: Vec<Alignment>,
}

/// Between two columns.
const SEP: &str = " │ ";
/// The narrowest a capped column gets.
const MIN_COLUMN: usize = 4;

/// One row of a table (or its rule), able to lay itself out at a width.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRow {
    cells: Vec<Cell>,
    rule: bool,
    shape: Arc<Shape>,
}

impl TableRow {
    /// The row at the columns' `widths`, on one line (cells no wider than them).
    fn line(&self, widths: &[usize]) -> Vec<Span<'static>> {
        if self.rule {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            return vec![Span::styled(rule.join("─┼─"), theme::DIM)];
        }
        let parts: Vec<Vec<Cell>> = self.cells.iter().map(|c| vec![c.clone()]).collect();
        self.join(widths, &parts, 0)
    }

    /// Row `k` of the cells' wrapped `parts`, each padded to its column.
    fn join(&self, widths: &[usize], parts: &[Vec<Cell>], k: usize) -> Vec<Span<'static>> {
        let mut line: Vec<Span<'static>> = Vec::new();
        for (i, w) in widths.iter().enumerate() {
            if i > 0 {
                line.push(Span::styled(SEP, theme::DIM));
            }
            let cell = parts
                .get(i)
                .and_then(|p| p.get(k))
                .cloned()
                .unwrap_or_default();
            let pad = w.saturating_sub(cell_w(&cell));
            let (left, right) = match self.shape.align.get(i) {
                Some(Alignment::Right) => (pad, 0),
                Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                _ => (0, pad),
            };
            if left > 0 {
                line.push(Span::raw(" ".repeat(left)));
            }
            line.extend(cell);
            if right > 0 && i + 1 < widths.len() {
                line.push(Span::raw(" ".repeat(right)));
            }
        }
        line
    }

    /// The row laid out in `avail` columns, when its natural layout is
    /// wider: capped columns with their cells wrapped inside them. `None`:
    /// it fits as it is, or the width is too small for any column layout.
    pub fn rows(&self, avail: usize) -> Option<Vec<Vec<Span<'static>>>> {
        let natural = &self.shape.widths;
        let n = natural.len();
        let seps = SEP.len() * n.saturating_sub(1);
        let total: usize = natural.iter().sum::<usize>() + seps;
        if total <= avail || n == 0 || avail < seps + n * MIN_COLUMN {
            return None;
        }
        let widths = fit(natural, avail - seps);
        if self.rule {
            return Some(vec![self.line(&widths)]);
        }
        let parts: Vec<Vec<Cell>> = self
            .cells
            .iter()
            .zip(&widths)
            .map(|(cell, w)| {
                wrap(cell, *w, &[], &[])
                    .into_iter()
                    .map(|l: Line<'static>| l.spans)
                    .collect()
            })
            .collect();
        let height = parts.iter().map(Vec::len).max().unwrap_or(1).max(1);
        Some((0..height).map(|k| self.join(&widths, &parts, k)).collect())
    }
}

/// Column widths summing to at most `budget`: a column narrower than its
/// share keeps its width, the others share what is left equally.
fn fit(natural: &[usize], budget: usize) -> Vec<usize> {
    let mut widths = vec![0; natural.len()];
    let mut open: Vec<usize> = (0..natural.len()).collect();
    let mut left = budget;
    loop {
        let share = left / open.len().max(1);
        let (small, big): (Vec<usize>, Vec<usize>) =
            open.iter().partition(|&&i| natural[i] <= share);
        if small.is_empty() {
            for (j, &i) in big.iter().enumerate() {
                // The remainder goes to the first columns.
                let extra = usize::from(j < left % big.len().max(1));
                widths[i] = (share + extra).max(1);
            }
            return widths;
        }
        for &i in &small {
            widths[i] = natural[i];
            left -= natural[i];
        }
        open = big;
        if open.is_empty() {
            return widths;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_columns_keep_their_width_and_wide_ones_share_the_rest() {
        assert_eq!(fit(&[3, 50, 80], 40), vec![3, 19, 18]);
        assert_eq!(fit(&[10, 10], 40), vec![10, 10]);
    }
}
