//! Markdown from the model, read with `pulldown-cmark` and turned into the
//! conversation's styled logical lines: headings, emphasis, `inline code`,
//! links (text, then the address dimmed), block quotes (a bar), nested
//! ordered and unordered lists (their markers, then a hanging indent),
//! tables (columns aligned by display width, in `table`) and fenced code
//! blocks (no backtick lines: a dim language label, then the code, with
//! syntax colours when asked for).
//!
//! Colouring is separate from rendering: [`render_deferred`] shows code
//! plain and hands back its blocks, which `pending` colours later, when they
//! are drawn; [`render`] colours at once (the same result, for callers that
//! want it now).
//!
//! What must stay true: every piece of text goes through `sanitize` before it
//! is kept (the model's bytes are hostile), and a line's `text` is exactly
//! what its prefix and spans show (colours change spans' styles, never text).

mod boundary;
pub mod pending;
mod renderer;
mod rows;
pub(crate) mod table;
#[cfg(test)]
mod tests;

use crate::tui::render::{highlight, theme};
use pulldown_cmark::{Options, Parser};
use ratatui::style::Style;
use ratatui::text::Span;

pub use boundary::last_cut;
use renderer::Renderer;
pub use rows::{MdLine, rows};

/// The style of code (inline and in blocks without syntax colours).
pub const CODE: Style = theme::ACCENT;

/// A fenced block that could get syntax colours: the index of its first
/// code line in the rendered lines, its language and its (sanitized) lines.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeBlock {
    pub at: usize,
    pub lang: String,
    pub lines: Vec<String>,
}

/// Render markdown `text` as lines; `colour_code` asks for syntax colours
/// now, a reply's blocks sharing a budget of [`highlight::MAX_LINES`] lines.
pub fn render(text: &str, colour_code: bool) -> Vec<MdLine> {
    let (mut lines, blocks) = render_deferred(text);
    if colour_code {
        let mut left = highlight::MAX_LINES;
        for block in blocks {
            if block.lines.len() > left {
                continue;
            }
            if let Some(rows) = highlight::lines(&block.lang, &block.lines) {
                left -= block.lines.len();
                colour(&mut lines, block.at, rows);
            }
        }
    }
    lines
}

/// Render markdown `text` with its code plain, and the blocks that may be
/// coloured later (none of them is parsed for colours here).
pub fn render_deferred(text: &str) -> (Vec<MdLine>, Vec<CodeBlock>) {
    let mut r = Renderer::default();
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(text, options) {
        r.event(event);
    }
    r.flush();
    (r.lines, r.blocks)
}

/// Give the code lines from `at` on the spans of `rows` (same text).
pub fn colour(lines: &mut [MdLine], at: usize, rows: Vec<Vec<Span<'static>>>) {
    for (line, spans) in lines.iter_mut().skip(at).zip(rows) {
        line.spans = spans;
    }
}
