//! `apply_patch`: standard unified diffs (`--- a/path`, `+++ b/path`, `@@`
//! hunks), several files at once, creating (`--- /dev/null`) and deleting
//! (`+++ /dev/null`) files. Parsing (`parse`, `hunk`), finding each hunk in
//! the file (`locate`) and building the new content (`apply`) are pure
//! functions. The promise: a patch is applied exactly, or refused with a
//! message the model can act on, never applied wrongly. So a hunk's lines
//! must match the file (trailing whitespace aside, the file's own bytes being
//! kept) at exactly one place, or at the very line its header names; the
//! `@@` counts are only a hint; `\ No newline at end of file` is honoured;
//! a hunk that would change a value hidden from the model is refused.
//! (Hand-written: the crates at hand parse one file per patch or pull in a
//! parser stack, and none applies the exact-context rule with errors that
//! quote what did not match.)

mod apply;
#[cfg(test)]
mod corpus;
mod hunk;
mod locate;
mod parse;

pub use apply::{Applied, apply, apply_checked};
pub use parse::parse;

/// One file's part of a patch (all its sections, in patch order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// `None` for `/dev/null`: the patch creates the file.
    pub old_path: Option<String>,
    /// `None` for `/dev/null`: the patch deletes the file.
    pub new_path: Option<String>,
    pub hunks: Vec<PatchHunk>,
    /// What was read differently from what the patch said (wrong `@@` counts).
    pub warnings: Vec<String>,
}

impl FilePatch {
    /// The path the patch is about.
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("")
    }
}

/// What one hunk line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineOp {
    Context,
    Removed,
    Added,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    pub op: LineOp,
    /// The line without its sign.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchHunk {
    pub header: String,
    /// 0-based index in the old file where the header says the old lines
    /// start; `None` for a bare `@@`.
    pub hint: Option<usize>,
    /// The hunk's lines in order.
    pub body: Vec<HunkLine>,
    /// Context and removed lines, in order.
    pub old_lines: Vec<String>,
    /// Context and added lines, in order.
    pub new_lines: Vec<String>,
    /// The last old line is the old file's last and has no newline.
    pub old_no_newline: bool,
    /// The last new line is the new file's last and has no newline.
    pub new_no_newline: bool,
    /// A last hunk that ends short of its `@@` counts (the patch may be
    /// cut), unless the file shows the hunk is whole.
    pub short: Option<Short>,
}

/// How a last hunk falls short of its counts, and the refusal if it is cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Short {
    pub refusal: String,
    /// Old and new lines the header counts beyond the hunk's lines.
    pub old_missing: usize,
    pub new_missing: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "a\nb\nc\nd\ne\nf\ng\n";

    #[test]
    fn parses_several_files_creation_and_deletion() {
        let text = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+one\n+two\n--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n";
        let files = parse(text).unwrap();
        assert_eq!(files.len(), 3);
        assert_eq!(files[0].path(), "x.py");
        assert_eq!(files[0].hunks[0].old_lines, ["a", "b"]);
        assert_eq!(files[0].hunks[0].new_lines, ["a", "B"]);
        assert_eq!(
            (files[1].old_path.as_deref(), files[1].path()),
            (None, "new.py")
        );
        assert_eq!(
            (files[2].new_path.as_deref(), files[2].path()),
            (None, "old.py")
        );
        assert_eq!(apply("", &files[1]).unwrap(), "one\ntwo\n");
    }

    #[test]
    fn hunks_apply_at_shifted_lines_but_only_on_an_exact_match() {
        let patch = parse("--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n c\n-d\n+D\n e\n").unwrap();
        assert_eq!(apply(FILE, &patch[0]).unwrap(), "a\nb\nc\nD\ne\nf\ng\n");
        let wrong = parse("--- a/f\n+++ b/f\n@@ -3,2 +3,2 @@\n c\n-x\n+D\n").unwrap();
        let err = apply(FILE, &wrong[0]).unwrap_err();
        assert!(
            err.contains("does not match") && err.contains("\"x\""),
            "{err}"
        );
    }

    #[test]
    fn two_hunks_and_a_missing_final_newline() {
        let patch =
            parse("--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n+a2\n b\n@@ -6,2 +7,2 @@\n f\n-g\n+G\n")
                .unwrap();
        assert_eq!(apply(FILE, &patch[0]).unwrap(), "a\na2\nb\nc\nd\ne\nf\nG\n");
        assert_eq!(
            apply(
                "a\nb",
                &parse("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+A\n").unwrap()[0]
            )
            .unwrap(),
            "A\nb"
        );
    }

    #[test]
    fn bad_patches_are_clear_errors() {
        assert!(parse("just text").unwrap_err().contains("no file headers"));
        assert!(parse("--- a/f\n@@ -1 +1 @@\n").unwrap_err().contains("+++"));
        assert!(
            parse("--- a/f\n+++ b/f\n@@ nonsense @@\n")
                .unwrap_err()
                .contains("bad hunk header")
        );
        let cut = parse("--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n a\n-b\n").unwrap();
        assert!(apply(FILE, &cut[0]).unwrap_err().contains("ends early"));
        assert!(
            parse("--- a/f\n+++ b/f\n")
                .unwrap_err()
                .contains("no hunks")
        );
        assert!(
            parse("--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+x\n")
                .unwrap_err()
                .contains("both sides")
        );
    }
}
