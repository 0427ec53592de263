//! Reading unified-diff text into [`FilePatch`]es. A hunk ends where its
//! lines end (the next `@@`, `--- `/`+++ ` pair, `diff ` line or non-hunk
//! text), never where its `@@` counts say: the counts are believed only when
//! they land exactly on such an end; otherwise the hunk is recounted and a
//! warning says so. What must stay true: no line that looks like a hunk line
//! (`' '`, `-`, `+`) is ever skipped, so a hunk is never cut silently; a
//! patch that stops inside its last hunk is refused as cut; sections of one
//! file are merged into one [`FilePatch`].

use super::{FilePatch, HunkLine, LineOp, PatchHunk};

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
        "`{diff_line}` has no `---`/`+++` lines: mode-only, binary and empty-file changes are \
         not supported; write a unified diff with `--- a/PATH`, `+++ b/PATH` and `@@` hunks"
    )
}

/// A `--- ` line followed by a `+++ ` line: the two paths.
fn file_header<'a>(lines: &[&'a str], i: usize) -> Option<(&'a str, &'a str)> {
    let old = lines.get(i)?.strip_prefix("--- ")?;
    let new = lines.get(i + 1)?.strip_prefix("+++ ")?;
    Some((old, new))
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

/// A line that can only be part of a hunk.
fn is_change_line(line: &str) -> bool {
    line.starts_with([' ', '-', '+'])
}

/// A line a hunk may hold: a change line, an empty context line, a `\` marker.
fn is_hunk_line(line: &str) -> bool {
    line.is_empty() || is_change_line(line) || line.starts_with('\\')
}

/// Where a hunk must end: another hunk, another file, a `diff ` line.
fn is_boundary(lines: &[&str], i: usize) -> bool {
    let line = lines[i];
    line.starts_with("@@") || line.starts_with("diff ") || file_header(lines, i).is_some()
}

/// The counts a `@@` header states, if it states any.
struct Header {
    /// The 1-based old start line as written.
    start: usize,
    old_count: usize,
    new_count: usize,
}

/// `@@ -12,4 +12,6 @@ text` → start 12, counts 4 and 6 (a missing count
/// means 1). `@@`, `@@ @@` and `@@ ... @@` are bare headers: `Ok(None)`.
fn parse_header(header: &str) -> Result<Option<Header>, ()> {
    let inner = header.strip_prefix("@@").ok_or(())?.trim();
    if inner.is_empty() || inner == "@@" || inner.starts_with("...") {
        return Ok(None);
    }
    let inner = inner.split("@@").next().ok_or(())?;
    let mut parts = inner.split_whitespace();
    let old = parts.next().and_then(|p| p.strip_prefix('-')).ok_or(())?;
    let new = parts.next().and_then(|p| p.strip_prefix('+')).ok_or(())?;
    let range = |r: &str| -> Result<(usize, usize), ()> {
        let (start, count) = r.split_once(',').unwrap_or((r, "1"));
        Ok((
            start.parse().map_err(|_| ())?,
            count.parse().map_err(|_| ())?,
        ))
    };
    let (old_start, old_count) = range(old)?;
    let (_, new_count) = range(new)?;
    Ok(Some(Header {
        start: old_start,
        old_count,
        new_count,
    }))
}

/// Old and new line counts of hunk lines.
fn count(body: &[&str]) -> (usize, usize) {
    body.iter()
        .fold((0, 0), |(o, n), l| match l.chars().next() {
            Some(' ') | None => (o + 1, n + 1),
            Some('-') => (o + 1, n),
            Some('+') => (o, n + 1),
            _ => (o, n),
        })
}

/// The end (exclusive) of the hunk body starting at `start` if the header's
/// counts end it exactly where its lines end.
fn counted_end(lines: &[&str], start: usize, header: &Header) -> Option<usize> {
    let mut end = start;
    let (mut old, mut new) = (0, 0);
    while old < header.old_count || new < header.new_count {
        // A `--- `/`+++ ` pair inside the counts is a removed and an added line.
        let line = lines.get(end).filter(|l| is_hunk_line(l))?;
        (old, new) = {
            let (o, n) = count(&[line]);
            (old + o, new + n)
        };
        end += 1;
    }
    if (old, new) != (header.old_count, header.new_count) {
        return None;
    }
    while lines.get(end).is_some_and(|l| l.starts_with('\\')) {
        end += 1;
    }
    // What follows must not be more hunk lines, blank lines before a boundary aside.
    let rest = (end..lines.len())
        .find(|&j| !lines[j].is_empty())
        .unwrap_or(lines.len());
    let continues = rest < lines.len() && !is_boundary(lines, rest) && is_hunk_line(lines[rest]);
    (!continues).then_some(end)
}

/// One hunk starting at the `@@` line `at`: the hunk, the index after it, and
/// a warning when its header counts were wrong.
fn parse_hunk(
    lines: &[&str],
    at: usize,
    path: &str,
) -> Result<(PatchHunk, usize, Option<String>), String> {
    let header_line = lines[at];
    let header = parse_header(header_line).map_err(|()| {
        format!(
            "line {}: bad hunk header {header_line:?}; expected `@@ -a,b +c,d @@` (or a bare `@@`)",
            at + 1
        )
    })?;
    let start = at + 1;
    let mut end = start;
    while end < lines.len() && !is_boundary(lines, end) && is_hunk_line(lines[end]) {
        end += 1;
    }
    let counted = header.as_ref().and_then(|h| counted_end(lines, start, h));
    let mut warning = None;
    let end = match (&header, counted) {
        (_, Some(counted)) => counted,
        (None, None) => trim_blank_tail(lines, start, end),
        (Some(h), None) => {
            let end = trim_blank_tail(lines, start, end);
            let (old, new) = count(&lines[start..end]);
            let at_patch_end = (end..lines.len()).all(|j| lines[j].is_empty());
            if at_patch_end && (old < h.old_count || new < h.new_count) {
                return Err(format!(
                    "{path}: hunk {header_line} ends early (the patch is cut): its header counts \
                     {} old and {} new lines, the patch ends after {old} and {new}. If the patch \
                     is complete, correct the counts",
                    h.old_count, h.new_count
                ));
            }
            warning = Some(format!(
                "{path}: hunk {header_line} has {old} old and {new} new lines, not the {} and {} \
                 its header counts; it was read by its lines",
                h.old_count, h.new_count
            ));
            end
        }
    };
    let mut hunk = build_hunk(header_line, &lines[start..end], path)?;
    hunk.hint = header.map(|h| hint(&h, hunk.old_lines.len()));
    Ok((hunk, end, warning))
}

/// The 0-based old line a header points at. A count of 0 means the hunk
/// goes after the start line, but only a hunk without old lines really has
/// that count: with old lines, a 0 count is a miscount and the start is the
/// first old line, as it is for every other count.
fn hint(header: &Header, old_lines: usize) -> usize {
    if header.old_count == 0 && old_lines == 0 {
        header.start
    } else {
        header.start.saturating_sub(1)
    }
}

/// `end` moved back over trailing empty lines (blank lines after a hunk).
fn trim_blank_tail(lines: &[&str], start: usize, mut end: usize) -> usize {
    while end > start && lines[end - 1].is_empty() {
        end -= 1;
    }
    end
}

fn build_hunk(header: &str, body: &[&str], path: &str) -> Result<PatchHunk, String> {
    let mut hunk = PatchHunk {
        header: header.to_string(),
        hint: None,
        body: Vec::new(),
        old_lines: Vec::new(),
        new_lines: Vec::new(),
        old_no_newline: false,
        new_no_newline: false,
    };
    for line in body {
        let text = line.get(1..).unwrap_or("").to_string();
        let op = match line.chars().next() {
            Some(' ') | None => LineOp::Context,
            Some('-') => LineOp::Removed,
            Some('+') => LineOp::Added,
            _ => {
                mark_no_newline(&mut hunk, path)?;
                continue;
            }
        };
        if hunk.old_no_newline && op != LineOp::Added || hunk.new_no_newline {
            return Err(format!(
                "{path}: in hunk {header}, `\\ No newline at end of file` must follow the last \
                 line of the old or the new file, but more lines follow it"
            ));
        }
        if op != LineOp::Added {
            hunk.old_lines.push(text.clone());
        }
        if op != LineOp::Removed {
            hunk.new_lines.push(text.clone());
        }
        hunk.body.push(HunkLine { op, text });
    }
    if hunk.body.is_empty() {
        return Err(format!("{path}: hunk {header} has no lines"));
    }
    Ok(hunk)
}

/// A `\ No newline at end of file` line: the line before it is its side's last.
fn mark_no_newline(hunk: &mut PatchHunk, path: &str) -> Result<(), String> {
    match hunk.body.last().map(|l| l.op) {
        Some(LineOp::Context) => {
            hunk.old_no_newline = true;
            hunk.new_no_newline = true;
        }
        Some(LineOp::Removed) => hunk.old_no_newline = true,
        Some(LineOp::Added) => hunk.new_no_newline = true,
        None => {
            return Err(format!(
                "{path}: hunk {} starts with a `\\` line; `\\ No newline at end of file` follows \
                 the line it is about",
                hunk.header
            ));
        }
    }
    Ok(())
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
    fn a_count_too_small_does_not_cut_the_hunk() {
        // Claims 2 old and 2 new lines; the hunk has 3 and 3.
        let f = one("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n c\n");
        assert_eq!(f.hunks[0].old_lines, ["a", "b", "c"]);
        assert_eq!(f.hunks[0].new_lines, ["a", "B", "c"]);
        assert_eq!(f.warnings.len(), 1);
        assert!(
            f.warnings[0].contains("3 old and 3 new"),
            "{:?}",
            f.warnings
        );
    }

    #[test]
    fn a_count_too_large_reads_the_lines_up_to_the_next_hunk() {
        let f = one("--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n@@ -9,1 +9,1 @@\n-x\n+X\n");
        assert_eq!(f.hunks.len(), 2);
        assert_eq!(f.hunks[0].old_lines, ["a", "b"]);
        assert_eq!(f.hunks[1].old_lines, ["x"]);
        assert_eq!(f.warnings.len(), 1);
    }

    #[test]
    fn right_counts_are_trusted_over_lines_that_look_like_headers() {
        // Removing "-- a" and adding "++ b" writes `--- a` and `+++ b`.
        let f = one("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n--- a\n+++ b\n");
        assert_eq!(f.hunks[0].old_lines, ["x", "-- a"]);
        assert_eq!(f.hunks[0].new_lines, ["x", "++ b"]);
        assert!(f.warnings.is_empty());
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
    fn no_newline_markers_belong_to_their_side() {
        let f = one("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n");
        let h = &f.hunks[0];
        assert!(h.old_no_newline && !h.new_no_newline);
        let f = one("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n");
        assert!(!f.hunks[0].old_no_newline && f.hunks[0].new_no_newline);
        let f =
            one("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n\\ No newline at end of file\n");
        assert!(f.hunks[0].old_no_newline && f.hunks[0].new_no_newline);
        let err =
            parse("--- a/f\n+++ b/f\n@@ -1,2 +1 @@\n-a\n\\ No newline at end of file\n-b\n+c\n")
                .unwrap_err();
        assert!(err.contains("more lines follow"), "{err}");
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
