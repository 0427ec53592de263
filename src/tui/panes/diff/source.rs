//! A diff as items that do not depend on the width: one per file header,
//! hunk separator, note and diff line. Each line's sanitized text and its
//! width are measured once; its spans (syntax colours, changed words) are
//! built the first time it is shown, and kept (a hunk's syntax colours for
//! the whole hunk at once, since a grammar reads it in order; changed words
//! line by line, so a 5,000-line hunk costs only the lines in view). So a
//! new width only re-counts rows (a comparison per line that fits on one
//! row), and a frame styles only lines it shows. The syntax and word
//! budgets are shared out between hunks in diff order up front, so every
//! hunk gets exactly what building the whole diff at once would give it.
//! `build_rows` lays out a whole diff at once, for views that show it all.

use crate::diff::{DiffLine, FileDiff, Hunk, LineKind};
use crate::tui::panes::diff::rows::{
    CONTEXT, FILE, HUNK, HunkStyle, MAX_SYNTAX_LINES, MAX_WORD_PAIRS, Styled, file_label,
    hunk_label, rule, word_pairs,
};
use crate::tui::render::text::{sanitize, width as text_width, wrap};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::ops::Range;

/// One item of the diff.
#[derive(Debug)]
enum Item {
    /// A row filled to the width: `label`, then `fill` repeated.
    Rule {
        label: String,
        fill: &'static str,
        style: Style,
    },
    /// A row as it is.
    Note(Line<'static>),
    /// Line `line` of hunk `hunk`, `width` columns of text.
    Text {
        hunk: usize,
        line: usize,
        width: usize,
    },
}

/// One hunk: a copy of it (its lines without their text), its lines
/// sanitized, and its share of the budgets.
#[derive(Debug)]
struct HunkSource {
    hunk: Hunk,
    texts: Vec<String>,
    /// The path for syntax colours ("" for none: over the budget).
    path: String,
    /// Width of each line-number column.
    w: usize,
    /// Word-highlight pairs left when this hunk starts.
    words: usize,
    /// Blank gutter and sign: what precedes every row's text, and its width.
    blank: String,
    prefix: usize,
}

#[derive(Debug, Default)]
pub struct Source {
    items: Vec<Item>,
    hunks: Vec<HunkSource>,
    /// Items of each hunk (its separator first), in order.
    hunk_items: Vec<Range<usize>>,
    /// Each hunk's styling, once one of its lines is shown, and the spans
    /// of its lines shown so far.
    styled: Vec<Option<(HunkStyle, Vec<Option<Styled>>)>>,
    /// How many times a hunk was styled (each at most once).
    stylings: usize,
}

impl Source {
    /// The items of `files`, with a header per file when `headers`.
    pub fn new(files: &[&FileDiff], headers: bool) -> Source {
        let mut s = Source::default();
        let (mut syntax_lines, mut words) = (MAX_SYNTAX_LINES, MAX_WORD_PAIRS);
        for diff in files {
            if headers {
                s.items.push(Item::Rule {
                    label: file_label(diff),
                    fill: "━",
                    style: FILE,
                });
            }
            if diff.hunks.is_empty() {
                s.push_note(Line::styled(
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
                let path = match hunk.lines.len() <= syntax_lines {
                    true => {
                        syntax_lines -= hunk.lines.len();
                        diff.path.clone()
                    }
                    false => String::new(),
                };
                let kinds: Vec<LineKind> = hunk.lines.iter().map(|l| l.kind).collect();
                let share = words;
                words -= word_pairs(&kinds).min(words);
                s.push_hunk(hunk, path, w, share);
            }
        }
        s
    }

    fn push_hunk(&mut self, hunk: &Hunk, path: String, w: usize, words: usize) {
        let h = self.hunks.len();
        let start = self.items.len();
        self.items.push(Item::Rule {
            label: hunk_label(hunk, w),
            fill: "─",
            style: HUNK,
        });
        let texts: Vec<String> = hunk.lines.iter().map(|l| sanitize(&l.text)).collect();
        for (line, text) in texts.iter().enumerate() {
            let width = text_width(text);
            self.items.push(Item::Text {
                hunk: h,
                line,
                width,
            });
        }
        self.hunk_items.push(start..self.items.len());
        let blank = format!(" {:w$} {:w$} │ ", "", "");
        // The text is kept once, sanitized, in `texts`.
        let lines = hunk.lines.iter().map(|l| DiffLine {
            text: String::new(),
            ..*l
        });
        self.hunks.push(HunkSource {
            prefix: text_width(&blank),
            blank,
            hunk: Hunk {
                lines: lines.collect(),
                ..*hunk
            },
            texts,
            path,
            w,
            words,
        });
        self.styled.push(None);
    }

    /// Add a row at the end (e.g. "still streaming").
    pub fn push_note(&mut self, line: Line<'static>) {
        self.items.push(Item::Note(line));
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Items of each hunk (its separator first).
    pub fn hunk_items(&self) -> &[Range<usize>] {
        &self.hunk_items
    }

    /// How many times a hunk's spans were built.
    pub fn stylings(&self) -> usize {
        self.stylings
    }

    /// Rows item `i` takes at `width` columns, without styling it: one when
    /// its text fits, else its text wrapped as plain text (wrapping looks at
    /// the characters only, never at their colours).
    pub fn row_count(&self, i: usize, width: usize) -> usize {
        let Some(Item::Text {
            hunk,
            line,
            width: w,
        }) = self.items.get(i)
        else {
            return 1;
        };
        let Some(h) = self.hunks.get(*hunk) else {
            return 1;
        };
        if *w <= width.saturating_sub(h.prefix).max(1) {
            return 1;
        }
        let blank = [Span::raw(h.blank.clone())];
        let text = [Span::raw(h.texts[*line].as_str())];
        wrap(&text, width, &blank, &blank).len()
    }

    /// The rows of item `i` at `width` columns (styling its hunk if not yet).
    pub fn rows(&mut self, i: usize, width: usize) -> Vec<Line<'static>> {
        match self.items.get(i) {
            Some(Item::Rule { label, fill, style }) => vec![rule(label, fill, *style, width)],
            Some(Item::Note(line)) => vec![line.clone()],
            Some(&Item::Text { hunk, line, .. }) => self
                .styled_line(hunk, line)
                .map_or_else(Vec::new, |s| s.rows(width)),
            None => Vec::new(),
        }
    }

    fn styled_line(&mut self, hunk: usize, line: usize) -> Option<&Styled> {
        let h = self.hunks.get(hunk)?;
        let slot = self.styled.get_mut(hunk)?;
        let (style, lines) = slot.get_or_insert_with(|| {
            self.stylings += 1;
            let style = HunkStyle::new(&h.path, &h.hunk, &h.texts, h.w, h.words);
            (style, vec![None; h.texts.len()])
        });
        let spans = lines.get_mut(line)?;
        if spans.is_none() {
            *spans = style.line(&h.hunk, &h.texts, line);
        }
        spans.as_ref()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::panes::diff::rows::{ADDED, ADDED_WORD, REMOVED_WORD};
    use crate::tui::render::theme;

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
