//! The diff pane's view: the rows of one or more `FileDiff`s (built by
//! `rows`) cached per (source, width), its scroll position, and the hunk
//! review marks (cursor, rejected hunks) painted over the visible rows at
//! render time, so moving between hunks or toggling one costs nothing extra.

use crate::diff::FileDiff;
use crate::tui::panes::scroll::{Scroll, ScrollMove};
use crate::tui::render::text::width as text_width;
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Line;
use std::ops::Range;

pub use crate::tui::panes::diff::rows::{
    ADDED, ADDED_WORD, CONTEXT, FILE, GUTTER, HUNK, MAX_WORD_PAIRS, REMOVED, REMOVED_WORD,
    build_rows,
};

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
    width: usize,
    rows: Vec<Line<'static>>,
    /// Rows of each hunk (its separator row first), in order.
    hunks: Vec<Range<usize>>,
    /// A hunk to scroll into view at the next layout.
    reveal: Option<usize>,
    scroll: Scroll,
}

impl Default for DiffView {
    fn default() -> Self {
        DiffView {
            key: DiffKey::None,
            width: 0,
            rows: Vec::new(),
            hunks: Vec::new(),
            reveal: None,
            scroll: Scroll::at_top(),
        }
    }
}

impl DiffView {
    /// Lay out the diffs of `key` at `width` unless already done, with a
    /// header row per file when `headers`. A new source starts at its top (a
    /// live preview follows its newest rows, and says it is still streaming).
    pub fn ensure<'a>(
        &mut self,
        key: DiffKey,
        files: impl FnOnce() -> Vec<&'a FileDiff>,
        width: usize,
        headers: bool,
    ) {
        if key != self.key {
            if !key.same_source(self.key) {
                self.scroll = match key {
                    DiffKey::Live { .. } => Scroll::following(),
                    _ => Scroll::at_top(),
                };
            }
            self.key = key;
            self.width = 0;
        }
        if width != self.width {
            self.width = width;
            let files = files();
            let built = build_rows(&files, width, headers || files.len() > 1);
            self.rows = built.rows;
            self.hunks = built.hunks;
            if matches!(key, DiffKey::Live { .. }) {
                self.rows.push(Line::styled(
                    " ⋯ the model is still writing this edit",
                    theme::STREAMING,
                ));
            }
        }
    }

    /// Bring hunk `i` into view at the next layout.
    pub fn reveal_hunk(&mut self, i: usize) {
        self.reveal = Some(i);
    }

    /// Carry out a pending reveal for a viewport of `height` rows.
    pub fn settle(&mut self, height: usize) {
        if let Some(i) = self.reveal.take()
            && let Some(r) = self.hunks.get(i)
        {
            self.scroll.reveal(r.start, r.end, self.rows.len(), height);
        }
    }

    pub fn key(&self) -> DiffKey {
        self.key
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

    pub fn hunk_rows(&self) -> &[Range<usize>] {
        &self.hunks
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, marks: Option<Marks<'_>>) {
        let height = area.height as usize;
        let top = self.scroll.top(self.rows.len(), height);
        for (i, row) in self.rows.iter().skip(top).take(height).enumerate() {
            let y = area.y + i as u16;
            buf.set_line(area.x, y, row, area.width);
            if let Some(m) = marks {
                self.mark(
                    top + i,
                    Rect {
                        y,
                        height: 1,
                        ..area
                    },
                    buf,
                    m,
                );
            }
        }
    }

    /// Paint the review marks of row `row` (drawn at `line`).
    fn mark(&self, row: usize, line: Rect, buf: &mut Buffer, m: Marks<'_>) {
        let h = self.hunks.partition_point(|r| r.end <= row);
        if !self.hunks.get(h).is_some_and(|r| r.contains(&row)) {
            return;
        }
        let accepted = m.accepted.get(h).copied().unwrap_or(true);
        let header = self.hunks[h].start == row;
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
