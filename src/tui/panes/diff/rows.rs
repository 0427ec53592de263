//! Diff rows: one or more `FileDiff`s as colored lines (a margin column for
//! the hunk cursor, old/new line-number gutters, +/- signs, hunk separators,
//! additions green, removals red, context dim, changed words highlighted via
//! `inline`), long lines wrapped with an empty gutter on continuation rows,
//! and where each hunk's rows are. A hunk's spans (`style_hunk`) do not
//! depend on the width, so `source` styles each hunk once and wraps per width.

use crate::diff::{FileDiff, Hunk, LineKind};
use crate::tui::panes::diff::inline::{Ranges, changed_ranges, segments};
use crate::tui::panes::diff::source::Source;
use crate::tui::render::text::{sanitize, width as text_width, wrap};
use crate::tui::render::theme;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use std::ops::Range;

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

/// Rows of some diffs and where each hunk's rows are.
pub struct Built {
    pub rows: Vec<Line<'static>>,
    pub hunks: Vec<Range<usize>>,
}

/// All rows of `files` at `width` columns, with a header row per file when
/// `headers` (the whole diff at once, for views that show it all).
pub fn build_rows(files: &[&FileDiff], width: usize, headers: bool) -> Built {
    let mut source = Source::new(files, headers);
    let mut out = Built {
        rows: Vec::new(),
        hunks: Vec::new(),
    };
    let mut starts = Vec::with_capacity(source.len() + 1);
    for i in 0..source.len() {
        starts.push(out.rows.len());
        out.rows.extend(source.rows(i, width));
    }
    starts.push(out.rows.len());
    out.hunks = source
        .hunk_items()
        .iter()
        .map(|r| starts[r.start]..starts[r.end])
        .collect();
    out
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(d: &FileDiff, width: usize) -> Vec<String> {
        build_rows(&[d], width, false)
            .rows
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    #[test]
    fn context_lines_get_syntax_colours_within_a_budget() {
        let styles = |d: &FileDiff| -> Vec<Style> {
            let rows = build_rows(&[d], 80, false).rows;
            rows.iter()
                .flat_map(|r| r.spans.iter().map(|s| s.style))
                .collect()
        };
        let keyword = theme::SYN_KEYWORD.patch(CONTEXT);
        let small = FileDiff::compute(
            "f.py",
            Some("def f():\n    x = 1\n"),
            "def f():\n    x = 2\n",
        );
        assert!(styles(&small).contains(&keyword), "context is coloured");
        let old: String = (0..MAX_SYNTAX_LINES)
            .map(|i| format!("def f{i}(): pass\n"))
            .collect();
        let new: String = old
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i % 4 == 0 {
                    format!("{l} # changed\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let big = FileDiff::compute("f.py", Some(&old), &new);
        assert!(big.hunks[0].lines.len() > MAX_SYNTAX_LINES, "one long hunk");
        assert!(!styles(&big).contains(&keyword), "over the budget: plain");
    }

    #[test]
    fn gutters_signs_and_continuation_rows() {
        let old = "a\nb\n";
        let new = "a\nb\nthis line is much too long to fit\n";
        let d = FileDiff::compute("f.py", Some(old), new);
        let rows = plain(&d, 25);
        assert_eq!(rows[0], "       ├─ @@ -1,2 +1,3 @@ ");
        assert_eq!(rows[1], "  1  1 │ a");
        assert_eq!(rows[3], "     3 │+this line is");
        assert_eq!(rows[4], "       │ much too long to");
        assert_eq!(rows[5], "       │ fit");
        let styled = build_rows(&[&d], 25, false).rows;
        assert_eq!(styled[3].spans.last().map(|s| s.style), Some(ADDED));
    }

    #[test]
    fn changed_words_are_highlighted_in_paired_lines() {
        let d = FileDiff::compute(
            "f.py",
            Some("x = compute(1, 'x')\n"),
            "x = compute(1, 'y')\n",
        );
        let rows = build_rows(&[&d], 60, false).rows;
        let styled = |row: &Line<'_>, style: Style| -> String {
            row.spans
                .iter()
                .filter(|s| s.style == style)
                .map(|s| s.content.as_ref())
                .collect()
        };
        assert_eq!(styled(&rows[1], REMOVED_WORD), "x");
        assert_eq!(styled(&rows[2], ADDED_WORD), "y");
        assert_eq!(styled(&rows[2], ADDED), "x = compute(1, '')");
    }

    #[test]
    fn hunk_rows_are_recorded_and_files_get_headers() {
        let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 28\n", "");
        let d = FileDiff::compute("f.txt", Some(&old), &new);
        let created = FileDiff::compute("g.txt", None, "g\n");
        let built = build_rows(&[&d, &created], 60, true);
        assert_eq!(built.hunks.len(), 3);
        assert!(built.rows[0].to_string().contains("f.txt  +1 −2"));
        for r in &built.hunks {
            assert!(built.rows[r.start].to_string().contains("@@"));
        }
        let g = built.hunks[2].start - 1;
        assert!(
            built.rows[g]
                .to_string()
                .contains("g.txt  +1 −0 (new file)")
        );
    }
}
