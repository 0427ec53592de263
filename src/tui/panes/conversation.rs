//! The conversation pane: the transcript (tasks, streamed assistant text with
//! light markdown, final answers, errors, gate refusals, notices) as logical
//! lines. Wrapping and scrolling are `wrap_cache`'s: only the lines around
//! the view are ever wrapped, so appending, a width change and drawing cost
//! what is visible, not the length of the session.

use crate::tui::panes::line_kind::Kind;
use crate::tui::panes::markdown::{CODE, inline_markdown, markdown_kind};
use crate::tui::panes::scroll::ScrollMove;
use crate::tui::panes::wrap_cache::{Anchor, WrapCache};
use crate::tui::render::text::{sanitize, wrap};
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

#[derive(Debug, Clone)]
struct Logical {
    text: String,
    kind: Kind,
    /// First line of its entry (gets the entry's marker).
    first: bool,
}

/// An assistant reply still streaming in.
#[derive(Debug, Default)]
struct OpenReply {
    /// Index of its first logical line, once it has one.
    start: Option<usize>,
    /// Text after the last newline.
    partial: String,
    /// The partial line is shown as the last logical line.
    tail: bool,
    in_code: bool,
    committed: usize,
    text: String,
}

#[derive(Debug, Default)]
pub struct Conversation {
    lines: Vec<Logical>,
    open: Option<OpenReply>,
    /// The reply closed last in this turn: its first line and full text.
    last_reply: Option<(usize, String)>,
    cache: WrapCache,
}

impl Conversation {
    pub fn new() -> Self {
        Conversation::default()
    }

    pub fn clear(&mut self) {
        *self = Conversation::new();
    }

    pub fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// The text of each logical line, oldest first (sanitized).
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().map(|l| l.text.as_str())
    }

    /// Add a whole entry (task, answer, error, notice...). Closes any open reply.
    pub fn push_entry(&mut self, kind: Kind, text: &str) {
        self.close_reply();
        self.separate();
        let mut in_code = false;
        for (i, line) in text.trim_end_matches('\n').split('\n').enumerate() {
            let kind = markdown_kind(line, kind, &mut in_code);
            self.lines.push(Logical {
                text: sanitize(line),
                kind,
                first: i == 0,
            });
        }
    }

    /// Add an entry whose lines have their own kinds (e.g. a receipt).
    pub fn push_lines(&mut self, lines: &[(Kind, String)]) {
        self.close_reply();
        self.separate();
        for (i, (kind, text)) in lines.iter().enumerate() {
            self.lines.push(Logical {
                text: sanitize(text),
                kind: *kind,
                first: i == 0,
            });
        }
    }

    /// Append streamed assistant text.
    pub fn delta(&mut self, text: &str) {
        let mut open = self.open.take().unwrap_or_default();
        if open.tail {
            self.lines.pop();
            self.invalidate_from(self.lines.len());
            open.tail = false;
        }
        open.text.push_str(text);
        open.partial.push_str(text);
        if open.partial.contains('\n') {
            let pending = std::mem::take(&mut open.partial);
            let (complete, rest) = pending.rsplit_once('\n').unwrap_or(("", &pending));
            for line in complete.split('\n') {
                if open.start.is_none() && line.trim().is_empty() {
                    continue;
                }
                let kind = markdown_kind(line, Kind::Assistant, &mut open.in_code);
                self.push_reply_line(&mut open, line, kind);
                open.committed += 1;
            }
            open.partial = rest.to_string();
        }
        if !open.partial.is_empty() && (open.start.is_some() || !open.partial.trim().is_empty()) {
            let kind = if open.in_code {
                Kind::Code
            } else {
                Kind::Assistant
            };
            let partial = std::mem::take(&mut open.partial);
            self.push_reply_line(&mut open, &partial, kind);
            open.partial = partial;
            open.tail = true;
        }
        self.open = Some(open);
    }

    fn push_reply_line(&mut self, open: &mut OpenReply, line: &str, kind: Kind) {
        if open.start.is_none() {
            self.separate();
            open.start = Some(self.lines.len());
        }
        self.lines.push(Logical {
            text: sanitize(line),
            kind,
            first: open.committed == 0,
        });
    }

    /// The streamed reply is complete.
    pub fn close_reply(&mut self) {
        let Some(open) = self.open.take() else { return };
        let Some(start) = open.start else { return };
        while self.lines.len() > start + 1
            && self.lines.last().is_some_and(|l| l.text.trim().is_empty())
        {
            self.lines.pop();
        }
        self.invalidate_from(self.lines.len());
        self.last_reply = Some((start, open.text));
    }

    /// A reply that is still streaming broke off (its request failed and is
    /// retried): keep its text, marked as discarded, so nothing vanishes; it
    /// can never become the final answer. Whether there was text to keep.
    pub fn discard_reply(&mut self) -> bool {
        let Some(OpenReply {
            start: Some(start), ..
        }) = self.open.take()
        else {
            return false;
        };
        while self.lines.len() > start + 1
            && self.lines.last().is_some_and(|l| l.text.trim().is_empty())
        {
            self.lines.pop();
        }
        for line in &mut self.lines[start..] {
            line.kind = Kind::Discarded;
        }
        self.invalidate_from(start);
        true
    }

    /// Whether a reply is streaming.
    pub fn is_streaming(&self) -> bool {
        self.open.as_ref().is_some_and(|o| o.start.is_some())
    }

    /// A new model turn: an earlier reply can no longer be the final answer.
    pub fn new_turn(&mut self) {
        self.close_reply();
        self.last_reply = None;
    }

    /// Show a final answer; if it was just streamed, restyle that reply instead of repeating it.
    pub fn final_answer(&mut self, text: &str) {
        self.close_reply();
        match self.last_reply.take() {
            Some((start, streamed)) if streamed.trim() == text.trim() => {
                for line in &mut self.lines[start..] {
                    if line.kind == Kind::Assistant {
                        line.kind = Kind::Final;
                    }
                }
                self.invalidate_from(start);
            }
            _ => self.push_entry(Kind::Final, text),
        }
    }

    fn separate(&mut self) {
        if !self.lines.is_empty() {
            self.lines.push(Logical {
                text: String::new(),
                kind: Kind::Blank,
                first: true,
            });
        }
    }

    fn invalidate_from(&mut self, line: usize) {
        self.cache.invalidate_from(line);
    }

    /// Wrap what a viewport of `width` x `height` shows (and only that).
    pub fn ensure_wrapped(&mut self, width: usize, height: usize) {
        self.cache.layout(&self.lines, &wrap_logical, width, height);
    }

    /// Show the newest rows again, and keep following them.
    pub fn follow(&mut self) {
        self.cache.follow();
    }

    /// Where the view is scrolled to.
    pub fn scroll(&self) -> &Anchor {
        self.cache.anchor()
    }

    /// Scroll by `m` in a viewport of `height` rows.
    pub fn scroll_by(&mut self, m: ScrollMove, height: usize) {
        self.cache.apply(&self.lines, &wrap_logical, m, height);
    }

    /// Draw the visible window of rows into `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let drawn = self.cache.render(self.lines.len(), area, buf);
        if drawn == 0 && area.height > 0 {
            let hint = Line::styled(
                "Type a task below and press Enter. The agent asks before every write and test run.",
                theme::DIM,
            );
            let rows = wrap(&hint.spans, area.width as usize, &[], &[]);
            for (i, row) in rows.iter().take(area.height as usize).enumerate() {
                buf.set_line(area.x, area.y + i as u16, row, area.width);
            }
        }
    }
}

fn wrap_logical(line: &Logical, width: usize) -> Vec<Line<'static>> {
    let dim = theme::DIM;
    let (marker, marker_style, text_style) = match line.kind {
        Kind::User => (
            "❯ ",
            theme::ACCENT_BOLD,
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Kind::Assistant => ("• ", dim, Style::new()),
        Kind::Final => ("✓ ", theme::GOOD_BOLD, Style::new()),
        Kind::Error => ("✗ ", theme::BAD_BOLD, theme::BAD),
        Kind::Gate => ("⊘ ", theme::WARN, theme::WARN),
        Kind::Notice => ("· ", dim, dim),
        Kind::Declined => ("⊘ ", theme::DECLINED, theme::MUTED),
        Kind::Approved => ("✓ ", theme::GOOD, theme::MUTED),
        Kind::Discarded => ("  ", dim, theme::DISCARDED),
        Kind::Receipt | Kind::ReceiptBad => {
            return crate::tui::panes::receipt::rows(&line.text, line.kind, line.first, width);
        }
        Kind::Code => {
            let gutter = [Span::styled("  │ ", dim)];
            return wrap(
                &[Span::styled(line.text.clone(), CODE)],
                width,
                &gutter,
                &gutter,
            );
        }
        Kind::Fence => {
            let pad = [Span::raw("  ")];
            return wrap(&[Span::styled(line.text.clone(), dim)], width, &pad, &pad);
        }
        Kind::Blank => return vec![Line::default()],
    };
    let first = [Span::styled(
        if line.first { marker } else { "  " },
        marker_style,
    )];
    let cont = [Span::raw("  ")];
    let spans = if matches!(line.kind, Kind::Assistant | Kind::Final) {
        inline_markdown(&line.text, text_style)
    } else {
        vec![Span::styled(line.text.clone(), text_style)]
    };
    wrap(&spans, width, &first, &cont)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row, wrapped directly (what the lazy cache must agree with).
    fn text(c: &mut Conversation, width: usize) -> Vec<String> {
        c.lines
            .iter()
            .flat_map(|l| wrap_logical(l, width))
            .map(|l| l.to_string())
            .collect()
    }

    #[test]
    fn streamed_lines_commit_and_partial_line_shows() {
        let mut c = Conversation::new();
        c.push_entry(Kind::User, "do it");
        c.delta("Hel");
        assert_eq!(text(&mut c, 40), ["❯ do it", "", "• Hel"]);
        c.delta("lo\nsecond `x` li");
        assert_eq!(
            text(&mut c, 40),
            ["❯ do it", "", "• Hello", "  second x li"]
        );
        c.delta("ne\n");
        c.close_reply();
        assert_eq!(
            text(&mut c, 40),
            ["❯ do it", "", "• Hello", "  second x line"]
        );
    }

    #[test]
    fn code_blocks_are_set_apart_and_final_answer_is_not_repeated() {
        let mut c = Conversation::new();
        c.delta("Done:\n```py\nx\t= 1\n```\n");
        c.final_answer("Done:\n```py\nx\t= 1\n```");
        assert_eq!(
            text(&mut c, 40),
            ["✓ Done:", "  ```py", "  │ x   = 1", "  ```"]
        );
        c.new_turn();
        c.final_answer("Other");
        assert_eq!(text(&mut c, 40).last().map(String::as_str), Some("✓ Other"));
    }

    #[test]
    fn a_retried_reply_stays_marked_as_discarded() {
        let mut c = Conversation::new();
        c.push_entry(Kind::User, "task");
        c.delta("partial answ");
        assert!(c.discard_reply());
        assert_eq!(text(&mut c, 40), ["❯ task", "", "  partial answ"]);
        assert_eq!(c.lines.last().map(|l| l.kind), Some(Kind::Discarded));
        c.final_answer("Other");
        assert_eq!(
            text(&mut c, 40).last().map(String::as_str),
            Some("✓ Other"),
            "a discarded reply is never the final answer"
        );
    }

    #[test]
    fn appending_does_not_rewrap_earlier_lines() {
        let mut c = Conversation::new();
        for i in 0..100 {
            c.push_entry(Kind::Notice, &format!("notice {i}"));
        }
        c.ensure_wrapped(30, 500);
        let before = c.cache.known();
        c.push_entry(Kind::Error, "boom");
        assert_eq!(c.cache.known(), before, "cache kept");
        c.ensure_wrapped(30, 500);
        assert_eq!(c.cache.known(), before + 2, "only the new lines wrapped");
        assert_eq!(text(&mut c, 30).last().map(String::as_str), Some("✗ boom"));
    }
}
