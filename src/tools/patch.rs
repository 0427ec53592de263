//! `apply_patch`: standard unified diffs (`--- a/path`, `+++ b/path`, `@@`
//! hunks), several files at once, creating (`--- /dev/null`) and deleting
//! (`+++ /dev/null`) files. Parsing and applying are pure functions; a hunk's
//! lines must match the file exactly, though they may sit at a shifted line
//! number. (Hand-written: the crates at hand parse one file per patch or pull
//! in a parser stack, and none applies the exact-context rule with errors that
//! quote what did not match.)

/// One file's part of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// `None` for `/dev/null`: the patch creates the file.
    pub old_path: Option<String>,
    /// `None` for `/dev/null`: the patch deletes the file.
    pub new_path: Option<String>,
    pub hunks: Vec<PatchHunk>,
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchHunk {
    pub header: String,
    /// 1-based line the hunk claims to start at in the old file.
    pub old_start: usize,
    /// Context and removed lines, in order.
    pub old_lines: Vec<String>,
    /// Context and added lines, in order.
    pub new_lines: Vec<String>,
}

/// Parse a unified diff of one or more files.
pub fn parse(text: &str) -> Result<Vec<FilePatch>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut files = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(old) = lines[i].strip_prefix("--- ") else {
            i += 1;
            continue;
        };
        let new = lines
            .get(i + 1)
            .and_then(|l| l.strip_prefix("+++ "))
            .ok_or_else(|| {
                format!(
                    "line {}: `--- {old}` must be followed by a `+++ ` line",
                    i + 1
                )
            })?;
        i += 2;
        let mut file = FilePatch {
            old_path: patch_path(old),
            new_path: patch_path(new),
            hunks: Vec::new(),
        };
        if file.old_path.is_none() && file.new_path.is_none() {
            return Err(format!("line {i}: both sides are /dev/null"));
        }
        while let Some(header) = lines.get(i).filter(|l| l.starts_with("@@")) {
            let (old_start, old_count, new_count) = parse_header(header).ok_or_else(|| {
                format!(
                    "line {}: bad hunk header {header:?}; expected `@@ -a,b +c,d @@`",
                    i + 1
                )
            })?;
            i += 1;
            let hunk = hunk_body(
                &lines,
                &mut i,
                header,
                file.path(),
                old_start,
                (old_count, new_count),
            )?;
            file.hunks.push(hunk);
        }
        if file.hunks.is_empty() {
            return Err(format!(
                "{}: no hunks (`@@ ... @@`) after the file header",
                file.path()
            ));
        }
        files.push(file);
    }
    if files.is_empty() {
        return Err(
            "no file headers found; a patch starts with `--- a/PATH` and `+++ b/PATH`".into(),
        );
    }
    Ok(files)
}

/// The lines of one hunk from `lines[*i]` on, until both sides have their
/// counts; `*i` is left after them (and after any `\ No newline` marker).
fn hunk_body(
    lines: &[&str],
    i: &mut usize,
    header: &str,
    path: &str,
    old_start: usize,
    (old_count, new_count): (usize, usize),
) -> Result<PatchHunk, String> {
    let mut hunk = PatchHunk {
        header: header.to_string(),
        old_start,
        old_lines: Vec::new(),
        new_lines: Vec::new(),
    };
    while hunk.old_lines.len() < old_count || hunk.new_lines.len() < new_count {
        let Some(line) = lines.get(*i) else {
            return Err(format!(
                "{}: hunk {header} ends early (the patch is cut)",
                path
            ));
        };
        match line.chars().next() {
            Some(' ') | None => {
                let text = line.get(1..).unwrap_or("").to_string();
                hunk.old_lines.push(text.clone());
                hunk.new_lines.push(text);
            }
            Some('-') => hunk.old_lines.push(line[1..].to_string()),
            Some('+') => hunk.new_lines.push(line[1..].to_string()),
            Some('\\') => {}
            Some(_) => {
                return Err(format!(
                    "{}: line {} of hunk {header} starts with neither ' ', '-' nor '+': {line:?}",
                    path,
                    *i + 1
                ));
            }
        }
        *i += 1;
    }
    // "\ No newline at end of file" after the last line.
    while lines.get(*i).is_some_and(|l| l.starts_with('\\')) {
        *i += 1;
    }
    Ok(hunk)
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

/// `@@ -12,4 +12,6 @@ text` → (12, 4, 6); a missing count means 1.
fn parse_header(header: &str) -> Option<(usize, usize, usize)> {
    let inner = header.strip_prefix("@@ ")?.split(" @@").next()?;
    let mut parts = inner.split_whitespace();
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (old_start, old_count) = range(old)?;
    let (_, new_count) = range(new)?;
    Some((old_start, old_count, new_count))
}

/// Apply a file's hunks to its content (LF text). Every hunk's old lines must
/// be found exactly; the search starts at the claimed line and moves outward.
pub fn apply(content: &str, patch: &FilePatch) -> Result<String, String> {
    let ends_with_newline = content.is_empty() || content.ends_with('\n');
    let mut lines: Vec<String> = content.lines().map(str::to_string).collect();
    let mut cursor = 0usize;
    let mut offset: isize = 0;
    for hunk in &patch.hunks {
        let want = &hunk.old_lines;
        let hint = (hunk.old_start.saturating_sub(1) as isize + offset).max(0) as usize;
        let at = if want.is_empty() {
            Some(hint.min(lines.len()).max(cursor))
        } else {
            find_near(&lines, want, hint, cursor)
        };
        let Some(at) = at else {
            return Err(mismatch(patch.path(), hunk, &lines, hint));
        };
        lines.splice(at..at + want.len(), hunk.new_lines.iter().cloned());
        cursor = at + hunk.new_lines.len();
        offset += hunk.new_lines.len() as isize - want.len() as isize;
    }
    let mut out = lines.join("\n");
    if !lines.is_empty() && (ends_with_newline || patch.old_path.is_none()) {
        out.push('\n');
    }
    Ok(out)
}

fn find_near(lines: &[String], want: &[String], hint: usize, from: usize) -> Option<usize> {
    let last = lines.len().checked_sub(want.len())?;
    let fits = |at: usize| at >= from && at <= last && lines[at..at + want.len()] == *want;
    (0..=lines.len()).find_map(|d| {
        if hint >= d && fits(hint - d) {
            Some(hint - d)
        } else if fits(hint + d) {
            Some(hint + d)
        } else {
            None
        }
    })
}

/// An error quoting the hunk lines that do not match the file at the claimed place.
fn mismatch(path: &str, hunk: &PatchHunk, lines: &[String], hint: usize) -> String {
    let mut report = Vec::new();
    for (k, want) in hunk.old_lines.iter().enumerate() {
        let have = lines.get(hint + k);
        if have != Some(want) {
            report.push(format!(
                "  line {}: patch expects {:?}, file has {}",
                hint + k + 1,
                want,
                have.map_or("nothing (end of file)".to_string(), |h| format!("{h:?}"))
            ));
        }
        if report.len() >= 5 {
            break;
        }
    }
    format!(
        "hunk {} of {path} does not match the file (its context and removed lines must match exactly; nothing was changed). At line {}:\n{}\nRead the file again and rebuild the patch.",
        hunk.header,
        hint + 1,
        report.join("\n")
    )
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
        assert!(
            parse("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n")
                .unwrap_err()
                .contains("ends early")
        );
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
