//! One hunk of a unified diff: its `@@` header, where its lines end, and
//! its lines with their `\ No newline at end of file` markers. What must
//! stay true: a hunk ends where its lines end (the next `@@`, a `--- `/`+++ `
//! pair, a `diff ` line or text that is no hunk line); the header counts are
//! believed only when they end it exactly there (so a removed `-- x` and an
//! added `++ y` line stay lines), otherwise the hunk is recounted with a
//! warning; a hunk that stops at the very end of the patch short of its
//! counts may be cut, so it carries the refusal that `apply` gives unless
//! the file shows it is whole (it ends in context, or at the file's end).

use super::{HunkLine, LineOp, PatchHunk, Short};

/// A `--- ` line followed by a `+++ ` line: the two paths.
pub(super) fn file_header<'a>(lines: &[&'a str], i: usize) -> Option<(&'a str, &'a str)> {
    let old = lines.get(i)?.strip_prefix("--- ")?;
    let new = lines.get(i + 1)?.strip_prefix("+++ ")?;
    Some((old, new))
}

/// A line that can only be part of a hunk.
pub(super) fn is_change_line(line: &str) -> bool {
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
pub(super) fn parse_hunk(
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
    let mut short = None;
    let end = match (&header, counted) {
        (_, Some(counted)) => counted,
        (None, None) => trim_blank_tail(lines, start, end),
        (Some(h), None) => {
            let end = trim_blank_tail(lines, start, end);
            let (old, new) = count(&lines[start..end]);
            let at_patch_end = (end..lines.len()).all(|j| lines[j].is_empty());
            if at_patch_end && (old < h.old_count || new < h.new_count) {
                short = Some(Short {
                    old_missing: h.old_count.saturating_sub(old),
                    new_missing: h.new_count.saturating_sub(new),
                    refusal: format!(
                        "{path}: hunk {header_line} ends early (the patch may be cut): its header \
                     counts {} old and {} new lines, the patch ends after {old} and {new}, and \
                     nothing shows that the rest of the hunk is not missing. If the patch is \
                     complete, correct the counts",
                        h.old_count, h.new_count
                    ),
                });
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
    hunk.short = short;
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
        short: None,
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
    use super::super::{FilePatch, parse};

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
    fn a_last_hunk_short_of_its_counts_may_be_cut() {
        let f = one("--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n");
        assert_eq!(f.hunks[0].old_lines, ["a", "b"]);
        let short = f.hunks[0].short.clone().unwrap();
        assert!(short.refusal.contains("ends early"), "{short:?}");
        assert_eq!((short.old_missing, short.new_missing), (3, 3));
        assert_eq!(f.warnings.len(), 1);
        let whole = one("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n");
        assert_eq!(whole.hunks[0].short, None);
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
}
