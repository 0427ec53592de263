//! The conversation pane: the transcript (tasks, streamed assistant text as
//! markdown, final answers, errors, failed calls with the end of their
//! output in the program's colours, gate refusals, notices) as logical
//! lines. Wrapping and scrolling are `wrap_cache`'s: only the lines around
//! the view are ever wrapped, so appending, a width change and drawing cost
//! what is visible, not the length of the session. The reply still
//! streaming is one entry: rendered again when a line of it completes or a
//! frame is drawn (never per token), and then only from its last cut
//! (`markdown::last_cut`), so the cost stays that of its last blocks; it is
//! rendered whole once, when complete.
//!
//! Syntax colours never cost an entry's push: its code shows plain and its
//! blocks queue in `markdown::pending`, which has those in view coloured
//! (on the UI's worker in the app, else a slice per frame) and hands their
//! colours over at a frame (`ensure_wrapped`); `colouring_due` asks for the
//! next frame.

use crate::tui::panes::line_kind::Kind;
use crate::tui::panes::markdown::pending::Pending;
use crate::tui::panes::markdown::{self, CODE, CodeBlock, MdLine};
use crate::tui::panes::scroll::ScrollMove;
use crate::tui::panes::wrap_cache::{Anchor, WrapCache};
use crate::tui::render::highlight_warm::Grammars;
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

/// The lines of markdown `text`; its text lines get `kind`. `after`: the
/// text continues lines already shown (no entry marker, a blank line first).
fn markdown_part(kind: Kind, text: &str, after: bool) -> (Vec<Logical>, Vec<CodeBlock>) {
    let (rendered, mut blocks) = markdown::render_deferred(text);
    let mut lines = Vec::with_capacity(rendered.len() + 1);
    if after && !rendered.is_empty() {
        let blank = MdLine {
            kind: Kind::Blank,
            prefix: Vec::new(),
            cont: Vec::new(),
            spans: Vec::new(),
            table: None,
        };
        lines.push(Logical {
            text: String::new(),
            kind: Kind::Blank,
            first: false,
            styled: Some(Box::new(blank)),
        });
        blocks.iter_mut().for_each(|b| b.at += 1);
    }
    lines.extend(rendered.into_iter().enumerate().map(|(i, md)| Logical {
        text: md.text(),
        kind: if md.kind == Kind::Assistant {
            kind
        } else {
            md.kind
        },
        first: i == 0 && !after,
        styled: Some(Box::new(md)),
    }));
    (lines, blocks)
}

/// The lines of a whole markdown entry (at least one) and its code blocks.
fn markdown_lines(kind: Kind, text: &str) -> (Vec<Logical>, Vec<CodeBlock>) {
    let (mut lines, blocks) = markdown_part(kind, text, false);
    if lines.is_empty() {
        lines.push(Logical::plain("", kind, true));
    }
    (lines, blocks)
}

/// An assistant reply still streaming in.
#[derive(Debug, Default)]
struct OpenReply {
    /// Index of its first logical line, once it has one.
    start: Option<usize>,
    /// Text arrived since the reply's lines were last rendered.
    dirty: bool,
    text: String,
    /// `text[..kept]` ends at a cut and its lines are kept as rendered.
    kept: usize,
    /// How many lines `text[..kept]` rendered to.
    kept_lines: usize,
}

#[derive(Debug, Default)]
pub struct Conversation {
    lines: Vec<Logical>,
    open: Option<OpenReply>,
    /// The reply closed last in this turn: its first line and full text.
    last_reply: Option<(usize, String)>,
    cache: WrapCache,
    /// Code blocks waiting for their colours.
    colours: Pending,
}

impl Conversation {
    pub fn new() -> Self {
        Conversation::default()
    }

    pub fn clear(&mut self) {
        let grammars = std::mem::take(&mut self.colours.grammars);
        *self = Conversation::new();
        self.colours.grammars = grammars;
    }

    /// The grammars its code blocks may use (see `highlight_warm`).
    pub fn grammars(&mut self) -> &mut Grammars {
        &mut self.colours.grammars
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
            let (lines, blocks) = markdown_lines(kind, text);
            self.colours.add(self.lines.len(), blocks);
            self.lines.extend(lines);
            return;
        }
        for (i, line) in text.trim_end_matches('\n').split('\n').enumerate() {
            self.lines.push(Logical::plain(line, kind, i == 0));
        }
    }

    /// The text of the last line when it is a one-line entry of `kind`
    /// (nothing else came after it, no reply is streaming).
    pub fn last_entry(&self, kind: Kind) -> Option<&str> {
        let last = self.lines.last()?;
        let alone = self.lines.len() < 2 || self.lines[self.lines.len() - 2].kind == Kind::Blank;
        (!self.is_streaming() && last.kind == kind && last.first && alone).then_some(&last.text)
    }

    /// Replace the last entry (a one-line entry, see `last_entry`) by `text`.
    pub fn replace_last_entry(&mut self, kind: Kind, text: &str) {
        let start = self.lines.len().saturating_sub(1);
        self.replace_from(start, vec![Logical::plain(text, kind, true)]);
    }

    /// A new task starts: a rule sets it off from the one before, if any.
    pub fn separate_task(&mut self) {
        if self.lines.iter().any(|l| l.kind == Kind::User) {
            self.close_reply();
            self.separate();
            self.lines.push(Logical::plain("", Kind::Separator, true));
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

    /// Add a failed call: its line (`Kind::Error`) and, under it, the end
    /// of its output, each line already split into styled spans (see
    /// `render::ansi`; their text is sanitized there).
    pub fn push_failure(&mut self, line: &str, output: Vec<Vec<Span<'static>>>) {
        self.push_entry(Kind::Error, line);
        let gutter = vec![Span::styled("│ ", theme::DIM)];
        for spans in output {
            let md = MdLine {
                kind: Kind::Output,
                prefix: gutter.clone(),
                cont: gutter.clone(),
                spans,
                table: None,
            };
            self.lines.push(Logical {
                text: md.text(),
                kind: Kind::Output,
                first: false,
                styled: Some(Box::new(md)),
            });
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
        let kind = Kind::Assistant;
        let cut = markdown::last_cut(&open.text, open.kept);
        let (mut lines, blocks) = match cut > open.kept {
            true => markdown_part(kind, &open.text[open.kept..cut], open.kept_lines > 0),
            false => (Vec::new(), Vec::new()),
        };
        // A block's grammar gets ready while the rest of the reply streams.
        self.colours.want(&blocks);
        let from = start + open.kept_lines;
        open.kept = cut;
        open.kept_lines += lines.len();
        let tail = open.text.get(cut..).unwrap_or_default();
        lines.extend(markdown_part(kind, tail, open.kept_lines > 0).0);
        if open.kept_lines == 0 && lines.is_empty() {
            lines.push(Logical::plain("", kind, true));
        }
        self.replace_from(from, lines);
    }

    fn replace_from(&mut self, start: usize, lines: Vec<Logical>) {
        self.colours.drop_from(start);
        self.invalidate_from(start);
        self.lines.truncate(start);
        self.lines.extend(lines);
    }

    /// The streamed reply is complete: its final rendering, with syntax
    /// colours; a leading `<think>` block is shown dimmed above the reply,
    /// which then starts after it (the final answer never includes it).
    pub fn close_reply(&mut self) {
        let Some(open) = self.open.take() else { return };
        let Some(start) = open.start else { return };
        let (thinking, reply) = split_thinking(&open.text);
        let mut lines: Vec<Logical> = (thinking.lines().enumerate())
            .map(|(i, line)| Logical::plain(line, Kind::Thinking, i == 0))
            .collect();
        let reply_start = start + lines.len();
        let (reply_lines, blocks) = markdown_lines(Kind::Assistant, &reply);
        lines.extend(reply_lines);
        self.replace_from(start, lines);
        self.colours.add(reply_start, blocks);
        self.last_reply = Some((reply_start, reply));
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
        let (mut lines, _) = markdown_lines(Kind::Assistant, &text);
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
    /// Blocks in view get their colours (see `colouring_due`).
    pub fn ensure_wrapped(&mut self, width: usize, height: usize) {
        self.refresh_open();
        let visible = self.cache.layout(&self.lines, &wrap_logical, width, height);
        let done = self.colours.step(visible);
        if done.is_empty() {
            return;
        }
        for (line, rows) in done {
            let n = rows.len();
            for (l, spans) in self.lines.iter_mut().skip(line).zip(rows) {
                if let Some(md) = l.styled.as_mut() {
                    md.spans = spans;
                }
            }
            self.cache.restyled(line..line + n);
        }
        self.cache.layout(&self.lines, &wrap_logical, width, height);
    }

    /// Whether code in view still waits for colours (draw another frame).
    pub fn colouring_due(&self) -> bool {
        self.colours.is_due()
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

/// A reply's leading thinking (`<think>…</think>`, or text up to a
/// `</think>` whose opening tag was in the prompt) and the rest; no
/// thinking: an empty first part and the whole text.
fn split_thinking(text: &str) -> (String, String) {
    const OPEN: &str = "<think>";
    const CLOSE: &str = "</think>";
    let trimmed = text.trim_start();
    let body = trimmed.strip_prefix(OPEN);
    let Some(close) = body.unwrap_or(trimmed).find(CLOSE) else {
        return match body {
            // Still thinking (or never closed): all of it is thinking.
            Some(body) => (body.trim().to_string(), String::new()),
            None => (String::new(), text.to_string()),
        };
    };
    let inner = body.unwrap_or(trimmed);
    if body.is_none() && inner.get(..close).is_some_and(|t| t.contains(OPEN)) {
        return (String::new(), text.to_string());
    }
    let thinking = inner.get(..close).unwrap_or_default().trim().to_string();
    let rest = inner.get(close + CLOSE.len()..).unwrap_or_default();
    (thinking, rest.trim_start().to_string())
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
        Kind::Thinking => ("  ", dim, dim.add_modifier(Modifier::ITALIC)),
        Kind::Receipt | Kind::ReceiptBad => {
            return crate::tui::panes::receipt::rows(&line.text, line.kind, line.first, width);
        }
        Kind::Code | Kind::Output => {
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
        Kind::Separator => return vec![Line::styled("─".repeat(width), dim)],
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
#[path = "conversation_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "conversation_colour_tests.rs"]
mod colour_tests;
