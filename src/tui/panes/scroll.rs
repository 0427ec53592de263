//! Scroll position of a pane, with "follow the bottom" semantics: a pane that
//! follows shows the newest rows; scrolling up stops following, scrolling back
//! to the bottom resumes it.

/// How far to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScrollMove {
    Up(usize),
    Down(usize),
    PageUp,
    PageDown,
    Top,
    Bottom,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scroll {
    /// First visible row when not following.
    offset: usize,
    follow: bool,
}

impl Default for Scroll {
    fn default() -> Self {
        Scroll::following()
    }
}

impl Scroll {
    /// A pane that sticks to its newest content.
    pub fn following() -> Self {
        Scroll {
            offset: 0,
            follow: true,
        }
    }

    /// A pane scrolled to row `offset` (not following).
    pub fn at(offset: usize) -> Self {
        Scroll {
            offset,
            follow: false,
        }
    }

    /// A pane that starts at its top (e.g. a diff).
    pub fn at_top() -> Self {
        Scroll {
            offset: 0,
            follow: false,
        }
    }

    /// Jump to the bottom and follow new content.
    pub fn follow(&mut self) {
        self.follow = true;
    }

    pub fn is_following(&self) -> bool {
        self.follow
    }

    /// First visible row for `total` rows in a viewport of `height` rows.
    /// Draw the rows visible through this scroll position into `area`.
    pub fn draw_window(
        &self,
        rows: &[ratatui::text::Line<'_>],
        area: ratatui::layout::Rect,
        buf: &mut ratatui::buffer::Buffer,
    ) {
        let top = self.top(rows.len(), area.height as usize);
        for (i, row) in rows.iter().skip(top).take(area.height as usize).enumerate() {
            buf.set_line(area.x, area.y + i as u16, row, area.width);
        }
    }

    pub fn top(&self, total: usize, height: usize) -> usize {
        let max = total.saturating_sub(height);
        if self.follow {
            max
        } else {
            self.offset.min(max)
        }
    }

    /// Apply a move, given the current content size; returns whether the view changed.
    pub fn apply(&mut self, m: ScrollMove, total: usize, height: usize) -> bool {
        let before = (self.top(total, height), self.follow);
        let max = total.saturating_sub(height);
        let top = self.top(total, height);
        let page = height.saturating_sub(1).max(1);
        let new_top = match m {
            ScrollMove::Up(n) => top.saturating_sub(n),
            ScrollMove::Down(n) => top.saturating_add(n).min(max),
            ScrollMove::PageUp => top.saturating_sub(page),
            ScrollMove::PageDown => top.saturating_add(page).min(max),
            ScrollMove::Top => 0,
            ScrollMove::Bottom => max,
        };
        self.offset = new_top;
        // Reaching the bottom resumes following; leaving it stops.
        self.follow = new_top >= max;
        before != (self.top(total, height), self.follow)
    }

    /// Scroll just enough that rows `start..end` are in view (from `start`
    /// when they do not fit).
    pub fn reveal(&mut self, start: usize, end: usize, total: usize, height: usize) {
        let max = total.saturating_sub(height);
        let top = self.top(total, height);
        let new_top = if start < top || end.saturating_sub(start) > height {
            start
        } else if end > top + height {
            end - height
        } else {
            top
        };
        self.offset = new_top.min(max);
        self.follow = self.offset >= max && total > height;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_until_scrolled_up_and_resumes_at_bottom() {
        let mut s = Scroll::following();
        assert_eq!(s.top(100, 10), 90);
        s.apply(ScrollMove::Up(5), 100, 10);
        assert!(!s.is_following());
        assert_eq!(s.top(100, 10), 85);
        // New content does not move a pane that was scrolled up.
        assert_eq!(s.top(200, 10), 85);
        s.apply(ScrollMove::Bottom, 200, 10);
        assert!(s.is_following());
        assert_eq!(s.top(300, 10), 290);
        s.apply(ScrollMove::PageUp, 300, 10);
        s.apply(ScrollMove::PageDown, 300, 10);
        assert!(s.is_following());
    }

    #[test]
    fn reveal_brings_a_range_into_view() {
        let mut s = Scroll::at_top();
        s.reveal(30, 35, 100, 10);
        assert_eq!(s.top(100, 10), 25, "just enough to show the end");
        s.reveal(5, 8, 100, 10);
        assert_eq!(s.top(100, 10), 5, "scrolled back up to the start");
        s.reveal(6, 9, 100, 10);
        assert_eq!(s.top(100, 10), 5, "already visible: no move");
        s.reveal(40, 80, 100, 10);
        assert_eq!(s.top(100, 10), 40, "too tall: its start");
        assert!(!s.is_following());
    }

    #[test]
    fn short_content_stays_at_top() {
        let mut s = Scroll::at_top();
        assert_eq!(s.top(3, 10), 0);
        s.apply(ScrollMove::Down(4), 3, 10);
        assert_eq!(s.top(3, 10), 0);
    }
}
