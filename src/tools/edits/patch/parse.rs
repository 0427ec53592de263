//! Reading unified-diff text into [`FilePatch`]es: file headers, git's
//! `diff --git` sections, and the text around them (hunks are read by
//! `hunk`). What must stay true: no line that looks like a hunk line (`' '`,
//! `-`, `+`) is ever skipped outside a hunk, so a hunk is never cut
//! silently; a `diff --git` section without `---`/`+++` lines (mode-only,
//! binary, empty file) is refused rather than dropped; sections of one file
//! are merged into one [`FilePatch`].

use super::FilePatch;
use super::hunk::{file_header, is_change_line, parse_hunk};

/// Parse a unified diff of one or more files.
pub fn parse(text: &str) -> Result<Vec<FilePatch>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut files: Vec<FilePatch> = Vec::new();
    let mut current: Option<usize> = None;
    // A `diff --git` line still waiting for its `---`/`+++` headers.
    let mut git_header: Option<&str> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some((old, new)) = file_header(&lines, i) {
            git_header = None;
            current = Some(open_section(&mut files, old, new, i)?);
            i += 2;
        } else if line.starts_with("--- ") {
            return Err(format!(
                "line {}: `{line}` must be followed by a `+++ ` line",
                i + 1
            ));
        } else if line.starts_with("@@") {
            let Some(at) = current else {
                return Err(format!(
                    "line {}: hunk {line:?} comes before any `--- a/PATH` / `+++ b/PATH` header",
                    i + 1
                ));
            };
            let (hunk, next, warning) = parse_hunk(&lines, i, files[at].path())?;
            files[at].hunks.push(hunk);
            files[at].warnings.extend(warning);
            i = next;
        } else if line.starts_with("diff ") {
            if let Some(pending) = git_header {
                return Err(no_headers(pending));
            }
            git_header = Some(line);
            current = None;
            i += 1;
        } else if let Some(at) = current.filter(|_| is_change_line(line)) {
            return Err(format!(
                "{}: line {} ({line:?}) is not part of any hunk: every line of a hunk starts with \
                 ' ', '-' or '+' (an empty context line is a single space) and comes right after \
                 its `@@` header or the line before it",
                files[at].path(),
                i + 1
            ));
        } else {
            // Prose, code fences and git's `index`/mode lines between files.
            i += 1;
        }
    }
    if let Some(pending) = git_header {
        return Err(no_headers(pending));
    }
    if files.is_empty() {
        return Err(
            "no file headers found; a patch starts with `--- a/PATH` and `+++ b/PATH`".into(),
        );
    }
    if let Some(empty) = files.iter().find(|f| f.hunks.is_empty()) {
        return Err(format!(
            "{}: no hunks (`@@ ... @@`) after the file header",
            empty.path()
        ));
    }
    Ok(files)
}

fn no_headers(diff_line: &str) -> String {
    format!(
        "`{diff_line}` has no `---`/`+++` lines: mode-only, rename-only, binary and empty-file changes are \
         not supported; write a unified diff with `--- a/PATH`, `+++ b/PATH` and `@@` hunks"
    )
}

/// The index of the section for these paths: an earlier one (a file split
/// over several sections) or a new one.
fn open_section(
    files: &mut Vec<FilePatch>,
    old: &str,
    new: &str,
    i: usize,
) -> Result<usize, String> {
    let (old_path, new_path) = (patch_path(old), patch_path(new));
    if old_path.is_none() && new_path.is_none() {
        return Err(format!("line {}: both sides are /dev/null", i + 2));
    }
    if let Some(at) = files
        .iter()
        .position(|f| f.old_path == old_path && f.new_path == new_path)
    {
        return Ok(at);
    }
    files.push(FilePatch {
        old_path,
        new_path,
        hunks: Vec::new(),
        warnings: Vec::new(),
    });
    Ok(files.len() - 1)
}

fn patch_path(raw: &str) -> Option<String> {
    let path = raw.split('\t').next().unwrap_or(raw).trim();
    if path == "/dev/null" {
        return None;
    }
    let path = path
        .strip_prefix("a/")
        .or_else(|| path.strip_prefix("b/"))
        .unwrap_or(path);
    Some(path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> FilePatch {
        let mut files = parse(text).unwrap();
        assert_eq!(files.len(), 1);
        files.remove(0)
    }

    #[test]
    fn bare_headers_and_trailing_prose() {
        let f = one("--- a/f\n+++ b/f\n@@\n a\n-b\n+B\n\n```\n@@ ... @@\n-c\n+C\n");
        assert_eq!(f.hunks.len(), 2);
        assert_eq!(f.hunks[0].hint, None);
        assert_eq!(
            f.hunks[0].old_lines,
            ["a", "b"],
            "the blank line is no context"
        );
        assert_eq!(f.hunks[1].new_lines, ["C"]);
        assert!(f.warnings.is_empty());
    }
    #[test]
    fn hunk_lines_outside_a_hunk_are_refused_not_skipped() {
        let err = parse("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\nnot indented\n c\n+d\n")
            .unwrap_err();
        assert!(err.contains("not part of any hunk"), "{err}");
    }
    #[test]
    fn sections_of_one_file_are_merged_and_headers_hint_the_old_line() {
        let text = "--- a/f\n+++ b/f\n@@ -7,1 +7,1 @@\n-x\n+X\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-g\n+G\n--- a/f\n+++ b/f\n@@ -3,0 +4 @@\n+new\n";
        let files = parse(text).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].hunks.len(), 2);
        assert_eq!(files[0].hunks[0].hint, Some(6));
        assert_eq!(
            files[0].hunks[1].hint,
            Some(3),
            "a 0 count goes after line 3"
        );
    }
    #[test]
    fn git_sections_without_file_headers_are_refused() {
        let err = parse("diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\n")
            .unwrap_err();
        assert!(
            err.contains("empty-file changes are not supported"),
            "{err}"
        );
    }
}
