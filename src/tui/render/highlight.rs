//! Syntax colours for code blocks and diffs, with `syntect`'s grammars and
//! its pure-Rust regex engine. Scopes map to a handful of theme slots
//! (keyword, string, comment, number, type, function), so both palettes and
//! `NO_COLOR` apply to code like to everything else.
//!
//! What must stay true: the grammars load on first use, never at start-up
//! (the first frame stays fast), and in the real app on a worker, never on
//! the UI thread, for code blocks (`highlight_warm`); a caller highlights a block once and keeps
//! the result with its lines, never per frame (a [`Highlighter`] lets it
//! spread one block over several frames); blocks over [`MAX_LINES`] or
//! [`MAX_BYTES`], unknown languages and any grammar error give `None` (the
//! caller shows the code plain).

use crate::tui::render::theme;
use ratatui::style::Style;
use ratatui::text::Span;
use std::sync::OnceLock;
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};

/// Larger blocks are shown without colours (a frame stays cheap).
pub const MAX_LINES: usize = 2_000;
pub const MAX_BYTES: usize = 256 * 1024;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// Scope prefixes and the style each gets; the first match from the
/// innermost scope outwards wins.
fn rules() -> &'static [(Scope, Style)] {
    static RULES: OnceLock<Vec<(Scope, Style)>> = OnceLock::new();
    RULES.get_or_init(|| {
        [
            ("comment", theme::SYN_COMMENT),
            ("string", theme::SYN_STRING),
            ("constant.numeric", theme::SYN_NUMBER),
            ("constant.language", theme::SYN_NUMBER),
            ("constant.character", theme::SYN_STRING),
            ("entity.name.function", theme::SYN_FUNCTION),
            ("support.function", theme::SYN_FUNCTION),
            ("variable.function", theme::SYN_FUNCTION),
            ("entity.name.type", theme::SYN_TYPE),
            ("entity.name.class", theme::SYN_TYPE),
            ("entity.name.struct", theme::SYN_TYPE),
            ("entity.name.enum", theme::SYN_TYPE),
            ("support.type", theme::SYN_TYPE),
            ("support.class", theme::SYN_TYPE),
            ("storage.type", theme::SYN_KEYWORD),
            ("storage.modifier", theme::SYN_KEYWORD),
            ("keyword.operator", Style::new()),
            ("keyword", theme::SYN_KEYWORD),
            ("meta.tag.toml", theme::SYN_TYPE),
            ("entity.name.tag", theme::SYN_TYPE),
        ]
        .iter()
        .filter_map(|(name, style)| Scope::new(name).ok().map(|s| (s, *style)))
        .collect()
    })
}

/// The name a language's grammar is known by (a fence's language or a
/// file's extension, any case, aliases folded), without loading anything.
pub fn key(lang: &str) -> String {
    let lang = lang.trim().to_ascii_lowercase();
    let folded = match lang.as_str() {
        // No TypeScript grammar ships with syntect; JavaScript's is close.
        "ts" | "tsx" | "typescript" | "mts" | "cts" | "jsx" => "js",
        "shell" | "console" | "zsh" => "sh",
        "golang" => "go",
        "python3" | "py3" => "py",
        _ => return lang,
    };
    folded.to_string()
}

/// The grammar for a fence's language name or a file's extension.
fn syntax_for(lang: &str) -> Option<&'static SyntaxReference> {
    let token = key(lang);
    if token.is_empty() {
        return None;
    }
    syntaxes().find_syntax_by_token(&token)
}

/// The language a file's path calls for (its extension), for diffs.
pub fn lang_of_path(path: &str) -> &str {
    path.rsplit_once('.').map_or("", |(_, ext)| ext)
}

/// Which side of a diff a hunk's line is on (for its syntax colours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A context line: on both.
    Both,
    /// An added line.
    New,
    /// A removed line.
    Old,
}

/// Syntax colours for a hunk's lines in a file at `path`: each side is read
/// in order (the new one: context and added lines; the old one: context and
/// removed lines) so that multi-line strings and comments carry over; `None`
/// for all when the file's language is unknown. `texts` are sanitized,
/// `sides[i]` says where line `i` is.
pub fn hunk(path: &str, texts: &[String], sides: &[Side]) -> Vec<Option<Vec<Span<'static>>>> {
    let lang = lang_of_path(path);
    let side = |keep: Side| -> Vec<Option<Vec<Span<'static>>>> {
        let picked: Vec<String> = texts
            .iter()
            .zip(sides)
            .filter(|(_, s)| **s == Side::Both || **s == keep)
            .map(|(t, _)| t.clone())
            .collect();
        let mut coloured = lines(lang, &picked).unwrap_or_default().into_iter();
        sides
            .iter()
            .map(|s| match *s == Side::Both || *s == keep {
                true => coloured.next(),
                false => None,
            })
            .collect()
    };
    let new = side(Side::New);
    // The old side only when there is a removed line to colour.
    if !sides.contains(&Side::Old) {
        return new;
    }
    let old = side(Side::Old);
    new.into_iter()
        .zip(old)
        .zip(sides)
        .map(|((n, o), s)| match s {
            Side::Old => o,
            _ => n,
        })
        .collect()
}

/// Whether a block of `lines` is small enough to colour at all.
pub fn fits(lines: &[String]) -> bool {
    lines.len() <= MAX_LINES && lines.iter().map(|l| l.len() + 1).sum::<usize>() <= MAX_BYTES
}

/// Whether `lang` has colours (loads the grammars on first use).
pub fn known(lang: &str) -> bool {
    lang.eq_ignore_ascii_case("toml") || syntax_for(lang).is_some()
}

/// Colour `lines` (one logical line each, sanitized) as `lang`.
pub fn lines(lang: &str, lines: &[String]) -> Option<Vec<Vec<Span<'static>>>> {
    if !fits(lines) {
        return None;
    }
    let mut h = Highlighter::new(lang)?;
    lines.iter().map(|l| h.line(l)).collect()
}

/// A block coloured one line at a time, so the work can be spread over
/// frames: the parser's state carries from each line to the next.
pub struct Highlighter {
    state: Option<(ParseState, ScopeStack)>,
}

impl std::fmt::Debug for Highlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Highlighter").finish_non_exhaustive()
    }
}

impl Highlighter {
    /// `None` for a language without colours.
    pub fn new(lang: &str) -> Option<Self> {
        if lang.eq_ignore_ascii_case("toml") {
            return Some(Highlighter { state: None });
        }
        let syntax = syntax_for(lang)?;
        Some(Highlighter {
            state: Some((ParseState::new(syntax), ScopeStack::new())),
        })
    }

    /// The next line's spans; `None` on a grammar error (show the block plain).
    pub fn line(&mut self, line: &str) -> Option<Vec<Span<'static>>> {
        #[cfg(test)]
        COLOURED.with(|c| c.set(c.get() + 1));
        let Some((state, stack)) = &mut self.state else {
            return Some(toml_line(line));
        };
        let with_nl = format!("{line}\n");
        let ops = state.parse_line(&with_nl, syntaxes()).ok()?;
        let mut spans: Vec<Span<'static>> = Vec::new();
        let mut at = 0;
        for (pos, op) in ops {
            let pos = pos.min(line.len());
            if pos > at {
                push(&mut spans, &line[at..pos], style_of(stack));
                at = pos;
            }
            stack.apply(&op).ok()?;
        }
        if at < line.len() {
            push(&mut spans, &line[at..], style_of(stack));
        }
        Some(spans)
    }
}

#[cfg(test)]
thread_local! {
    /// Lines coloured on this thread (tests count work, not time).
    static COLOURED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Lines coloured so far on this thread.
#[cfg(test)]
pub fn coloured_lines() -> usize {
    COLOURED.with(|c| c.get())
}

fn style_of(stack: &ScopeStack) -> Style {
    for scope in stack.as_slice().iter().rev() {
        if let Some((_, style)) = rules().iter().find(|(p, _)| p.is_prefix_of(*scope)) {
            return *style;
        }
    }
    Style::new()
}

fn push(spans: &mut Vec<Span<'static>>, text: &str, style: Style) {
    match spans.last_mut() {
        Some(last) if last.style == style => last.content.to_mut().push_str(text),
        _ => spans.push(Span::styled(text.to_string(), style)),
    }
}

/// TOML has no grammar in syntect's set: tables, keys, strings, numbers,
/// booleans and comments, one line at a time.
fn toml_line(line: &str) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let trimmed = line.trim_start();
    if trimmed.starts_with('#') {
        push(&mut spans, line, theme::SYN_COMMENT);
        return spans;
    }
    if trimmed.starts_with('[') {
        push(&mut spans, line, theme::SYN_TYPE);
        return spans;
    }
    let Some((key, value)) = line.split_once('=') else {
        push(&mut spans, line, Style::new());
        return spans;
    };
    push(&mut spans, key, theme::SYN_FUNCTION);
    push(&mut spans, "=", Style::new());
    let (value, comment) = match value.find(" #") {
        Some(i) if !value[..i].contains('"') || value[..i].matches('"').count() % 2 == 0 => {
            value.split_at(i)
        }
        _ => (value, ""),
    };
    let v = value.trim();
    let style = if v.starts_with(['"', '\'']) {
        theme::SYN_STRING
    } else if v == "true"
        || v == "false"
        || v.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+')
    {
        theme::SYN_NUMBER
    } else {
        Style::new()
    };
    push(&mut spans, value, style);
    if !comment.is_empty() {
        push(&mut spans, comment, theme::SYN_COMMENT);
    }
    spans
}

#[cfg(test)]
#[path = "highlight_tests.rs"]
mod tests;
