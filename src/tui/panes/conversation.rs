//! The conversation pane: the transcript (tasks, streamed assistant text as
//! markdown, final answers, errors, gate refusals, notices) as logical
//! lines. Wrapping and scrolling are `wrap_cache`'s: only the lines around
//! the view are ever wrapped, so appending, a width change and drawing cost
//! what is visible, not the length of the session. The reply still
//! streaming is one entry: re-rendered as a whole when a line of it
//! completes or a frame is drawn (never per token), and given its syntax
//! colours once, when it is complete.

use crate::tui::panes::line_kind::Kind;
use crate::tui::panes::markdown::{self, CODE, MdLine};
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
    /// Markdown's rendering of the line (replies and answers).
    styled: Option<Box<MdLine>>,
}

impl Logical {
    fn plain(text: &str, kind: Kind, first: bool) -> Self {
        Logical {
            text: sanitize(text),
            kind,
            first,
            styled: None,
        }
    }
}

/// The lines of markdown `text`; its text lines get `kind`.
fn markdown_lines(kind: Kind, text: &str, colour_code: bool) -> Vec<Logical> {
    let lines: Vec<Logical> = markdown::render(text, colour_code)
        .into_iter()
        .enumerate()
        .map(|(i, md)| Logical {
            text: md.text(),
            kind: if md.kind == Kind::Assistant {
                kind
            } else {
                md.kind
            },
            first: i == 0,
            styled: Some(Box::new(md)),
        })
        .collect();
    if lines.is_empty() {
        return vec![Logical::plain("", kind, true)];
    }
    lines
}

/// An assistant reply still streaming in.
#[derive(Debug, Default)]
struct OpenReply {
    /// Index of its first logical line, once it has one.
    start: Option<usize>,
    /// Text arrived since the reply's lines were last rendered.
    dirty: bool,
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
        if matches!(kind, Kind::Assistant | Kind::Final) {
            self.lines.extend(markdown_lines(kind, text, true));
            return;
        }
        for (i, line) in text.trim_end_matches('\n').split('\n').enumerate() {
            self.lines.push(Logical::plain(line, kind, i == 0));
        }
    }

    /// Add an entry whose lines have their own kinds (e.g. a receipt).
    pub fn push_lines(&mut self, lines: &[(Kind, String)]) {
        self.close_reply();
        self.separate();
        for (i, (kind, text)) in lines.iter().enumerate() {
            self.lines.push(Logical::plain(text, *kind, i == 0));
        }
    }

    /// Append streamed assistant text. Its lines are rendered again when a
    /// line completes; a partial line waits for the next frame.
    pub fn delta(&mut self, text: &str) {
        let mut open = self.open.take().unwrap_or_default();
        open.text.push_str(text);
        if open.start.is_none() && !open.text.trim().is_empty() {
            self.separate();
            open.start = Some(self.lines.len());
        }
        open.dirty = open.start.is_some();
        self.open = Some(open);
        if text.contains('\n') {
            self.refresh_open();
        }
    }

    /// Render the streaming reply's lines again if text came since.
    fn refresh_open(&mut self) {
        let Some(open) = self.open.as_mut().filter(|o| o.dirty) else {
            return;
        };
        open.dirty = false;
        let Some(start) = open.start else { return };
        let lines = markdown_lines(Kind::Assistant, &open.text, false);
        self.replace_from(start, lines);
    }

    fn replace_from(&mut self, start: usize, lines: Vec<Logical>) {
        self.invalidate_from(start);
        self.lines.truncate(start);
        self.lines.extend(lines);
    }

    /// The streamed reply is complete: its final rendering, with syntax colours.
    pub fn close_reply(&mut self) {
        let Some(open) = self.open.take() else { return };
        let Some(start) = open.start else { return };
        self.replace_from(start, markdown_lines(Kind::Assistant, &open.text, true));
        self.last_reply = Some((start, open.text));
    }

    /// A reply that is still streaming broke off (its request failed and is
    /// retried): keep its text, marked as discarded, so nothing vanishes; it
    /// can never become the final answer. Whether there was text to keep.
    pub fn discard_reply(&mut self) -> bool {
        let Some(OpenReply {
            start: Some(start),
            text,
            ..
        }) = self.open.take()
        else {
            return false;
        };
        let mut lines = markdown_lines(Kind::Assistant, &text, false);
        for line in &mut lines {
            line.kind = Kind::Discarded;
        }
        self.replace_from(start, lines);
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
                for (i, line) in self.lines[start..].iter_mut().enumerate() {
                    if line.kind == Kind::Assistant || (i == 0 && line.styled.is_some()) {
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
            self.lines.push(Logical::plain("", Kind::Blank, true));
        }
    }

    fn invalidate_from(&mut self, line: usize) {
        self.cache.invalidate_from(line);
    }

    /// Wrap what a viewport of `width` x `height` shows (and only that).
    pub fn ensure_wrapped(&mut self, width: usize, height: usize) {
        self.refresh_open();
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
    if let Some(md) = &line.styled {
        return markdown::rows(md, line.kind, line.first, width);
    }
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
    let spans = vec![Span::styled(line.text.clone(), text_style)];
    wrap(&spans, width, &first, &cont)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row, wrapped directly (what the lazy cache must agree with).
    fn text(c: &mut Conversation, width: usize) -> Vec<String> {
        c.refresh_open();
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
            ["✓ Done:", "", "  py", "  │ x   = 1"],
            "no backtick lines: a label, then the code"
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
