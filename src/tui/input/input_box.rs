//! The input box: a multi-line `ratatui-textarea` editor for tasks and slash
//! commands, with shell-like history recall (Up/Down when the box is empty)
//! and search (Ctrl+R: the newest earlier task containing what is typed;
//! again for older ones; Esc puts back what was typed).

use crate::tui::render::text::width;
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::Widget;
use ratatui_textarea::{CursorMove, Input, TextArea, WrapMode};

/// Most rows the text may take before the box scrolls.
const MAX_ROWS: u16 = 6;

pub struct InputBox {
    area: TextArea<'static>,
    history: Vec<String>,
    /// Index into `history` while recalling.
    browsing: Option<usize>,
    /// A Ctrl+R search in progress.
    search: Option<Search>,
}

/// What a history search looks for, where it is, and what was typed before.
#[derive(Debug, Clone)]
pub struct Search {
    pub query: String,
    /// The history entry shown, if one matched.
    pub at: Option<usize>,
    typed: String,
}

impl std::fmt::Debug for InputBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputBox")
            .field("text", &self.text())
            .finish()
    }
}

impl Default for InputBox {
    fn default() -> Self {
        Self::new()
    }
}

impl InputBox {
    pub fn new() -> Self {
        InputBox {
            area: editor(Vec::new()),
            history: Vec::new(),
            browsing: None,
            search: None,
        }
    }

    /// Ctrl+R: show the next older task containing the query (the text typed
    /// when the search began, case-insensitive). Returns the search's state.
    pub fn search_older(&mut self) -> Search {
        let typed = self.text();
        let mut search = self.search.take().unwrap_or(Search {
            query: typed.trim().to_string(),
            at: None,
            typed,
        });
        let needle = search.query.to_lowercase();
        let before = search.at.unwrap_or(self.history.len());
        let found = self.history[..before.min(self.history.len())]
            .iter()
            .rposition(|h| h.to_lowercase().contains(&needle));
        if let Some(i) = found {
            search.at = Some(i);
            let text = self.history[i].clone();
            self.set_text(&text);
            self.browsing = Some(i);
        }
        self.search = Some(search.clone());
        search
    }

    /// Whether a search is in progress.
    pub fn searching(&self) -> bool {
        self.search.is_some()
    }

    /// Esc during a search: put back what was typed.
    pub fn cancel_search(&mut self) {
        if let Some(search) = self.search.take() {
            self.set_text(&search.typed);
            self.browsing = None;
        }
    }

    /// Any other key: keep the found task as the text and stop searching.
    pub fn end_search(&mut self) {
        self.search = None;
    }

    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.area.is_empty()
    }

    /// Start from an earlier session's entries (oldest first).
    pub fn set_history(&mut self, entries: Vec<String>) {
        self.history = entries;
        self.browsing = None;
    }

    pub fn history(&self) -> &[String] {
        &self.history
    }

    /// Take the text out (for submitting) and remember it.
    pub fn take(&mut self) -> String {
        let text = self.text();
        self.area = editor(Vec::new());
        self.browsing = None;
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        text
    }

    /// Whether Up/Down should walk the history rather than move the cursor.
    pub fn recalls(&self) -> bool {
        match self.browsing {
            None => self.is_empty(),
            Some(i) => self.history.get(i).is_some_and(|h| *h == self.text()),
        }
    }

    /// Show the previous (older) task.
    pub fn recall_older(&mut self) {
        let next = match self.browsing {
            None => self.history.len().checked_sub(1),
            Some(i) => Some(i.saturating_sub(1)),
        };
        if let Some(i) = next {
            self.browsing = Some(i);
            self.set_text(&self.history[i].clone());
        }
    }

    /// Show the next (newer) task, or an empty box after the newest.
    pub fn recall_newer(&mut self) {
        match self.browsing {
            Some(i) if i + 1 < self.history.len() => {
                self.browsing = Some(i + 1);
                self.set_text(&self.history[i + 1].clone());
            }
            Some(_) => {
                self.browsing = None;
                self.area = editor(Vec::new());
            }
            None => {}
        }
    }

    fn set_text(&mut self, text: &str) {
        self.area = editor(text.split('\n').map(str::to_string).collect());
        self.area.move_cursor(CursorMove::Bottom);
        self.area.move_cursor(CursorMove::End);
    }

    /// An editing key; returns whether the text changed.
    pub fn edit(&mut self, input: Input) -> bool {
        let changed = self.area.input(input);
        if changed {
            self.browsing = None;
        }
        changed
    }

    pub fn newline(&mut self) {
        self.area.insert_newline();
        self.browsing = None;
    }

    /// Delete from the cursor to the start of the line (shell Ctrl+U).
    pub fn kill_to_start(&mut self) {
        self.area.delete_line_by_head();
        self.browsing = None;
    }

    pub fn insert_str(&mut self, text: &str) {
        let text = text
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .replace('\t', "    ");
        self.area.insert_str(text);
        self.browsing = None;
    }

    /// The current line's text before the cursor (for the `@` picker).
    pub fn before_cursor(&self) -> String {
        let ratatui_textarea::DataCursor(row, col) = self.area.cursor();
        self.area
            .lines()
            .get(row)
            .map(|l| l.chars().take(col).collect())
            .unwrap_or_default()
    }

    /// Delete `n` characters before the cursor.
    pub fn delete_back(&mut self, n: usize) {
        for _ in 0..n {
            self.area.delete_char();
        }
        self.browsing = None;
    }

    pub fn set_focused(&mut self, focused: bool) {
        self.area.set_cursor_style(if focused {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        });
    }

    /// Rows of text for a box `inner_width` columns wide.
    pub fn rows(&self, inner_width: u16) -> u16 {
        let w = (inner_width as usize).max(1);
        let rows: usize = self
            .area
            .lines()
            .iter()
            .map(|l| width(l).div_ceil(w).max(1))
            .sum();
        (rows as u16).clamp(1, MAX_ROWS)
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        (&self.area).render(area, buf);
    }
}

fn editor(lines: Vec<String>) -> TextArea<'static> {
    let mut area = TextArea::new(lines);
    area.set_cursor_line_style(Style::new());
    area.set_wrap_mode(WrapMode::WordOrGlyph);
    area.set_placeholder_text("Type a task, or /help. Enter sends, Alt+Enter adds a line.");
    area.set_placeholder_style(theme::DIM);
    area
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_walks_back_and_forth_only_from_an_empty_box() {
        let mut b = InputBox::new();
        for t in ["first", "second"] {
            b.insert_str(t);
            b.take();
        }
        assert!(b.recalls());
        b.recall_older();
        assert_eq!(b.text(), "second");
        assert!(b.recalls());
        b.recall_older();
        assert_eq!(b.text(), "first");
        b.recall_older();
        assert_eq!(b.text(), "first");
        b.recall_newer();
        assert_eq!(b.text(), "second");
        b.recall_newer();
        assert_eq!(b.text(), "");
        b.insert_str("draft");
        assert!(!b.recalls(), "typing stops recall");
    }

    #[test]
    fn ctrl_r_finds_older_tasks_containing_the_text_and_esc_restores() {
        let mut b = InputBox::new();
        for t in ["fix the Parser", "add docs", "parser tests"] {
            b.insert_str(t);
            b.take();
        }
        b.insert_str("pars");
        assert_eq!(b.search_older().at, Some(2));
        assert_eq!(b.text(), "parser tests");
        assert_eq!(b.search_older().at, Some(0), "older, case-insensitive");
        assert_eq!(b.text(), "fix the Parser");
        assert_eq!(b.search_older().at, Some(0), "nothing older: stays");
        b.cancel_search();
        assert_eq!(b.text(), "pars");
        b.search_older();
        b.end_search();
        assert_eq!(b.text(), "parser tests", "another key keeps the find");
        assert!(!b.searching());
    }
}
