//! The live preview of an `apply_patch` whose `patch` argument is still
//! streaming: what has arrived is read as a unified diff, as far as it goes,
//! into one `FileDiff` per file, straight from the patch's own lines (no file
//! is read). The last hunk may be cut short; the diff pane marks the preview
//! as still streaming.
//!
//! What must stay true: any prefix of any text (cut anywhere, malformed, any
//! Unicode) gives files or nothing, never a panic and never an error the user
//! must dismiss (proptest below); a file shows only once it has a hunk with a
//! change in it.

use crate::diff::{DiffLine, FileDiff, Hunk, LineKind};

/// The files and hunks of the partial patch `text`, so far; empty when no
/// hunk with a change has arrived yet.
pub fn partial_patch(text: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    // `--- ` seen, waiting for its `+++ `.
    let mut old_path: Option<Option<String>> = None;
    // Within a hunk: the next old and new line numbers.
    let mut at: Option<(usize, usize)> = None;
    let complete_lines = match text.rfind('\n') {
        Some(end) => &text[..end],
        None => "",
    };
    // The last line (no newline yet) is shown too, if it is a hunk line.
    let tail = &text[complete_lines.len()..].trim_start_matches('\n');
    for line in complete_lines.lines().chain(std::iter::once(*tail)) {
        if let Some(rest) = line
            .strip_prefix("--- ")
            .filter(|_| at.is_none() || is_header(line))
        {
            old_path = Some(path_of(rest));
            at = None;
            continue;
        }
        if let (Some(rest), Some(old)) = (line.strip_prefix("+++ "), old_path.take()) {
            let new = path_of(rest);
            let path = new.clone().or(old.clone()).unwrap_or_default();
            files.push(FileDiff {
                path,
                new_file: old.is_none(),
                added: 0,
                removed: 0,
                hunks: Vec::new(),
            });
            continue;
        }
        if line.starts_with("@@") {
            at = None;
            if let (Some(file), Some((o, n))) = (files.last_mut(), hunk_start(line)) {
                file.hunks.push(Hunk {
                    old_start: o,
                    old_len: 0,
                    new_start: n,
                    new_len: 0,
                    lines: Vec::new(),
                });
                at = Some((o.max(1), n.max(1)));
            }
            continue;
        }
        let (Some((o, n)), Some(file)) = (at.as_mut(), files.last_mut()) else {
            continue;
        };
        let Some(hunk) = file.hunks.last_mut() else {
            continue;
        };
        let (kind, text) = match line.chars().next() {
            Some(' ') => (LineKind::Context, &line[1..]),
            Some('-') => (LineKind::Removed, &line[1..]),
            Some('+') => (LineKind::Added, &line[1..]),
            // An empty line in a hunk is an empty context line.
            None => (LineKind::Context, ""),
            _ => {
                at = None;
                continue;
            }
        };
        let (old_no, new_no) = match kind {
            LineKind::Context => (Some(*o), Some(*n)),
            LineKind::Removed => (Some(*o), None),
            LineKind::Added => (None, Some(*n)),
        };
        *o += usize::from(old_no.is_some());
        *n += usize::from(new_no.is_some());
        hunk.old_len += usize::from(old_no.is_some());
        hunk.new_len += usize::from(new_no.is_some());
        file.added += usize::from(kind == LineKind::Added);
        file.removed += usize::from(kind == LineKind::Removed);
        hunk.lines.push(DiffLine {
            kind,
            old_no,
            new_no,
            text: text.to_string(),
        });
    }
    for file in &mut files {
        file.hunks
            .retain(|h| h.lines.iter().any(|l| l.kind != LineKind::Context));
    }
    files.retain(|f| !f.hunks.is_empty());
    files
}

/// A `--- ` line that starts a file rather than removing a line `-- …`
/// (inside a hunk, only `--- a/…` and `--- /dev/null` count).
fn is_header(line: &str) -> bool {
    line.starts_with("--- a/") || line.starts_with("--- /dev/null")
}

/// The path a `---`/`+++` line names (`None` for `/dev/null`).
fn path_of(rest: &str) -> Option<String> {
    let name = rest.split('\t').next().unwrap_or("").trim_end();
    if name == "/dev/null" {
        return None;
    }
    let name = name
        .strip_prefix("a/")
        .or_else(|| name.strip_prefix("b/"))
        .unwrap_or(name);
    Some(name.to_string())
}

/// The old and new start lines of an `@@ -a,b +c,d @@` header (a bare `@@`
/// starts at line 1 of both, as far as the preview can tell).
fn hunk_start(line: &str) -> Option<(usize, usize)> {
    let body = line.trim_start_matches('@').trim_start();
    if body.is_empty() {
        return Some((1, 1));
    }
    let mut parts = body.split_whitespace();
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let start = |s: &str| s.split(',').next()?.parse::<usize>().ok();
    Some((start(old)?, start(new)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PATCH: &str = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -10,2 +10,3 @@\n j\n+k2\n k\n--- /dev/null\n+++ b/new.md\n@@ -0,0 +1,2 @@\n+# New\n+text\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n";

    #[test]
    fn a_whole_patch_reads_as_its_files_and_hunks() {
        let files = partial_patch(PATCH);
        let got: Vec<(&str, bool, usize, usize, usize)> = files
            .iter()
            .map(|f| {
                (
                    f.path.as_str(),
                    f.new_file,
                    f.hunks.len(),
                    f.added,
                    f.removed,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("x.py", false, 2, 2, 1),
                ("new.md", true, 1, 2, 0),
                ("old.txt", false, 1, 0, 1)
            ]
        );
        let second = &files[0].hunks[1];
        assert_eq!(second.lines[1].new_no, Some(11));
        assert_eq!(second.lines[2].old_no, Some(11));
    }

    #[test]
    fn a_cut_patch_shows_what_arrived_and_a_headerless_one_nothing() {
        let cut = &PATCH[..PATCH.find("+B").unwrap() + 2];
        let files = partial_patch(cut);
        assert_eq!(files.len(), 1);
        assert_eq!((files[0].added, files[0].removed), (1, 1), "{files:?}");
        assert!(partial_patch("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n").is_empty());
        assert!(partial_patch("just text\n-not a hunk\n").is_empty());
        assert!(partial_patch("--- a/x\n+++ b/x\n@@ nonsense @@\n-a\n").is_empty());
    }

    proptest! {
        #[test]
        fn any_prefix_of_a_real_patch_never_panics(cut in 0usize..400) {
            let mut end = cut.min(PATCH.len());
            while !PATCH.is_char_boundary(end) {
                end -= 1;
            }
            let files = partial_patch(&PATCH[..end]);
            prop_assert!(files.len() <= 3);
            for f in &files {
                prop_assert!(!f.hunks.is_empty());
            }
        }

        #[test]
        fn any_text_never_panics(text in "\\PC*", lines in proptest::collection::vec("[-+ @]{0,3}[^\\n]{0,8}", 0..20)) {
            let _ = partial_patch(&text);
            let _ = partial_patch(&lines.join("\n"));
        }
    }
}
