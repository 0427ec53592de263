//! Diff rows: one or more `FileDiff`s as colored lines (a margin column for
//! the hunk cursor, old/new line-number gutters, +/- signs, hunk separators,
//! additions green, removals red, context dim, syntax colours on all three
//! within the budget, changed words highlighted via `inline`), long lines wrapped with an empty gutter on continuation rows.
//! A hunk's spans (`HunkStyle`) do not depend on the width, so `source`
//! styles each line once and wraps it per width.

use crate::diff::{FileDiff, Hunk, LineKind};
use crate::tui::panes::diff::inline::{changed_ranges, segments};
use crate::tui::render::highlight::Side;
use crate::tui::render::text::{sanitize, width as text_width, wrap};
use crate::tui::render::theme;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

pub const ADDED: Style = theme::GOOD;
pub const REMOVED: Style = theme::BAD;
pub const CONTEXT: Style = Style::new().add_modifier(Modifier::DIM);
pub const GUTTER: Style = theme::DIM;
pub const HUNK: Style = theme::ACCENT;
/// Changed words inside an added or removed line.
pub const ADDED_WORD: Style = theme::ADDED_WORD;
pub const REMOVED_WORD: Style = theme::REMOVED_WORD;
pub const FILE: Style = theme::WARN_BOLD;
/// Diffs with more changed line pairs than this get no word-level highlight.
pub const MAX_WORD_PAIRS: usize = 5_000;
/// Lines of a diff given syntax colours (whole hunks, first come); the rest
/// stay plain, so a big diff or a live preview rebuilt as it streams stays cheap.
pub const MAX_SYNTAX_LINES: usize = 300;

/// One diff line's spans, whatever the width: the prefix of its first row
/// (gutter and sign), of its continuation rows, and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Styled {
    pub first: [Span<'static>; 2],
    pub cont: [Span<'static>; 2],
    pub text: Vec<Span<'static>>,
}

impl Styled {
    pub fn rows(&self, width: usize) -> Vec<Line<'static>> {
        wrap(&self.text, width, &self.first, &self.cont)
    }
}

/// `━ calculator.py  +7 −0 (new file) ` (filled with `━` to the width).
pub fn file_label(diff: &FileDiff) -> String {
    let new = if diff.new_file { " (new file)" } else { "" };
    format!(" ━ {}  {}{new} ", sanitize(&diff.path), diff.stat())
}

/// A hunk's separator label (filled with `─` to the width); `w` is the width
/// of each line-number column.
pub fn hunk_label(hunk: &Hunk, w: usize) -> String {
    format!(" {:w$} {:w$} ├─ {} ", "", "", hunk.header())
}

/// `label` then `fill` up to `width` columns, as one row.
pub fn rule(label: &str, fill: &str, style: Style, width: usize) -> Line<'static> {
    let n = width.saturating_sub(text_width(label));
    Line::styled(format!("{label}{}", fill.repeat(n)), style)
}

/// What styling a hunk's lines one at a time needs, in any order: each
/// changed line's word-highlight partner (within the hunk's budget) and, for
/// a hunk given syntax colours, those colours (a grammar reads the hunk in
/// order, so they are computed for all its lines at once; the syntax budget
/// keeps such hunks small). A line styled alone is the same whatever was
/// styled before it (`style_tests`).
#[derive(Debug)]
pub struct HunkStyle {
    partners: Vec<Option<usize>>,
    /// Empty: no syntax colours.
    syntax: Vec<Option<Vec<Span<'static>>>>,
    w: usize,
    blank_gutter: String,
}

impl HunkStyle {
    pub fn new(path: &str, hunk: &Hunk, texts: &[String], w: usize, word_pairs: usize) -> Self {
        let kinds: Vec<LineKind> = hunk.lines.iter().map(|l| l.kind).collect();
        let syntax = match path.is_empty() {
            true => Vec::new(),
            false => crate::tui::render::highlight::hunk(path, texts, &Self::sides(hunk)),
        };
        HunkStyle {
            partners: partners(&kinds, word_pairs),
            syntax,
            w,
            blank_gutter: format!(" {:w$} {:w$} │", "", ""),
        }
    }

    /// Which side each line is read on for its syntax colours.
    pub fn sides(hunk: &Hunk) -> Vec<Side> {
        hunk.lines
            .iter()
            .map(|l| match l.kind {
                LineKind::Context => Side::Both,
                LineKind::Added => Side::New,
                LineKind::Removed => Side::Old,
            })
            .collect()
    }

    /// Its syntax colours, a line each (empty: none).
    pub fn syntax(&self) -> &[Option<Vec<Span<'static>>>] {
        &self.syntax
    }

    /// Give the hunk its syntax colours (computed elsewhere, as `new` does).
    pub fn set_syntax(&mut self, syntax: Vec<Option<Vec<Span<'static>>>>) {
        self.syntax = syntax;
    }

    /// The spans of line `i` of `hunk` (`texts` sanitized, as given to `new`).
    pub fn line(&self, hunk: &Hunk, texts: &[String], i: usize) -> Option<Styled> {
        let line = hunk.lines.get(i)?;
        let text = texts.get(i)?;
        let w = self.w;
        let (sign, style, word) = match line.kind {
            LineKind::Added => ("+", ADDED, ADDED_WORD),
            LineKind::Removed => ("-", REMOVED, REMOVED_WORD),
            LineKind::Context => (" ", CONTEXT, CONTEXT),
        };
        let no = |n: Option<usize>| n.map_or(String::new(), |n| n.to_string());
        let gutter = format!(" {:>w$} {:>w$} │", no(line.old_no), no(line.new_no));
        let ranges = self.partners.get(i).copied().flatten().and_then(|p| {
            let other = texts.get(p)?;
            match line.kind {
                LineKind::Removed => changed_ranges(text, other).map(|(old, _)| old),
                _ => changed_ranges(other, text).map(|(_, new)| new),
            }
        });
        // Syntax colours on every line: context stays dim, and text that
        // no scope colours keeps the line's green or red; changed words
        // keep their highlight over them.
        let text: Vec<Span<'static>> = match (self.syntax.get(i), ranges) {
            (Some(Some(spans)), ranges) => overlay(spans, ranges.as_deref(), style, word),
            (_, Some(ranges)) => segments(text, &ranges)
                .into_iter()
                .map(|(s, changed)| Span::styled(s.to_string(), if changed { word } else { style }))
                .collect(),
            (_, None) => vec![Span::styled(text.clone(), style)],
        };
        Some(Styled {
            first: [
                Span::styled(gutter, GUTTER),
                Span::styled(sign, style.add_modifier(Modifier::BOLD)),
            ],
            cont: [
                Span::styled(self.blank_gutter.clone(), GUTTER),
                Span::raw(" "),
            ],
            text,
        })
    }
}

/// A line's syntax spans over `base` (a span's own colour wins, `base`
/// gives the rest), with the characters in `ranges` (char indexes of the
/// whole line) in `word` instead.
fn overlay(
    spans: &[Span<'static>],
    ranges: Option<&[std::ops::Range<usize>]>,
    base: Style,
    word: Style,
) -> Vec<Span<'static>> {
    let mut out = Vec::with_capacity(spans.len());
    let mut at = 0;
    for span in spans {
        let text = span.content.as_ref();
        let len = text.chars().count();
        let style = base.patch(span.style);
        match ranges {
            None => out.push(Span::styled(text.to_string(), style)),
            Some(ranges) => {
                let local: Vec<std::ops::Range<usize>> = ranges
                    .iter()
                    .filter_map(|r| {
                        let (start, end) = (r.start.max(at), r.end.min(at + len));
                        (start < end).then(|| start - at..end - at)
                    })
                    .collect();
                for (piece, changed) in segments(text, &local) {
                    let style = if changed { word } else { style };
                    out.push(Span::styled(piece.to_string(), style));
                }
            }
        }
        at += len;
    }
    out
}

/// Removed/added line pairs a hunk offers the word highlight (what
/// `word_ranges` takes from its budget when the budget is large enough).
pub fn word_pairs(kinds: &[LineKind]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < kinds.len() {
        if kinds[i] != LineKind::Removed {
            i += 1;
            continue;
        }
        let removed = run(kinds, i, LineKind::Removed);
        let added = run(kinds, removed, LineKind::Added);
        n += (removed - i).min(added - removed);
        i = added.max(removed);
    }
    n
}

/// The end of the run of `kind` lines starting at `from`.
fn run(kinds: &[LineKind], from: usize, kind: LineKind) -> usize {
    (from..kinds.len())
        .find(|&j| kinds[j] != kind)
        .unwrap_or(kinds.len())
}

/// Each changed line's partner for the word highlight: each run of removed
/// lines followed by added lines is paired line by line, in order, while
/// `budget` pairs last.
fn partners(kinds: &[LineKind], mut budget: usize) -> Vec<Option<usize>> {
    let mut out = vec![None; kinds.len()];
    let mut i = 0;
    while i < kinds.len() {
        if kinds[i] != LineKind::Removed {
            i += 1;
            continue;
        }
        let removed = i..run(kinds, i, LineKind::Removed);
        let added = removed.end..run(kinds, removed.end, LineKind::Added);
        for (r, a) in removed.clone().zip(added.clone()) {
            if budget == 0 {
                return out;
            }
            budget -= 1;
            out[r] = Some(a);
            out[a] = Some(r);
        }
        i = added.end.max(removed.end);
    }
    out
}
