//! Diff rows: one or more `FileDiff`s as colored lines (a margin column for
//! the hunk cursor, old/new line-number gutters, +/- signs, hunk separators,
//! additions green, removals red, context dim, changed words highlighted via
//! `inline`), long lines wrapped with an empty gutter on continuation rows.
//! A hunk's spans (`style_hunk`) do not depend on the width, so `source`
//! styles each hunk once and wraps them per width.

use crate::diff::{FileDiff, Hunk, LineKind};
use crate::tui::panes::diff::inline::{Ranges, changed_ranges, segments};
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
#[derive(Debug, Clone)]
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

/// Spans of every line of a hunk: `path` picks the syntax colours of context
/// lines ("" for none); `texts` are the lines sanitized; `word_pairs` is what
/// is left of the diff's word-highlight budget when this hunk starts.
pub fn style_hunk(
    path: &str,
    hunk: &Hunk,
    texts: &[String],
    w: usize,
    mut word_pairs: usize,
) -> Vec<Styled> {
    let blank_gutter = format!(" {:w$} {:w$} │", "", "");
    let kinds: Vec<LineKind> = hunk.lines.iter().map(|l| l.kind).collect();
    let words = word_ranges(&kinds, texts, &mut word_pairs);
    let context: Vec<bool> = kinds.iter().map(|k| *k != LineKind::Removed).collect();
    let syntax = crate::tui::render::highlight::hunk(path, texts, &context);
    let mut out = Vec::with_capacity(hunk.lines.len());
    for (i, line) in hunk.lines.iter().enumerate() {
        let (sign, style, word) = match line.kind {
            LineKind::Added => ("+", ADDED, ADDED_WORD),
            LineKind::Removed => ("-", REMOVED, REMOVED_WORD),
            LineKind::Context => (" ", CONTEXT, CONTEXT),
        };
        let no = |n: Option<usize>| n.map_or(String::new(), |n| n.to_string());
        let gutter = format!(" {:>w$} {:>w$} │", no(line.old_no), no(line.new_no));
        let text: Vec<Span<'static>> = match &words[i] {
            Some(ranges) => segments(&texts[i], ranges)
                .into_iter()
                .map(|(s, changed)| Span::styled(s.to_string(), if changed { word } else { style }))
                .collect(),
            // Context lines get syntax colours (still dim); changes keep theirs.
            None => match (&syntax[i], line.kind) {
                (Some(spans), LineKind::Context) => spans
                    .iter()
                    .map(|s| Span::styled(s.content.to_string(), s.style.patch(CONTEXT)))
                    .collect(),
                _ => vec![Span::styled(texts[i].clone(), style)],
            },
        };
        out.push(Styled {
            first: [
                Span::styled(gutter, GUTTER),
                Span::styled(sign, style.add_modifier(Modifier::BOLD)),
            ],
            cont: [Span::styled(blank_gutter.clone(), GUTTER), Span::raw(" ")],
            text,
        });
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

/// Changed character ranges per line: each run of removed lines followed by
/// added lines is paired line by line.
fn word_ranges(kinds: &[LineKind], texts: &[String], budget: &mut usize) -> Vec<Option<Ranges>> {
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
            if *budget == 0 {
                return out;
            }
            *budget -= 1;
            if let Some((old, new)) = changed_ranges(&texts[r], &texts[a]) {
                out[r] = Some(old);
                out[a] = Some(new);
            }
        }
        i = added.end.max(removed.end);
    }
    out
}
