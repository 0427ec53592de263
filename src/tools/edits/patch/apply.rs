//! Building a file's new content from its located hunks. What must stay true:
//! every hunk is located in the original file (so hunks may come in any
//! order), hunks that overlap are refused, context lines keep the file's own
//! bytes, the final newline changes only where a `\ No newline at end of
//! file` marker says so (a patch that does not mention it keeps the file's),
//! a hunk that would change or border a hidden credential is refused on its
//! own, the rest of the file staying patchable; a last hunk short of its
//! counts applies only where the file shows it whole (`check_whole`); a
//! hunk placed more than a few lines from its header's line says how far.

use super::locate::{FileLines, Fit, locate};
use super::{FilePatch, LineOp, PatchHunk};
use crate::tools::redact::{MARKER, touches};

/// A file's patched content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub text: String,
    /// What was matched loosely (trailing whitespace).
    pub warnings: Vec<String>,
    /// Per hunk, the 0-based range of original lines it matched (context and
    /// removed lines; empty for a pure insertion at that line).
    pub old_spans: Vec<std::ops::Range<usize>>,
}

/// Apply a file's hunks to its content (LF text).
pub fn apply(content: &str, patch: &FilePatch) -> Result<String, String> {
    apply_checked(content, patch).map(|a| a.text)
}

/// Apply a file's hunks to its content (LF text), with warnings.
pub fn apply_checked(content: &str, patch: &FilePatch) -> Result<Applied, String> {
    let file = FileLines::new(content);
    let path = patch.path();
    let placed = place(&file, patch)?;
    let mut out: Vec<&str> = Vec::new();
    let mut warnings = Vec::new();
    let mut cursor = 0;
    let mut final_newline = file.ends_with_newline;
    let mut old_spans = Vec::new();
    for (n, &(at, hunk)) in placed.iter().enumerate() {
        check_hidden(&file, at, hunk, path)?;
        check_whole(&file, at, hunk)?;
        warnings.extend(moved(at, hunk, path));
        out.extend(&file.lines[cursor..at]);
        let (mut k, mut loose) = (at, 0);
        for line in &hunk.body {
            if line.op != LineOp::Added {
                if file.matches(k, &line.text) == Some(Fit::TrailingWhitespace) {
                    loose += 1;
                }
                if line.op == LineOp::Context {
                    out.push(file.lines[k]);
                }
                k += 1;
            } else {
                out.push(&line.text);
            }
        }
        cursor = k;
        old_spans.push(at..k);
        if loose > 0 {
            warnings.push(format!(
                "{path}: hunk {} matched {loose} line(s) only when ignoring trailing whitespace; \
                 the file's own context lines were kept",
                hunk.header
            ));
        }
        if hunk.new_no_newline {
            if k != file.lines.len() || n + 1 != placed.len() {
                return Err(format!(
                    "hunk {} of {path} says its last line ends the file without a newline \
                     (`\\ No newline at end of file`), but the file goes on after it (line {}); \
                     nothing was changed",
                    hunk.header,
                    k + 1
                ));
            }
            final_newline = false;
        } else if hunk.old_no_newline {
            final_newline = true;
        }
    }
    out.extend(&file.lines[cursor..]);
    let mut text = out.join("\n");
    if final_newline && !out.is_empty() {
        text.push('\n');
    }
    if text.matches(MARKER).count() > content.matches(MARKER).count() {
        return Err(format!(
            "the patch writes {MARKER} into {path}: it is a placeholder for a value hidden from \
             you, not content. Keep lines holding hidden values as context lines, unchanged"
        ));
    }
    Ok(Applied {
        text,
        warnings,
        old_spans,
    })
}

/// How far from its header's line a hunk is placed, past a few lines: the
/// place matched the file only there (`locate` placed it), but the user and
/// the model should know the line numbers were off.
const MOVED_SILENTLY: usize = 3;

fn moved(at: usize, hunk: &PatchHunk, path: &str) -> Option<String> {
    let hint = hunk.hint?;
    let distance = at.abs_diff(hint);
    (distance > MOVED_SILENTLY && !hunk.old_lines.is_empty()).then(|| {
        let side = if at > hint { "below" } else { "above" };
        format!(
            "{path}: hunk {} was applied at line {}, {distance} lines {side} line {} where its \
             header says; its lines match the file only there",
            hunk.header,
            at + 1,
            hint + 1
        )
    })
}

/// The most lines a model miscounts a hunk by, as seen in practice.
const MISCOUNT: usize = 2;

/// A last hunk short of its counts is whole when it ends in context as git
/// ends a hunk (see below), or
/// when it ends at the file's end with no more new lines missing than old
/// ones: no old line can be missing past the file's end, so the old count
/// is simply too large, and a cut (after a removed line, or among the added
/// ones) would leave more new lines missing than that; or when the new
/// side's last line is marked as the file's last. Otherwise the patch may
/// have been cut mid-change.
fn check_whole(file: &FileLines, at: usize, hunk: &PatchHunk) -> Result<(), String> {
    let Some(short) = &hunk.short else {
        return Ok(());
    };
    let last = hunk.body.last().map(|l| l.op);
    // Ending in context shows a hunk whole only as git ends one: with as
    // much context after its last change as before its first (up to 3),
    // and short by a miscount's few lines, not by a cut-off change.
    let run = |lines: &mut dyn Iterator<Item = &super::HunkLine>| {
        lines.take_while(|l| l.op == LineOp::Context).count()
    };
    let (leading, trailing) = (run(&mut hunk.body.iter()), run(&mut hunk.body.iter().rev()));
    let ends_in_context = last == Some(LineOp::Context)
        && trailing >= leading.min(3)
        && short.old_missing <= MISCOUNT
        && short.new_missing <= MISCOUNT;
    let at_file_end =
        at + hunk.old_lines.len() == file.lines.len() && short.new_missing <= short.old_missing;
    // `\ No newline at end of file` after the new side's last line: nothing
    // of it can follow.
    let new_side_ends = hunk.new_no_newline;
    if ends_in_context || at_file_end || new_side_ends {
        Ok(())
    } else {
        Err(short.refusal.clone())
    }
}

/// Every hunk's place in the original file, in file order, none overlapping.
fn place<'p>(
    file: &FileLines,
    patch: &'p FilePatch,
) -> Result<Vec<(usize, &'p PatchHunk)>, String> {
    let path = patch.path();
    let mut placed = Vec::new();
    for hunk in &patch.hunks {
        placed.push((locate(file, hunk, path)?, hunk));
    }
    // Additions at a hunk's first line go before it; equal places keep patch order.
    placed.sort_by_key(|(at, hunk)| (*at, !hunk.old_lines.is_empty()));
    for pair in placed.windows(2) {
        let ((a, first), (b, second)) = (pair[0], pair[1]);
        if a + first.old_lines.len() > b {
            return Err(format!(
                "hunks {} and {} of {path} change overlapping lines (from line {}); merge them \
                 into one hunk (nothing was changed)",
                first.header,
                second.header,
                b + 1
            ));
        }
    }
    Ok(placed)
}

/// Refuse a hunk whose removed lines hold, or whose insertions border, a hidden value.
fn check_hidden(file: &FileLines, at: usize, hunk: &PatchHunk, path: &str) -> Result<(), String> {
    let mut runs = Vec::new();
    // The current run of changes, as the old lines it replaces (empty: an insertion point).
    let mut run: Option<(usize, usize)> = None;
    let mut k = at;
    for line in &hunk.body {
        match line.op {
            LineOp::Context => {
                runs.extend(run.take());
                k += 1;
            }
            LineOp::Removed => {
                run = Some((run.map_or(k, |r| r.0), k + 1));
                k += 1;
            }
            LineOp::Added => run = Some(run.unwrap_or((k, k))),
        }
    }
    runs.extend(run);
    let hit = runs
        .iter()
        .any(|&(from, to)| touches(&file.hidden, &(file.starts[from]..file.starts[to])));
    if hit {
        return Err(format!(
            "hunk {} of {path} changes a line holding a value hidden from you as a credential \
             ({MARKER} in what you read); such values cannot be edited through the tools. Keep \
             that line unchanged, as context, and change only other lines (nothing was changed)",
            hunk.header
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    fn patched(content: &str, patch: &str) -> Result<String, String> {
        let files = parse(&format!("--- a/f\n+++ b/f\n{patch}"))?;
        apply(content, &files[0])
    }

    const NL: &str = "\\ No newline at end of file";

    fn checked(content: &str, patch: &str) -> Result<Applied, String> {
        let files = parse(&format!("--- a/f\n+++ b/f\n{patch}"))?;
        apply_checked(content, &files[0])
    }

    #[test]
    fn a_last_hunk_with_counts_too_large_applies_when_the_file_shows_it_whole() {
        let file = "a\nb\nc\nd\n";
        // Ends in context: whole, applied with the count warning.
        let done = checked(file, "@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n").unwrap();
        assert_eq!(done.text, "a\nB\nc\nd\n");
        // Ends at the file's last line on an added line, no more new lines
        // missing than old: whole too.
        let done = checked(file, "@@ -3,4 +3,4 @@\n c\n-d\n+D\n").unwrap();
        assert_eq!(done.text, "a\nb\nc\nD\n");
        // Ends mid-change, not at the file's end: it may be cut, refused.
        let err = checked(file, "@@ -1,5 +1,5 @@\n a\n-b\n").unwrap_err();
        assert!(err.contains("ends early"), "{err}");
        // Cut after a removed line at the file's end: `D` never came.
        let err = checked(file, "@@ -3,2 +3,2 @@\n c\n-d\n").unwrap_err();
        assert!(err.contains("ends early"), "{err}");
        // Cut among the added lines at the file's end: more new lines missing.
        let err = checked(file, "@@ -3,2 +3,4 @@\n c\n-d\n+D\n").unwrap_err();
        assert!(err.contains("ends early"), "{err}");
        // Cut after the context between two changes: less context after
        // than before, and more lines missing than a miscount.
        let long = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let cut = "@@ -1,8 +1,8 @@\n a\n b\n-c\n+C\n d\n";
        assert!(checked(long, cut).unwrap_err().contains("ends early"));
    }

    #[test]
    fn a_hunk_far_from_its_header_line_says_how_far() {
        let file: String = (1..=30).map(|i| format!("l{i}\n")).collect();
        let done = checked(&file, "@@ -2,2 +2,2 @@\n l20\n-l21\n+L21\n").unwrap();
        assert!(done.text.contains("l20\nL21\nl22"), "{}", done.text);
        let far = done
            .warnings
            .iter()
            .find(|w| w.contains("18 lines below line 2"));
        assert!(far.is_some(), "{:?}", done.warnings);
        // Two lines off: line numbers drift that little in every edit, no warning.
        let near = checked(&file, "@@ -18,2 +18,2 @@\n l20\n-l21\n+L21\n").unwrap();
        assert!(near.warnings.is_empty(), "{:?}", near.warnings);
    }

    #[test]
    fn the_final_newline_is_added_removed_or_kept_as_the_markers_say() {
        let add = format!("@@ -1,2 +1,2 @@\n a\n-b\n{NL}\n+b\n");
        assert_eq!(patched("a\nb", &add).unwrap(), "a\nb\n");
        let remove = format!("@@ -1,2 +1,2 @@\n a\n-b\n+b\n{NL}\n");
        assert_eq!(patched("a\nb\n", &remove).unwrap(), "a\nb");
        let both = format!("@@ -1,2 +1,2 @@\n-a\n+A\n b\n{NL}\n");
        assert_eq!(patched("a\nb", &both).unwrap(), "A\nb");
        assert_eq!(patched("a\nb", "@@ -1 +1 @@\n-a\n+A\n").unwrap(), "A\nb");
        let err = patched("a\nb\n", &add).unwrap_err();
        assert!(err.contains("ends with a newline"), "{err}");
        let drop_last = format!("@@ -1,3 +1,2 @@\n a\n b\n-c\n{NL}\n");
        assert_eq!(patched("a\nb\nc", &drop_last).unwrap(), "a\nb\n");
    }

    #[test]
    fn a_new_file_without_a_final_newline() {
        let files = parse(&format!(
            "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y\n{NL}\n"
        ))
        .unwrap();
        assert_eq!(apply("", &files[0]).unwrap(), "x\ny");
    }

    #[test]
    fn hunks_out_of_order_and_overlapping_hunks() {
        let file = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let patch = "@@ -7,2 +7,2 @@\n g\n-h\n+H\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n";
        assert_eq!(patched(file, patch).unwrap(), "A\nb\nc\nd\ne\nf\ng\nH\n");
        let overlap = "@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n";
        assert!(patched(file, overlap).unwrap_err().contains("overlapping"));
    }

    #[test]
    fn context_keeps_the_files_trailing_whitespace_with_a_warning() {
        let files = parse("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n").unwrap();
        let done = apply_checked("a  \nb\t\n", &files[0]).unwrap();
        assert_eq!(done.text, "a  \nB\n");
        assert_eq!(done.warnings.len(), 1, "{:?}", done.warnings);
        assert!(patched("\ta\nb\n", "@@ -1,2 +1,2 @@\n    a\n-b\n+B\n").is_err());
    }

    #[test]
    fn only_hunks_touching_a_hidden_value_are_refused() {
        let file = "class User:\n    def __init__(self, password):\n        self.password = password\n\n    def name(self):\n        return 'x'\n";
        let seen = format!("        self.password = {MARKER}");
        let elsewhere = format!(
            "@@ -2,5 +2,5 @@\n     def __init__(self, password):\n {seen}\n \n     def name(self):\n-        return 'x'\n+        return 'y'\n"
        );
        assert_eq!(
            patched(file, &elsewhere).unwrap(),
            file.replace("return 'x'", "return 'y'")
        );
        let touching = format!("@@ -3 +3 @@\n-{seen}\n+        self.password = None\n");
        let err = patched(file, &touching).unwrap_err();
        assert!(
            err.contains("hidden from you") && !err.contains("write_file"),
            "{err}"
        );
        let real = "@@ -3 +3 @@\n-        self.password = password\n+        self.password = 1\n";
        assert!(patched(file, real).unwrap_err().contains("hidden from you"));
        let placeholder = format!("@@ -6 +6 @@\n-        return 'x'\n+        return '{MARKER}'\n");
        assert!(
            patched(file, &placeholder)
                .unwrap_err()
                .contains("placeholder")
        );
    }
}
