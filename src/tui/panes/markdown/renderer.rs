//! The markdown renderer's state machine: `pulldown-cmark` events in,
//! styled logical lines and the code blocks that may be coloured out.
//!
//! What must stay true: every piece of text goes through `sanitize` before
//! it is kept, and a line's `text` is exactly what its prefix and spans show.

use super::{CODE, CodeBlock, MdLine, table};
use crate::tui::panes::line_kind::Kind;
use crate::tui::render::text::sanitize;
use crate::tui::render::{highlight, theme};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

/// A block that puts something before each of its lines.
#[derive(Debug)]
enum Container {
    Quote,
    List {
        next: Option<u64>,
        depth: usize,
    },
    /// A list item: its marker, and whether its first line is out yet.
    Item {
        marker: String,
        started: bool,
    },
}

#[derive(Default)]
pub(super) struct Renderer {
    /// Blocks that may get colours, in order.
    pub(super) blocks: Vec<CodeBlock>,
    pub(super) lines: Vec<MdLine>,
    cur: Vec<Span<'static>>,
    /// Inline styles, innermost last.
    styles: Vec<Style>,
    containers: Vec<Container>,
    /// Link targets, innermost last.
    links: Vec<String>,
    /// A finished block wants a blank line before the next one.
    gap: bool,
    /// The fenced code block being read: its language and text.
    code: Option<(String, String)>,
    table: Option<table::Table>,
    /// The table row the next line is (it lays itself out at a width).
    table_row: Option<Box<table::TableRow>>,
}

impl Renderer {
    fn style(&self) -> Style {
        self.styles
            .iter()
            .fold(Style::new(), |acc, s| acc.patch(*s))
    }

    fn push_text(&mut self, text: &str, style: Style) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        let clean = sanitize(text);
        if !clean.is_empty() {
            self.cur.push(Span::styled(clean, style));
        }
    }

    pub(super) fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.push_text(&t, self.style()),
            Event::Code(t) => self.push_text(&t, self.style().patch(CODE)),
            Event::Html(t) | Event::InlineHtml(t) => {
                for (i, line) in t.trim_end_matches('\n').split('\n').enumerate() {
                    if i > 0 {
                        self.flush();
                    }
                    self.push_text(line, self.style());
                }
            }
            Event::SoftBreak | Event::HardBreak => self.flush(),
            Event::Rule => {
                self.block_start();
                self.cur.push(Span::styled("─".repeat(24), theme::DIM));
                self.flush();
                self.gap = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.push_text(mark, theme::DIM);
            }
            Event::FootnoteReference(name) => self.push_text(&format!("[^{name}]"), theme::DIM),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.push_text(&t, self.style()),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock => self.block_start(),
            Tag::Heading { level, .. } => {
                self.block_start();
                let style = match level {
                    HeadingLevel::H1 | HeadingLevel::H2 => theme::ACCENT_BOLD,
                    _ => Style::new().add_modifier(Modifier::BOLD),
                };
                self.styles.push(style);
            }
            Tag::BlockQuote(_) => {
                self.block_start();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.block_start();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split([' ', ',', '{']).next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(first) => {
                let depth = self.list_depth();
                if depth == 0 {
                    self.block_start();
                } else {
                    self.flush();
                }
                self.containers.push(Container::List { next: first, depth });
            }
            Tag::Item => {
                self.flush();
                let marker = self.next_marker();
                self.containers.push(Container::Item {
                    marker,
                    started: false,
                });
            }
            Tag::Table(align) => {
                self.block_start();
                self.table = Some(table::Table::new(align));
            }
            Tag::TableHead | Tag::TableRow => {}
            Tag::TableCell => self.cur.clear(),
            Tag::Emphasis => self
                .styles
                .push(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self
                .styles
                .push(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.links.push(dest_url.to_string());
                self.styles
                    .push(Style::new().add_modifier(Modifier::UNDERLINED));
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => self.block_end(),
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.block_end();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.gap = true;
            }
            TagEnd::CodeBlock => self.code_block(),
            TagEnd::List(_) => {
                self.flush();
                self.containers.pop();
                self.gap = self.list_depth() == 0;
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    for (spans, row) in t.lines() {
                        self.cur = spans;
                        self.table_row = Some(Box::new(row));
                        self.flush();
                    }
                }
                self.gap = true;
            }
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.end_row(true);
                }
            }
            TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    t.end_row(false);
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.cur);
                if let Some(t) = &mut self.table {
                    t.push_cell(cell);
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                if let Some(url) = self.links.pop() {
                    let shown: String = self.cur.iter().map(|s| s.content.as_ref()).collect();
                    if !url.is_empty() && !shown.ends_with(url.as_str()) {
                        self.push_text(&format!(" ({url})"), theme::DIM);
                    }
                }
            }
            _ => {}
        }
    }

    fn list_depth(&self) -> usize {
        self.containers
            .iter()
            .filter(|c| matches!(c, Container::List { .. }))
            .count()
    }

    fn next_marker(&mut self) -> String {
        let Some(Container::List { next, depth }) = self
            .containers
            .iter_mut()
            .rev()
            .find(|c| matches!(c, Container::List { .. }))
        else {
            return "• ".to_string();
        };
        match next {
            Some(n) => {
                let marker = format!("{n}. ");
                *n += 1;
                marker
            }
            None => ["• ", "◦ ", "▪ "][*depth % 3].to_string(),
        }
    }

    /// A block starts: a blank line first if a block came before it.
    fn block_start(&mut self) {
        self.flush();
        if std::mem::take(&mut self.gap) && !self.lines.is_empty() {
            self.emit(Kind::Blank, Vec::new(), true);
        }
    }

    fn block_end(&mut self) {
        self.flush();
        self.gap = true;
    }

    /// End the current line (if it has anything).
    pub(super) fn flush(&mut self) {
        if self.cur.is_empty() || self.table.is_some() {
            return;
        }
        let spans = std::mem::take(&mut self.cur);
        self.emit(Kind::Assistant, spans, false);
    }

    /// Add a line with the containers' prefixes; a blank line gets only the quote bars.
    fn emit(&mut self, kind: Kind, spans: Vec<Span<'static>>, blank: bool) {
        let mut prefix = Vec::new();
        let mut cont = Vec::new();
        for c in &mut self.containers {
            match c {
                Container::Quote => {
                    prefix.push(Span::styled("│ ", theme::DIM));
                    cont.push(Span::styled("│ ", theme::DIM));
                }
                Container::List { .. } => {}
                Container::Item { marker, started } => {
                    let pad = " ".repeat(crate::tui::render::text::width(marker));
                    if blank || *started {
                        prefix.push(Span::raw(pad.clone()));
                    } else {
                        prefix.push(Span::styled(marker.clone(), theme::DIM));
                        *started = true;
                    }
                    cont.push(Span::raw(pad));
                }
            }
        }
        if blank {
            while prefix.last().is_some_and(|s| s.content.trim().is_empty()) {
                prefix.pop();
            }
        }
        self.lines.push(MdLine {
            kind,
            prefix,
            cont,
            spans,
            table: self.table_row.take(),
        });
    }

    /// A fenced block is complete: a label, then its lines (coloured if asked).
    fn code_block(&mut self) {
        let Some((lang, code)) = self.code.take() else {
            return;
        };
        if !lang.is_empty() {
            self.emit(
                Kind::Fence,
                vec![Span::styled(sanitize(&lang), theme::DIM)],
                false,
            );
        }
        let code = code.strip_suffix('\n').unwrap_or(&code);
        let lines: Vec<String> = code.split('\n').map(sanitize).collect();
        if !lang.is_empty() && highlight::fits(&lines) {
            self.blocks.push(CodeBlock {
                at: self.lines.len(),
                lang,
                lines: lines.clone(),
            });
        }
        let gutter = Span::styled("│ ", theme::DIM);
        for line in lines {
            self.code_line(gutter.clone(), vec![Span::styled(line, CODE)]);
        }
        self.gap = true;
    }

    fn code_line(&mut self, gutter: Span<'static>, spans: Vec<Span<'static>>) {
        self.emit(Kind::Code, spans, false);
        if let Some(line) = self.lines.last_mut() {
            line.prefix.push(gutter.clone());
            line.cont.push(gutter);
        }
    }
}
