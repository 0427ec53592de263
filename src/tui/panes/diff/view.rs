//! The diff pane's view: one or more `FileDiff`s as width-free items
//! (`source`), where each item's rows start at the current width (a count,
//! no wrapping, for lines that fit), the rows of the items in view wrapped
//! lazily, its scroll position, and the hunk review marks (cursor, rejected
//! hunks) painted over the visible rows at render time, so moving between
//! hunks or toggling one restyles nothing. A resize keeps the same diff line
//! (and row within it) at the top, and costs a count per line plus what is in view.

use crate::tui::panes::scroll::{Scroll, ScrollMove};
use crate::tui::render::text::width as text_width;
use crate::tui::render::{theme, worker};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Line;
use std::collections::HashMap;
use std::ops::Range;

pub use crate::tui::panes::diff::rows::{
    ADDED, ADDED_WORD, CONTEXT, FILE, GUTTER, HUNK, MAX_WORD_PAIRS, REMOVED, REMOVED_WORD,
};
use crate::tui::panes::diff::source::Source;
pub use crate::tui::panes::diff::source::build_rows;

/// Which diff the pane shows; a new key starts a new layout (and scroll).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffKey {
    #[default]
    None,
    /// A tool call row's proposal.
    Row(usize),
    /// The open approval (`serial` of the request, `generation` of its edited version).
    Review { serial: u64, generation: u64 },
    /// A streaming edit's preview (`generation` grows as it is recomputed).
    Live { index: usize, generation: u64 },
    /// The open `run_tests` request (`serial` of the request): what it runs.
    TestRun { serial: u64 },
}

impl DiffKey {
    /// The same source, maybe a newer version of it (keeps the scroll position).
    fn same_source(self, other: DiffKey) -> bool {
        match (self, other) {
            (DiffKey::Live { index: a, .. }, DiffKey::Live { index: b, .. }) => a == b,
            (a, b) => a == b,
        }
    }
}

/// Review marks painted over the rows: which hunks are accepted, and the cursor.
#[derive(Debug, Clone, Copy)]
pub struct Marks<'a> {
    pub accepted: &'a [bool],
    pub cursor: usize,
    /// A patch's files: each one's first hunk and hunk count (hunks are
    /// then numbered within their file); empty for one file.
    pub files: &'a [(usize, usize)],
}

#[derive(Debug)]
pub struct DiffView {
    key: DiffKey,
    source: Source,
    /// The width the rows are counted at (`None`: not yet).
    width: Option<usize>,
    /// First row of each item at `width`, then the total.
    starts: Vec<usize>,
    /// Rows of the items shown lately, at `width`.
    wrapped: Wrapped,
    /// A hunk to scroll into view at the next layout.
    reveal: Option<usize>,
    scroll: Scroll,
}

/// Items kept wrapped at most; past this the cache starts again.
const MAX_WRAPPED: usize = 2_048;
/// A replaced source of more items than this is freed on the UI's worker.
const RETIRE_ITEMS: usize = 1_000;

/// Rows wrapped at the current width, by item.
type Wrapped = HashMap<usize, Vec<Line<'static>>>;

/// Free a replaced source and rows wrapped from it: large ones on the UI's
/// worker, since freeing the strings of a 5,000-line diff, or of the 2,000
/// items a long scroll wrapped, takes milliseconds no frame should wait for
/// (without a worker thread, they are freed here).
fn retire(old: Source, rows: Wrapped) {
    if old.len() > RETIRE_ITEMS || rows.len() > RETIRE_ITEMS {
        worker::free((old, rows));
    }
}

impl Default for DiffView {
    fn default() -> Self {
        DiffView {
            key: DiffKey::None,
            source: Source::default(),
            width: None,
            starts: vec![0],
            wrapped: HashMap::new(),
            reveal: None,
            scroll: Scroll::at_top(),
        }
    }
}

impl DiffView {
    /// Take the items of `key` unless already done (a new source starts at
    /// its top; a live preview follows its newest rows, and says it is still
    /// streaming): `source` gives them; count rows at `width` when it
    /// changed, keeping the same diff line at the top of a viewport of
    /// `height` rows.
    pub fn ensure(
        &mut self,
        key: DiffKey,
        source: impl FnOnce() -> Source,
        width: usize,
        height: usize,
    ) {
        let mut anchor = None;
        if key != self.key {
            if !key.same_source(self.key) {
                self.scroll = match key {
                    DiffKey::Live { .. } => Scroll::following(),
                    _ => Scroll::at_top(),
                };
            }
            self.key = key;
            let mut new = source().colour_on_worker();
            new.inherit(&self.source);
            let rows = std::mem::take(&mut self.wrapped);
            retire(std::mem::replace(&mut self.source, new), rows);
            if matches!(key, DiffKey::Live { .. }) {
                self.source.push_note(Line::styled(
                    " ⋯ the model is still writing this edit",
                    theme::STREAMING,
                ));
            }
            self.width = None;
        } else if self.width != Some(width) && !self.scroll.is_following() {
            anchor = self.anchor(height);
        }
        if self.width != Some(width) {
            self.width = Some(width);
            self.count_rows(width);
            if let Some((item, row)) = anchor {
                let rows = self.item_rows(item);
                let top = self.starts.get(item).copied().unwrap_or(0);
                self.scroll = Scroll::at(top + row.min(rows.len().saturating_sub(1)));
            }
        }
    }

    /// The item at the top of the view and the row within it.
    fn anchor(&self, height: usize) -> Option<(usize, usize)> {
        let top = self.scroll.top(self.total_rows(), height);
        let item = self.item_at(top)?;
        Some((item, top - self.starts[item]))
    }

    /// The item row `row` belongs to.
    fn item_at(&self, row: usize) -> Option<usize> {
        let item = self.starts.partition_point(|&s| s <= row).checked_sub(1)?;
        (item < self.source.len()).then_some(item)
    }

    fn item_rows(&self, item: usize) -> Range<usize> {
        match (self.starts.get(item), self.starts.get(item + 1)) {
            (Some(&a), Some(&b)) => a..b,
            _ => 0..0,
        }
    }

    fn count_rows(&mut self, width: usize) {
        retire(Source::default(), std::mem::take(&mut self.wrapped));
        self.starts.clear();
        let mut total = 0;
        for i in 0..self.source.len() {
            self.starts.push(total);
            total += self.source.row_count(i, width);
        }
        self.starts.push(total);
    }

    /// Wrap (and style, the first time) the items in view in a viewport of
    /// `height` rows, for `render`.
    pub fn materialize(&mut self, height: usize) {
        let (Some(width), top) = (self.width, self.scroll.top(self.total_rows(), height)) else {
            return;
        };
        for h in self.source.take_coloured() {
            for item in self.source.hunk_items().get(h).cloned().unwrap_or_default() {
                self.wrapped.remove(&item);
            }
        }
        let Some(first) = self.item_at(top) else {
            return;
        };
        if self.wrapped.len() > MAX_WRAPPED {
            retire(Source::default(), std::mem::take(&mut self.wrapped));
        }
        let mut item = first;
        while item < self.source.len() && self.starts[item] < top + height {
            if !self.wrapped.contains_key(&item) {
                let rows = self.source.rows(item, width);
                self.wrapped.insert(item, rows);
            }
            item += 1;
        }
    }

    /// Bring hunk `i` into view at the next layout.
    pub fn reveal_hunk(&mut self, i: usize) {
        self.reveal = Some(i);
    }

    /// Carry out a pending reveal for a viewport of `height` rows.
    pub fn settle(&mut self, height: usize) {
        if let Some(i) = self.reveal.take()
            && let Some(r) = self.source.hunk_items().get(i)
        {
            let (start, end) = (self.starts[r.start], self.starts[r.end]);
            let total = self.total_rows();
            self.scroll.reveal(start, end, total, height);
        }
    }

    pub fn key(&self) -> DiffKey {
        self.key
    }

    /// Rows at the width last laid out (exact: every line's rows are counted).
    pub fn total_rows(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
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

    /// Rows of each hunk (its separator row first), at the current width.
    pub fn hunk_rows(&self) -> Vec<Range<usize>> {
        let rows = |r: &Range<usize>| self.starts[r.start]..self.starts[r.end];
        self.source.hunk_items().iter().map(rows).collect()
    }

    /// Whether a hunk in view still waits for its syntax colours (the next
    /// frames pick them up).
    pub fn colouring_due(&self) -> bool {
        self.source.colouring_due()
    }

    /// How many times a hunk's spans were built for this diff (each hunk
    /// at most once, whatever the widths, scrolling or hunk marks).
    pub fn stylings(&self) -> usize {
        self.source.stylings()
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, marks: Option<Marks<'_>>) {
        let height = area.height as usize;
        let top = self.scroll.top(self.total_rows(), height);
        let Some(first) = self.item_at(top) else {
            return;
        };
        let rows = (first..self.source.len()).flat_map(|item| {
            let skip = top.saturating_sub(self.starts[item]);
            let rows = self.wrapped.get(&item).map_or(&[][..], |r| r.as_slice());
            let n = self.item_rows(item).len();
            rows.iter().take(n).skip(skip).map(Some).chain(
                // A row counted but not wrapped (never expected): left blank.
                std::iter::repeat_n(None, n.saturating_sub(rows.len().max(skip))),
            )
        });
        for (i, row) in rows.take(height).enumerate() {
            let y = area.y + i as u16;
            if let Some(row) = row {
                buf.set_line(area.x, y, row, area.width);
            }
            if let Some(m) = marks {
                let line = Rect {
                    y,
                    height: 1,
                    ..area
                };
                self.mark(top + i, line, buf, m);
            }
        }
    }

    /// Paint the review marks of row `row` (drawn at `line`).
    fn mark(&self, row: usize, line: Rect, buf: &mut Buffer, m: Marks<'_>) {
        let Some(item) = self.item_at(row) else {
            return;
        };
        let hunks = self.source.hunk_items();
        let h = hunks.partition_point(|r| r.end <= item);
        let Some(items) = hunks.get(h).filter(|r| r.contains(&item)) else {
            return;
        };
        let accepted = m.accepted.get(h).copied().unwrap_or(true);
        let header = self.starts[items.start] == row;
        if !accepted && !header {
            let text = Rect {
                x: line.x + 1,
                width: line.width.saturating_sub(1),
                ..line
            };
            buf.set_style(text, theme::REJECTED);
        }
        if h == m.cursor {
            buf.set_string(line.x, line.y, "▌", theme::WARN_BOLD);
        }
        if header {
            let (k, n) = m
                .files
                .iter()
                .rfind(|&&(start, count)| start <= h && count > 0)
                .map_or((h, m.accepted.len()), |&(start, count)| (h - start, count));
            let (label, style) = if accepted {
                (format!(" ✓ hunk {}/{n} ", k + 1), theme::GOOD)
            } else {
                (format!(" ✗ hunk {}/{n} rejected ", k + 1), theme::BAD)
            };
            let style = if h == m.cursor {
                style.add_modifier(Modifier::BOLD | Modifier::REVERSED)
            } else {
                style.add_modifier(Modifier::BOLD)
            };
            let w = text_width(&label) as u16;
            if w + 20 < line.width {
                buf.set_string(line.x + line.width - w - 1, line.y, label, style);
            }
        }
    }
}
