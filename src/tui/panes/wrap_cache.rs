//! The conversation's wrap cache and scroll position, lazy around the view:
//! per logical line its wrapped height once computed, the wrapped rows of the
//! lines near the view, and a scroll anchor of (logical line, row within it).
//! Nothing here wraps every line: following the bottom wraps backwards from
//! the end just enough lines to fill the viewport, a scroll wraps the lines
//! it passes, and a width change forgets the heights instead of re-wrapping.
//!
//! Must stay true: what is drawn, and where every scroll move lands, is the
//! same as wrapping every line and scrolling a global row offset over the
//! result (`Scroll` semantics), except that a width change keeps the same
//! logical line at the top. No total row count is kept: the conversation
//! shows no position or scrollbar, moves are relative to the anchor, and "at
//! the bottom" is decided by counting at most a viewport of rows forward.

use crate::tui::panes::scroll::ScrollMove;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use std::collections::HashMap;

const UNKNOWN: u32 = u32::MAX;
/// Wrapped lines kept beyond the visible ones (a few pages of scrolling back).
const KEEP_ROWS_OF: usize = 1024;

/// A row of the wrapped conversation: logical line and row inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub row: usize,
}

/// Where the conversation is scrolled to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    follow: bool,
    /// First visible row when not following.
    top: Pos,
}

impl Anchor {
    pub fn is_following(&self) -> bool {
        self.follow
    }
}

/// How one logical line becomes rows at a width.
pub type WrapFn<'a, T> = &'a dyn Fn(&T, usize) -> Vec<Line<'static>>;

#[derive(Debug)]
pub struct WrapCache {
    width: usize,
    /// Wrapped height per logical line (`UNKNOWN` until wrapped at `width`).
    heights: Vec<u32>,
    rows: HashMap<usize, Vec<Line<'static>>>,
    anchor: Anchor,
    /// The top row found by the last layout (what `render` draws from).
    shown: Pos,
}

impl Default for WrapCache {
    fn default() -> Self {
        WrapCache {
            width: 0,
            heights: Vec::new(),
            rows: HashMap::new(),
            anchor: Anchor {
                follow: true,
                top: Pos::default(),
            },
            shown: Pos::default(),
        }
    }
}

impl WrapCache {
    pub fn anchor(&self) -> &Anchor {
        &self.anchor
    }

    pub fn follow(&mut self) {
        self.anchor.follow = true;
    }

    /// Lines from `line` on changed (popped or restyled): forget their rows.
    pub fn invalidate_from(&mut self, line: usize) {
        if line < self.heights.len() {
            self.heights.truncate(line);
            self.rows.retain(|&k, _| k < line);
        }
    }

    /// Lines `lines` got new styles but kept their text (their colours
    /// came): forget their rows, keep their heights (wrapping looks at the
    /// characters only, never at their styles).
    pub fn restyled(&mut self, lines: std::ops::Range<usize>) {
        for line in lines {
            self.rows.remove(&line);
        }
    }

    /// How many lines have a known height (for tests of the laziness).
    pub fn known(&self) -> usize {
        self.heights.iter().filter(|&&h| h != UNKNOWN).count()
    }

    /// Lay out a viewport of `width` x `height`: find the top row and wrap
    /// the visible lines (and only what finding the top needed). The
    /// logical lines in view.
    pub fn layout<T>(
        &mut self,
        lines: &[T],
        wrap: WrapFn<'_, T>,
        width: usize,
        height: usize,
    ) -> std::ops::Range<usize> {
        if width != self.width {
            self.width = width;
            self.heights.iter_mut().for_each(|h| *h = UNKNOWN);
            self.rows.clear();
        }
        let mut v = View {
            cache: self,
            lines,
            wrap,
        };
        v.sync();
        if !v.cache.anchor.follow {
            v.cache.anchor.top = v.clamp(v.cache.anchor.top);
        }
        let top = v.top(height);
        v.cache.shown = top;
        if v.cache.rows.len() > KEEP_ROWS_OF {
            let keep = top.line.saturating_sub(height)..top.line + 2 * height.max(1);
            v.cache.rows.retain(|k, _| keep.contains(k));
        }
        let (mut i, mut skip, mut left) = (top.line, top.row, height);
        while left > 0 && i < lines.len() {
            let h = v.rows_of(i).len();
            left = left.saturating_sub(h.saturating_sub(skip));
            skip = 0;
            i += 1;
        }
        top.line..i
    }

    /// Scroll by `m` in a viewport of `height` rows (at the last laid-out width).
    pub fn apply<T>(&mut self, lines: &[T], wrap: WrapFn<'_, T>, m: ScrollMove, height: usize) {
        if self.width == 0 {
            // Never laid out: nothing is wrapped yet, like an empty pane.
            self.anchor.follow = true;
            return;
        }
        let mut v = View {
            cache: self,
            lines,
            wrap,
        };
        v.sync();
        let top = v.top(height);
        let page = height.saturating_sub(1).max(1);
        let new = match m {
            ScrollMove::Up(n) => v.back(top, n),
            ScrollMove::Down(n) => v.forward(top, n),
            ScrollMove::PageUp => v.back(top, page),
            ScrollMove::PageDown => v.forward(top, page),
            ScrollMove::Top => Pos::default(),
            ScrollMove::Bottom => {
                v.cache.anchor.follow = true;
                return;
            }
        };
        // At or past the bottom: follow again (and stop at the bottom).
        let at_bottom = v.rows_from(new, height + 1) <= height;
        v.cache.anchor = Anchor {
            follow: at_bottom,
            top: if at_bottom { v.bottom(height) } else { new },
        };
    }

    /// Draw the rows laid out last into `area`; how many rows were drawn.
    pub fn render(&self, lines: usize, area: Rect, buf: &mut Buffer) -> usize {
        let height = area.height as usize;
        let (mut y, mut i, mut skip) = (0, self.shown.line, self.shown.row);
        while y < height && i < lines {
            for row in self.rows.get(&i).into_iter().flatten().skip(skip) {
                if y >= height {
                    break;
                }
                buf.set_line(area.x, area.y + y as u16, row, area.width);
                y += 1;
            }
            skip = 0;
            i += 1;
        }
        y
    }
}

/// The cache together with the lines it wraps, for one operation.
struct View<'a, T> {
    cache: &'a mut WrapCache,
    lines: &'a [T],
    wrap: WrapFn<'a, T>,
}

impl<T> View<'_, T> {
    fn sync(&mut self) {
        self.cache.heights.resize(self.lines.len(), UNKNOWN);
    }

    fn rows_of(&mut self, i: usize) -> &[Line<'static>] {
        let (wrap, line, width) = (self.wrap, &self.lines[i], self.cache.width);
        let heights = &mut self.cache.heights;
        self.cache.rows.entry(i).or_insert_with(|| {
            let rows = wrap(line, width);
            heights[i] = rows.len() as u32;
            rows
        })
    }

    fn height(&mut self, i: usize) -> usize {
        match self.cache.heights[i] {
            UNKNOWN => self.rows_of(i).len(),
            h => h as usize,
        }
    }

    /// The top row when following: just enough lines from the end to fill `height`.
    fn bottom(&mut self, height: usize) -> Pos {
        let mut need = height;
        for i in (0..self.lines.len()).rev() {
            let h = self.height(i);
            if h >= need {
                return Pos {
                    line: i,
                    row: h - need,
                };
            }
            need -= h;
        }
        Pos::default()
    }

    /// The rows from `p` to the end, counted up to `limit`.
    fn rows_from(&mut self, p: Pos, limit: usize) -> usize {
        let (mut n, mut skip) = (0, p.row);
        for i in p.line..self.lines.len() {
            if n >= limit {
                break;
            }
            n += self.height(i).saturating_sub(skip);
            skip = 0;
        }
        n
    }

    /// The first visible row for a viewport of `height` rows.
    fn top(&mut self, height: usize) -> Pos {
        if self.cache.anchor.follow {
            return self.bottom(height);
        }
        let p = self.cache.anchor.top;
        // Scrolled past what is left (the content shrank or the view grew).
        if self.rows_from(p, height) < height {
            self.bottom(height)
        } else {
            p
        }
    }

    /// `p` on an existing row (after lines changed or the width did).
    fn clamp(&mut self, p: Pos) -> Pos {
        let mut i = p.line;
        let mut row = p.row;
        while i < self.lines.len() {
            let h = self.height(i);
            if h > 0 {
                return Pos {
                    line: i,
                    row: row.min(h - 1),
                };
            }
            row = 0;
            i += 1;
        }
        Pos {
            line: self.lines.len(),
            row: 0,
        }
    }

    fn forward(&mut self, p: Pos, n: usize) -> Pos {
        let (mut i, mut row, mut left) = (p.line, p.row, n);
        while i < self.lines.len() {
            let h = self.height(i);
            if row + left < h {
                return Pos {
                    line: i,
                    row: row + left,
                };
            }
            left -= h.saturating_sub(row);
            i += 1;
            row = 0;
        }
        Pos { line: i, row: 0 }
    }

    fn back(&mut self, p: Pos, n: usize) -> Pos {
        let (mut i, mut row, mut left) = (p.line, p.row, n);
        loop {
            if left <= row {
                return Pos {
                    line: i,
                    row: row - left,
                };
            }
            left -= row;
            if i == 0 {
                return Pos::default();
            }
            i -= 1;
            row = self.height(i);
        }
    }
}

#[cfg(test)]
#[path = "wrap_cache_tests.rs"]
mod tests;
