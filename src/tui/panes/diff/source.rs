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
use crate::tui::panes::diff::syntax_jobs::{Colours, SyntaxJobs};
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
    /// Syntax colours computed on the UI's worker (`None`: here, when first shown).
    jobs: Option<SyntaxJobs>,
    /// Colours taken over from the diff this one replaces, per hunk: the
    /// lines it shares with a hunk of that diff from its start.
    inherited: Vec<Option<Colours>>,
}

impl Source {
    /// The items of `files`, with a header per file when `headers`.
    pub fn new(files: &[&FileDiff], headers: bool) -> Source {
        #[cfg(test)]
        BUILT.with(|n| n.set(n.get() + 1));
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
            // Every hunk of the file has the same blank prefix.
            let blank = format!(" {:w$} {:w$} │ ", "", "");
            let prefix = text_width(&blank);
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
                s.push_hunk(hunk, path, w, share, (&blank, prefix));
            }
        }
        s
    }

    /// Colour hunks on the UI's worker from now on: a hunk is shown plain
    /// until its colours arrive (see `take_coloured`).
    pub fn colour_on_worker(mut self) -> Source {
        self.jobs = Some(SyntaxJobs::default());
        self
    }

    /// Take over the syntax colours `old` has for the same lines: a hunk
    /// of the same file at the same place keeps the colours of the lines
    /// it shares with it from its start (a line's colours depend only on
    /// the lines above it), so a live preview that grows is not drawn
    /// plain while its new colours are computed.
    pub fn inherit(&mut self, old: &Source) {
        self.inherited = (0..self.hunks.len())
            .map(|i| {
                let (new, was) = (self.hunks.get(i)?, old.hunks.get(i)?);
                let (style, _) = old.styled.get(i)?.as_ref()?;
                let colours = style.syntax();
                if new.path.is_empty() || new.path != was.path || colours.is_empty() {
                    return None;
                }
                let (new_side, was_side) =
                    (HunkStyle::sides(&new.hunk), HunkStyle::sides(&was.hunk));
                let shared = (new.texts.iter().zip(&new_side))
                    .zip(was.texts.iter().zip(&was_side))
                    .take_while(|(a, b)| a == b)
                    .count()
                    .min(colours.len());
                let mut kept: Colours = colours[..shared].to_vec();
                kept.resize(new.texts.len(), None);
                (shared > 0).then_some(kept)
            })
            .collect();
    }

    /// Hunks whose syntax colours arrived: their lines are styled again
    /// (the caller wraps their rows again; the row counts do not change).
    pub fn take_coloured(&mut self) -> Vec<usize> {
        let Some(jobs) = &mut self.jobs else {
            return Vec::new();
        };
        let mut hunks = Vec::new();
        for (h, colours) in jobs.finished() {
            if let Some(Some((style, lines))) = self.styled.get_mut(h) {
                style.set_syntax(colours);
                lines.fill(None);
                hunks.push(h);
            }
        }
        hunks
    }

    /// Whether a hunk shown still waits for its syntax colours.
    pub fn colouring_due(&self) -> bool {
        self.jobs.as_ref().is_some_and(SyntaxJobs::pending)
    }

    /// `blank`: the prefix of a continuation row at line-number width `w`, and its width.
    fn push_hunk(
        &mut self,
        hunk: &Hunk,
        path: String,
        w: usize,
        words: usize,
        (blank, prefix): (&str, usize),
    ) {
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
        // The text is kept once, sanitized, in `texts`.
        let lines = hunk.lines.iter().map(|l| DiffLine {
            text: String::new(),
            ..*l
        });
        self.hunks.push(HunkSource {
            prefix,
            blank: blank.to_string(),
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
            // Colours computed here (`Some`), or on their way (`None`).
            let colours = match &mut self.jobs {
                Some(jobs) if !h.path.is_empty() => {
                    let side = HunkStyle::sides(&h.hunk);
                    jobs.start(hunk, &h.path, &h.texts, side)
                }
                _ => None,
            };
            // With jobs, never here: plain for now, or the colours above.
            let path = match self.jobs.is_some() {
                true => "",
                false => h.path.as_str(),
            };
            let mut style = HunkStyle::new(path, &h.hunk, &h.texts, h.w, h.words);
            if let Some(colours) = colours {
                style.set_syntax(colours);
            } else if path.is_empty()
                && let Some(Some(kept)) = self.inherited.get_mut(hunk)
            {
                style.set_syntax(std::mem::take(kept));
            }
            (style, vec![None; h.texts.len()])
        });
        let spans = lines.get_mut(line)?;
        if spans.is_none() {
            *spans = style.line(&h.hunk, &h.texts, line);
        }
        spans.as_ref()
    }
}

#[cfg(test)]
thread_local! {
    /// Sources built on this thread (tests count work, not time).
    static BUILT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Sources built so far on this thread.
#[cfg(test)]
pub fn built() -> usize {
    BUILT.with(|n| n.get())
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
#[path = "source_tests.rs"]
mod tests;
