//! Line diffs of proposed edits: hunks with old/new line numbers and +/- counts,
//! computed once with `similar` and shared by every consumer (headless output,
//! the TUI diff pane, the JSON event stream).
//!
//! A line without a final newline differs from the same line with one, so a
//! final-newline-only change counts its last line as removed and added; as in
//! `git diff`, a [`NO_NEWLINE`] marker row follows each side's unterminated
//! last line. The marker is a context row without line numbers, so every
//! consumer shows it without knowing about it, and it is never counted.

use serde::Serialize;
use similar::{ChangeTag, TextDiff};

/// Lines of unchanged context kept around each change.
const CONTEXT_LINES: usize = 3;

/// The row after a last line that has no line terminator.
pub const NO_NEWLINE: &str = "\\ No newline at end of file";

/// What one diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    Context,
    Added,
    Removed,
}

/// One line of a hunk, without its line terminator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffLine {
    pub kind: LineKind,
    /// 1-based line number in the old file (absent for added lines).
    pub old_no: Option<usize>,
    /// 1-based line number in the new file (absent for removed lines).
    pub new_no: Option<usize>,
    pub text: String,
}

impl DiffLine {
    /// The [`NO_NEWLINE`] marker row, which is no line of either file.
    pub fn is_no_newline_marker(&self) -> bool {
        self.kind == LineKind::Context && self.old_no.is_none() && self.new_no.is_none()
    }

    /// The line as a unified diff writes it: its sign and text, or the marker as is.
    pub fn unified(&self) -> String {
        let sign = match self.kind {
            _ if self.is_no_newline_marker() => return self.text.clone(),
            LineKind::Context => ' ',
            LineKind::Added => '+',
            LineKind::Removed => '-',
        };
        format!("{sign}{}", self.text)
    }

    fn no_newline_marker() -> Self {
        DiffLine {
            kind: LineKind::Context,
            old_no: None,
            new_no: None,
            text: NO_NEWLINE.to_string(),
        }
    }
}

/// A contiguous group of changes with its surrounding context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub lines: Vec<DiffLine>,
}

impl Hunk {
    /// The `@@ -a,b +c,d @@` header of this hunk.
    pub fn header(&self) -> String {
        format!(
            "@@ -{},{} +{},{} @@",
            self.old_start, self.old_len, self.new_start, self.new_len
        )
    }
}

/// The diff of one file between its current and its proposed content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub path: String,
    /// The file does not exist yet.
    pub new_file: bool,
    pub added: usize,
    pub removed: usize,
    pub hunks: Vec<Hunk>,
}

impl FileDiff {
    /// Diff `old` against `new`; `old` is `None` when the file does not exist.
    pub fn compute(path: &str, old: Option<&str>, new: &str) -> Self {
        let old_text = old.unwrap_or("");
        let diff = TextDiff::from_lines(old_text, new);
        let mut hunks = Vec::new();
        let (mut added, mut removed) = (0, 0);
        for group in diff.grouped_ops(CONTEXT_LINES) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            let mut lines = Vec::new();
            for op in &group {
                for change in diff.iter_changes(op) {
                    let kind = match change.tag() {
                        ChangeTag::Equal => LineKind::Context,
                        ChangeTag::Insert => {
                            added += 1;
                            LineKind::Added
                        }
                        ChangeTag::Delete => {
                            removed += 1;
                            LineKind::Removed
                        }
                    };
                    let value = change.value();
                    let text = value.strip_suffix('\n').unwrap_or(value);
                    let text = text.strip_suffix('\r').unwrap_or(text);
                    lines.push(DiffLine {
                        kind,
                        old_no: change.old_index().map(|i| i + 1),
                        new_no: change.new_index().map(|i| i + 1),
                        text: text.to_string(),
                    });
                    if !value.ends_with('\n') {
                        lines.push(DiffLine::no_newline_marker());
                    }
                }
            }
            hunks.push(Hunk {
                old_start: hunk_start(&old_range),
                old_len: old_range.len(),
                new_start: hunk_start(&new_range),
                new_len: new_range.len(),
                lines,
            });
        }
        FileDiff {
            path: path.to_string(),
            new_file: old.is_none(),
            added,
            removed,
            hunks,
        }
    }

    /// True when applying the edit would change nothing.
    pub fn is_empty(&self) -> bool {
        self.hunks.is_empty()
    }

    /// `+4 −0` style counts.
    pub fn stat(&self) -> String {
        format!("+{} \u{2212}{}", self.added, self.removed)
    }

    /// Standard unified-diff text (`---`/`+++` headers, `@@` hunks).
    pub fn to_unified(&self) -> String {
        let mut out = String::new();
        let old_name = if self.new_file {
            "/dev/null".to_string()
        } else {
            format!("a/{}", self.path)
        };
        out.push_str(&format!("--- {old_name}\n+++ b/{}\n", self.path));
        for hunk in &self.hunks {
            out.push_str(&hunk.header());
            out.push('\n');
            for line in &hunk.lines {
                out.push_str(&line.unified());
                out.push('\n');
            }
        }
        out
    }
}

/// `new` with only the accepted hunks of the `old` → `new` diff applied: the
/// lines of a rejected hunk stay as they are in `old`. Hunks are numbered as in
/// [`FileDiff::compute`] (same context size, same grouping).
pub fn apply_hunks(old: &str, new: &str, accepted: &[bool]) -> String {
    let diff = TextDiff::from_lines(old, new);
    let groups = diff.grouped_ops(CONTEXT_LINES);
    let hunk_of = |op: &similar::DiffOp| {
        groups.iter().position(|g| {
            g.iter()
                .any(|o| o.old_range() == op.old_range() && o.new_range() == op.new_range())
        })
    };
    let old_lines: Vec<&str> = diff.iter_old_slices().collect();
    let new_lines: Vec<&str> = diff.iter_new_slices().collect();
    let mut out = String::with_capacity(new.len().max(old.len()));
    for op in diff.ops() {
        let take_new = match op.tag() {
            similar::DiffTag::Equal => false,
            _ => hunk_of(op).is_some_and(|h| accepted.get(h).copied().unwrap_or(false)),
        };
        let lines = if take_new {
            &new_lines[op.new_range()]
        } else {
            &old_lines[op.old_range()]
        };
        for line in lines {
            out.push_str(line);
        }
    }
    out
}

/// Unified diffs number an empty range by the line before it.
fn hunk_start(range: &std::ops::Range<usize>) -> usize {
    if range.is_empty() {
        range.start
    } else {
        range.start + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_line_numbers_of_an_insertion() {
        let old = "a\nb\nc\n";
        let new = "a\nb\nX\nc\n";
        let d = FileDiff::compute("f.py", Some(old), new);
        assert_eq!((d.added, d.removed), (1, 0));
        assert_eq!(d.hunks.len(), 1);
        let h = &d.hunks[0];
        assert_eq!(h.header(), "@@ -1,3 +1,4 @@");
        let added: Vec<_> = h
            .lines
            .iter()
            .filter(|l| l.kind == LineKind::Added)
            .collect();
        assert_eq!(added.len(), 1);
        assert_eq!(added[0].new_no, Some(3));
        assert_eq!(added[0].old_no, None);
        assert_eq!(added[0].text, "X");
        assert_eq!(d.stat(), "+1 \u{2212}0");
    }

    #[test]
    fn new_file_diff_is_all_additions_against_dev_null() {
        let d = FileDiff::compute("new.py", None, "x = 1\ny = 2\n");
        assert!(d.new_file);
        assert_eq!((d.added, d.removed), (2, 0));
        let text = d.to_unified();
        assert!(text.starts_with("--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n"));
    }

    #[test]
    fn identical_content_gives_an_empty_diff() {
        let d = FileDiff::compute("f.py", Some("same\n"), "same\n");
        assert!(d.is_empty());
        assert_eq!((d.added, d.removed), (0, 0));
    }

    #[test]
    fn rejecting_the_middle_of_three_hunks_keeps_exactly_its_old_lines() {
        let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 20\n", "line twenty\nline twenty-and-a-half\n")
            .replace("line 38\n", "");
        let d = FileDiff::compute("f.txt", Some(&old), &new);
        assert_eq!(d.hunks.len(), 3);
        let expected = old
            .replace("line 2\n", "line two\n")
            .replace("line 38\n", "");
        assert_eq!(apply_hunks(&old, &new, &[true, false, true]), expected);
        assert_eq!(apply_hunks(&old, &new, &[true, true, true]), new);
        assert_eq!(apply_hunks(&old, &new, &[false, false, false]), old);
        assert_eq!(
            apply_hunks(&old, &new, &[]),
            old,
            "missing entries count as rejected"
        );
    }

    #[test]
    fn a_final_newline_change_is_counted_and_marked_like_git_diff() {
        let added = FileDiff::compute("f.txt", Some("a\nb"), "a\nb\n");
        assert_eq!((added.added, added.removed), (1, 1));
        assert_eq!(
            added.to_unified(),
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
        );
        let removed = FileDiff::compute("f.txt", Some("a\nb\n"), "a\nb");
        assert_eq!((removed.added, removed.removed), (1, 1));
        assert!(
            removed
                .to_unified()
                .ends_with("-b\n+b\n\\ No newline at end of file\n"),
            "{}",
            removed.to_unified()
        );
        let both = FileDiff::compute("f.txt", Some("a\nb"), "A\nb");
        assert!(
            both.to_unified()
                .ends_with(" b\n\\ No newline at end of file\n"),
            "{}",
            both.to_unified()
        );
        let marker = &removed.hunks[0].lines[3];
        assert!(marker.is_no_newline_marker());
        assert_eq!(marker.unified(), NO_NEWLINE);
        assert_eq!(removed.hunks[0].lines[1].unified(), "-b");
        assert_eq!(marker.text, NO_NEWLINE);
        assert!(!removed.hunks[0].lines[0].is_no_newline_marker());
    }

    #[test]
    fn distant_changes_make_separate_hunks() {
        let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 28\n", "line twenty-eight\n");
        let d = FileDiff::compute("f.txt", Some(&old), &new);
        assert_eq!(d.hunks.len(), 2);
        assert_eq!((d.added, d.removed), (2, 2));
        assert_eq!(d.hunks[1].lines[0].old_no, Some(25));
    }
}
