//! The `/diff` overlay: everything stepwise changed in this session, one
//! colored diff per file with its +N/−M, plus the git branch and the files
//! changed outside stepwise when the workspace is a git repository. Rows are
//! built once per width; only the visible window is drawn.

use crate::agent::GitStatus;
use crate::diff::FileDiff;
use crate::tui::panes::diff::view::{CONTEXT, build_rows};
use crate::tui::panes::scroll::{Scroll, ScrollMove};
use crate::tui::render::text::{sanitize, wrap};
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

#[derive(Debug)]
pub struct SessionDiffView {
    files: Vec<FileDiff>,
    git: Option<GitStatus>,
    width: usize,
    rows: Vec<Line<'static>>,
    scroll: Scroll,
}

impl SessionDiffView {
    pub fn new(files: Vec<FileDiff>, git: Option<GitStatus>) -> Self {
        SessionDiffView {
            files,
            git,
            width: 0,
            rows: Vec::new(),
            scroll: Scroll::at_top(),
        }
    }

    pub fn ensure(&mut self, width: usize) {
        if width == self.width {
            return;
        }
        self.width = width;
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let (added, removed) = self
            .files
            .iter()
            .fold((0, 0), |(a, r), d| (a + d.added, r + d.removed));
        let n = self.files.len();
        let summary = match n {
            0 => "stepwise has not changed any file in this session.".to_string(),
            1 => format!("1 file changed by stepwise in this session: +{added} \u{2212}{removed}"),
            n => {
                format!("{n} files changed by stepwise in this session: +{added} \u{2212}{removed}")
            }
        };
        let mut lines = vec![vec![Span::styled(summary, bold)]];
        if let Some(git) = &self.git {
            let branch = git
                .branch
                .as_deref()
                .map_or("git: no branch (detached)".to_string(), |b| {
                    format!("git branch {}", sanitize(b))
                });
            let others = if git.other_dirty.is_empty() {
                "no other files changed".to_string()
            } else {
                format!(
                    "other files changed outside stepwise: {}",
                    sanitize(&git.other_dirty.join(", "))
                )
            };
            let warn = if git.other_dirty.is_empty() {
                theme::MUTED
            } else {
                theme::WARN
            };
            lines.push(vec![
                Span::styled(branch, theme::ACCENT),
                Span::styled(" · ", theme::DIM),
                Span::styled(others, warn),
            ]);
        }
        let mut rows = Vec::new();
        for spans in lines {
            rows.extend(wrap(&spans, width, &[Span::raw(" ")], &[Span::raw("   ")]));
        }
        rows.push(Line::default());
        let files: Vec<&FileDiff> = self.files.iter().collect();
        rows.extend(build_rows(&files, width, true).rows);
        if files.is_empty() {
            rows.push(Line::styled(" Nothing to show.", CONTEXT));
        }
        self.rows = rows;
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
