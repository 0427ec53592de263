//! Diff rows: one or more `FileDiff`s as colored lines (a margin column for
//! the hunk cursor, old/new line-number gutters, +/- signs, hunk separators,
//! additions green, removals red, context dim, changed words highlighted via
//! `inline`), long lines wrapped with an empty gutter on continuation rows,
//! and where each hunk's rows are.

use crate::diff::{FileDiff, Hunk, LineKind};
use crate::tui::panes::diff::inline::{Ranges, changed_ranges, segments};
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

/// All rows of `files` at `width` columns, with a header row per file when `headers`.
pub fn build_rows(files: &[&FileDiff], width: usize, headers: bool) -> Built {
    let mut out = Built {
        rows: Vec::new(),
        hunks: Vec::new(),
    };
    let mut word_pairs = MAX_WORD_PAIRS;
    let mut syntax_lines = MAX_SYNTAX_LINES;
    for diff in files {
        if headers {
            out.rows.push(file_header(diff, width));
        }
        if diff.hunks.is_empty() {
            out.rows.push(Line::styled(
                " (no changes: the file already has this content)",
                CONTEXT,
            ));
            continue;
        }
        let max_no = diff
            .hunks
            .iter()
            .flat_map(|h| h.lines.iter())
            .flat_map(|l| [l.old_no, l.new_no])
            .flatten()
            .max()
            .unwrap_or(1);
        let w = max_no.to_string().len().max(2);
        for hunk in &diff.hunks {
            let start = out.rows.len();
            let path = match hunk.lines.len() <= syntax_lines {
                true => {
                    syntax_lines -= hunk.lines.len();
                    diff.path.as_str()
                }
                false => "",
            };
            hunk_rows(path, hunk, w, width, &mut word_pairs, &mut out.rows);
            out.hunks.push(start..out.rows.len());
        }
    }
    out
}

/// `━ calculator.py  +7 −0 (new file) ━━━━`
fn file_header(diff: &FileDiff, width: usize) -> Line<'static> {
    let new = if diff.new_file { " (new file)" } else { "" };
    let label = format!(" ━ {}  {}{new} ", sanitize(&diff.path), diff.stat());
    let fill = width.saturating_sub(text_width(&label));
    Line::styled(format!("{label}{}", "━".repeat(fill)), FILE)
}

/// `path` picks the syntax colours of context lines ("" for none).
fn hunk_rows(
    path: &str,
    hunk: &Hunk,
    w: usize,
    width: usize,
    word_pairs: &mut usize,
    rows: &mut Vec<Line<'static>>,
) {
    let blank_gutter = format!(" {:w$} {:w$} │", "", "");
    let label = format!(" {:w$} {:w$} ├─ {} ", "", "", hunk.header());
    let fill = width.saturating_sub(text_width(&label));
    rows.push(Line::styled(format!("{label}{}", "─".repeat(fill)), HUNK));
    let texts: Vec<String> = hunk.lines.iter().map(|l| sanitize(&l.text)).collect();
    let words = word_ranges(hunk, &texts, word_pairs);
    let context: Vec<bool> = hunk
        .lines
        .iter()
        .map(|l| l.kind != LineKind::Removed)
        .collect();
    let syntax = crate::tui::render::highlight::hunk(path, &texts, &context);
    for (i, line) in hunk.lines.iter().enumerate() {
        let (sign, style, word) = match line.kind {
            LineKind::Added => ("+", ADDED, ADDED_WORD),
            LineKind::Removed => ("-", REMOVED, REMOVED_WORD),
            LineKind::Context => (" ", CONTEXT, CONTEXT),
        };
        let no = |n: Option<usize>| n.map_or(String::new(), |n| n.to_string());
        let gutter = format!(" {:>w$} {:>w$} │", no(line.old_no), no(line.new_no));
        let first = [
            Span::styled(gutter, GUTTER),
            Span::styled(sign, style.add_modifier(Modifier::BOLD)),
        ];
        let cont = [Span::styled(blank_gutter.clone(), GUTTER), Span::raw(" ")];
        let text: Vec<Span<'_>> = match &words[i] {
            Some(ranges) => segments(&texts[i], ranges)
                .into_iter()
                .map(|(s, changed)| Span::styled(s, if changed { word } else { style }))
                .collect(),
            // Context lines get syntax colours (still dim); changes keep theirs.
            None => match (&syntax[i], line.kind) {
                (Some(spans), LineKind::Context) => spans
                    .iter()
                    .map(|s| Span::styled(s.content.as_ref(), s.style.patch(CONTEXT)))
                    .collect(),
                _ => vec![Span::styled(texts[i].as_str(), style)],
            },
        };
        rows.extend(wrap(&text, width, &first, &cont));
    }
}

/// Changed character ranges per line: each run of removed lines followed by
/// added lines is paired line by line.
fn word_ranges(hunk: &Hunk, texts: &[String], budget: &mut usize) -> Vec<Option<Ranges>> {
    let lines = &hunk.lines;
    let mut out = vec![None; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        if lines[i].kind != LineKind::Removed {
            i += 1;
            continue;
        }
        let removed = i..(i..lines.len())
            .find(|&j| lines[j].kind != LineKind::Removed)
            .unwrap_or(lines.len());
        let added = removed.end
            ..(removed.end..lines.len())
                .find(|&j| lines[j].kind != LineKind::Added)
                .unwrap_or(lines.len());
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
