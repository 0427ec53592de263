//! Finding where a hunk goes. A hunk's old lines (context and removed) are
//! looked for in the whole file; a line matches exactly, or with different
//! trailing whitespace, or — for a line holding a hidden credential — as the
//! model saw it (with the redaction marker); a `\r` counts as trailing
//! whitespace. What must stay true: a hunk is
//! placed only where it matches at exactly the line its header names, or at
//! the one place it matches; several places or none is a refusal that quotes
//! the first mismatching line at the closest place. No other fuzz: leading
//! whitespace, tabs against spaces and any other difference do not match.

use super::PatchHunk;
use crate::tools::redact::{MARKER, redact};
use std::ops::Range;

/// The file being patched, split into lines (LF text).
pub struct FileLines<'a> {
    pub lines: Vec<&'a str>,
    /// Byte offset of each line, and the text's length last.
    pub starts: Vec<usize>,
    /// The line as `read_file` showed it, where that differs.
    views: Vec<Option<String>>,
    /// Byte ranges of the values hidden from the model.
    pub hidden: Vec<Range<usize>>,
    pub ends_with_newline: bool,
}

impl<'a> FileLines<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut lines: Vec<&str> = text.split('\n').collect();
        if text.is_empty() || text.ends_with('\n') {
            lines.pop();
        }
        let mut starts = Vec::with_capacity(lines.len() + 1);
        let mut at = 0;
        for line in &lines {
            starts.push(at);
            at = (at + line.len() + 1).min(text.len());
        }
        starts.push(text.len());
        let hidden = redact(text).hidden;
        let views = (0..lines.len())
            .map(|i| view_of(text, starts[i]..starts[i] + lines[i].len(), &hidden))
            .collect();
        FileLines {
            lines,
            starts,
            views,
            hidden,
            ends_with_newline: text.is_empty() || text.ends_with('\n'),
        }
    }

    /// How line `i` matches `want`, if it does.
    pub fn matches(&self, i: usize, want: &str) -> Option<Fit> {
        let have = self.lines.get(i)?;
        if *have == want {
            return Some(Fit::Exact);
        }
        if loose(have) == loose(want) {
            return Some(Fit::TrailingWhitespace);
        }
        let view = self.views.get(i)?.as_deref()?;
        (loose(view) == loose(want)).then_some(Fit::Hidden)
    }

    fn fits_at(&self, at: usize, hunk: &PatchHunk) -> bool {
        let want = &hunk.old_lines;
        at + want.len() <= self.lines.len()
            && (!hunk.old_no_newline
                || at + want.len() == self.lines.len() && !self.ends_with_newline)
            && want
                .iter()
                .enumerate()
                .all(|(k, w)| self.matches(at + k, w).is_some())
    }
}

/// A line without its trailing spaces and tabs (and the `\r` of a CRLF
/// line in a file that mixes line endings).
fn loose(line: &str) -> &str {
    line.trim_end_matches([' ', '\t', '\r'])
}

/// How a file line matched a patch line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    Exact,
    TrailingWhitespace,
    /// As the model saw it, a hidden value replaced by the marker.
    Hidden,
}

/// The line in `range` with the hidden parts replaced by [`MARKER`], if any.
fn view_of(text: &str, range: Range<usize>, hidden: &[Range<usize>]) -> Option<String> {
    let mut view = String::new();
    let mut at = range.start;
    for h in hidden
        .iter()
        .filter(|h| h.start < range.end.max(range.start + 1) && range.start < h.end)
    {
        let start = h.start.max(range.start);
        view.push_str(&text[at..start]);
        view.push_str(MARKER);
        at = h.end.min(range.end).max(at);
    }
    if view.is_empty() {
        return None; // no hidden value on this line
    }
    view.push_str(&text[at..range.end]);
    Some(view)
}

/// The 0-based line where `hunk`'s old lines go in `file`.
pub fn locate(file: &FileLines, hunk: &PatchHunk, path: &str) -> Result<usize, String> {
    let n = file.lines.len();
    if hunk.old_lines.is_empty() {
        return match hunk.hint {
            Some(at) if at <= n => Ok(at),
            Some(at) => Err(format!(
                "hunk {} of {path} adds lines after line {at}, but the file has {n} lines \
                 (nothing was changed); include a few unchanged lines around the addition",
                hunk.header
            )),
            None if n == 0 => Ok(0),
            None => Err(format!(
                "hunk {} of {path} has no context or removed lines and no line number, so there \
                 is no telling where it goes (nothing was changed); include a few unchanged lines \
                 around the addition",
                hunk.header
            )),
        };
    }
    let found: Vec<usize> = (0..n).filter(|&at| file.fits_at(at, hunk)).collect();
    match (hunk.hint, &found[..]) {
        (Some(hint), _) if found.contains(&hint) => Ok(hint),
        (_, [at]) => Ok(*at),
        (_, []) => Err(mismatch(file, hunk, path)),
        (_, several) => Err(ambiguous(hunk, path, several)),
    }
}

fn ambiguous(hunk: &PatchHunk, path: &str, found: &[usize]) -> String {
    let places: Vec<String> = found
        .iter()
        .take(5)
        .map(|at| (at + 1).to_string())
        .collect();
    let more = if found.len() > 5 { ", ..." } else { "" };
    let header = match hunk.hint {
        Some(hint) => format!("none of them at line {} where its header says", hint + 1),
        None => "and its header has no line number".to_string(),
    };
    format!(
        "hunk {} of {path} matches the file at {} places (lines {}{more}), {header} \
         (nothing was changed). Include more unchanged lines around the change so it matches \
         one place only",
        hunk.header,
        found.len(),
        places.join(", ")
    )
}

/// A refusal quoting the first mismatching lines at the closest place.
fn mismatch(file: &FileLines, hunk: &PatchHunk, path: &str) -> String {
    let want = &hunk.old_lines;
    let score = |at: usize| {
        (0..want.len())
            .filter(|&k| file.matches(at + k, &want[k]).is_some())
            .count()
    };
    let hint = hunk.hint.unwrap_or(0);
    let best = (0..file.lines.len().max(1))
        .max_by_key(|&at| (score(at), std::cmp::Reverse(at.abs_diff(hint))))
        .unwrap_or(0);
    let mut report = Vec::new();
    for (k, w) in want.iter().enumerate() {
        if file.matches(best + k, w).is_none() {
            let have = file.lines.get(best + k);
            report.push(format!(
                "  line {}: patch expects {:?}, file has {}",
                best + k + 1,
                w,
                have.map_or("nothing (end of file)".to_string(), |h| format!("{h:?}"))
            ));
        }
        if report.len() >= 5 {
            break;
        }
    }
    if report.is_empty() && hunk.old_no_newline {
        report.push(format!(
            "  the patch says the file's last line {:?} has no newline after it \
             (`\\ No newline at end of file`), but {}",
            want.last().map_or("", String::as_str),
            if file.ends_with_newline {
                "the file ends with a newline"
            } else {
                "these lines are not the file's last"
            }
        ));
    }
    let hidden = if want.iter().any(|w| w.contains(MARKER)) {
        format!(
            "\n{MARKER} stands for a value hidden from you; a line holding one matches only \
             exactly as read_file showed it."
        )
    } else {
        String::new()
    };
    format!(
        "hunk {} of {path} does not match the file (its context and removed lines must match \
         exactly, trailing whitespace aside; nothing was changed). The closest place is line {}:\n\
         {}{hidden}\nRead the file again and rebuild the patch.",
        hunk.header,
        best + 1,
        report.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    fn hunk(text: &str) -> PatchHunk {
        parse(&format!("--- a/f\n+++ b/f\n{text}")).unwrap()[0].hunks[0].clone()
    }

    #[test]
    fn a_line_number_past_the_end_of_a_short_file_still_finds_the_hunk() {
        let file = FileLines::new("a\nb\nc\n");
        assert_eq!(
            locate(&file, &hunk("@@ -90,2 +90,2 @@\n b\n-c\n+C\n"), "f"),
            Ok(1)
        );
    }

    #[test]
    fn several_matches_are_refused_unless_one_is_at_the_header_line() {
        let file = FileLines::new("x\nsame\ny\nsame\nz\n");
        assert_eq!(
            locate(&file, &hunk("@@ -4 +4 @@\n-same\n+SAME\n"), "f"),
            Ok(3)
        );
        let err = locate(&file, &hunk("@@ -3 +3 @@\n-same\n+SAME\n"), "f").unwrap_err();
        assert!(err.contains("2 places (lines 2, 4)"), "{err}");
        let err = locate(&file, &hunk("@@\n-same\n+SAME\n"), "f").unwrap_err();
        assert!(err.contains("no line number"), "{err}");
    }

    #[test]
    fn trailing_whitespace_is_loose_and_everything_else_is_exact() {
        let file = FileLines::new("def f():  \n\treturn 1\n");
        assert_eq!(file.matches(0, "def f():"), Some(Fit::TrailingWhitespace));
        assert_eq!(file.matches(1, "    return 1"), None, "tabs are not spaces");
        assert_eq!(file.matches(1, "\treturn  1"), None);
        let err = locate(
            &file,
            &hunk("@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"),
            "f",
        )
        .unwrap_err();
        assert!(
            err.contains("line 2: patch expects \"    return 1\""),
            "{err}"
        );
    }

    #[test]
    fn a_hidden_value_matches_as_the_model_saw_it() {
        let file = FileLines::new("x = 1\nself.password = password\n");
        let seen = format!("self.password = {MARKER}");
        assert_eq!(file.matches(1, &seen), Some(Fit::Hidden));
        assert_eq!(
            file.matches(1, "self.password = password"),
            Some(Fit::Exact)
        );
        assert_eq!(file.matches(0, "x = 1"), Some(Fit::Exact));
    }

    #[test]
    fn an_insertion_needs_a_place() {
        let file = FileLines::new("a\nb\n");
        assert_eq!(locate(&file, &hunk("@@ -2,0 +3 @@\n+c\n"), "f"), Ok(2));
        assert!(locate(&file, &hunk("@@ -9,0 +10 @@\n+c\n"), "f").is_err());
        assert!(locate(&file, &hunk("@@\n+c\n"), "f").is_err());
        assert_eq!(locate(&FileLines::new(""), &hunk("@@\n+c\n"), "f"), Ok(0));
    }
}
