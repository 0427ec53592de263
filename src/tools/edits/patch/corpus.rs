//! Generated patches: random files and random edits (final-newline changes
//! included), written as `git diff -U3` writes them, then with the mistakes
//! models make (counts off by one or two, bare `@@`, context without its
//! trailing whitespace, hunks reordered or split into sections). What must
//! stay true: every patch either yields exactly the intended bytes or is
//! refused; an unmistaken patch, or one whose line numbers are still right,
//! applies whatever its counts, unless it could be a cut patch (a last
//! hunk short of its counts, more on the new side than the old); at least
//! 95% of all apply. A second test runs the real `git diff --no-index`.

use super::{apply_checked, parse};
use crate::diff::{FileDiff, Hunk, LineKind, NO_NEWLINE};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRng, TestRunner};
use std::cell::Cell;

/// Lines with duplicates, trailing whitespace, indentation and lines that
/// look like file headers once signed (`--- ` and `+++ `).
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "line [0-9]",
        2 => "[a-c]{1,2}",
        1 => Just(String::new()),
        1 => "x[0-3]( |  |\t)",
        1 => "(\t|    )in[0-3]",
        1 => "(-- |\\+\\+ )c[0-2]",
    ]
}

/// Random lines, often followed by a copy of some of them (so that a hunk
/// can match at two places).
fn old_lines() -> impl Strategy<Value = Vec<String>> {
    (prop::collection::vec(line(), 0..24), 0usize..24, 0usize..12).prop_map(
        |(mut lines, from, len)| {
            let from = from.min(lines.len());
            let copy = lines[from..(from + len).min(lines.len())].to_vec();
            lines.extend(copy);
            lines
        },
    )
}

/// An old file and an edit of it, each with or without a final newline.
fn file_and_edit() -> impl Strategy<Value = (String, String)> {
    let old = (old_lines(), any::<bool>());
    (old, prop::collection::vec((0u8..10, line()), 0..40), 0u8..4).prop_map(
        |((old, old_nl), ops, nl)| {
            let mut new = Vec::new();
            let mut ops = ops.into_iter();
            for l in &old {
                match ops.next() {
                    Some((0, _)) => {}                                // delete
                    Some((1, text)) => new.push(text),                // replace
                    Some((2, text)) => new.extend([text, l.clone()]), // insert before
                    _ => new.push(l.clone()),
                }
            }
            new.extend(ops.filter(|(op, _)| *op < 3).map(|(_, t)| t));
            // Flip the final newline a quarter of the time.
            let new_nl = if nl == 0 { !old_nl } else { old_nl };
            (join(&old, old_nl), join(&new, new_nl))
        },
    )
}

fn join(lines: &[String], newline: bool) -> String {
    let mut text = lines.join("\n");
    if newline && !lines.is_empty() {
        text.push('\n');
    }
    text
}

/// The mistakes a model makes in a patch.
#[derive(Debug, Clone, Default)]
struct Mistakes {
    /// Added to each hunk's old and new counts.
    counts: Vec<(i8, i8)>,
    bare: bool,
    strip: bool,
    /// Hunks rotated by this much.
    rotate: usize,
    split: bool,
}

fn mistakes() -> impl Strategy<Value = Mistakes> {
    let delta = || prop_oneof![3 => Just(0i8), 1 => -2i8..=2];
    (
        prop::collection::vec((delta(), delta()), 0..6),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.4),
        0usize..4,
        prop::bool::weighted(0.3),
    )
        .prop_map(|(counts, bare, strip, rotate, split)| Mistakes {
            counts,
            bare,
            strip,
            rotate,
            split,
        })
}

/// `-a,b` as git writes it (`-a` alone for one line).
fn range(sign: char, start: usize, len: usize) -> String {
    if len == 1 {
        format!("{sign}{start}")
    } else {
        format!("{sign}{start},{len}")
    }
}

fn hunk_text(hunk: &Hunk, delta: (i8, i8), m: &Mistakes) -> String {
    let count = |len: usize, d: i8| (len as i64 + i64::from(d)).max(0) as usize;
    let mut out = if m.bare {
        "@@\n".to_string()
    } else {
        format!(
            "@@ {} {} @@\n",
            range('-', hunk.old_start, count(hunk.old_len, delta.0)),
            range('+', hunk.new_start, count(hunk.new_len, delta.1))
        )
    };
    for line in &hunk.lines {
        if line.is_no_newline_marker() {
            out.push_str(NO_NEWLINE);
        } else {
            let (sign, copied) = match line.kind {
                LineKind::Context => (' ', true),
                LineKind::Removed => ('-', true),
                LineKind::Added => ('+', false),
            };
            out.push(sign);
            // A model copies the file's lines without their trailing whitespace.
            let text = if m.strip && copied {
                line.text.trim_end_matches([' ', '\t'])
            } else {
                line.text.as_str()
            };
            out.push_str(text);
        }
        out.push('\n');
    }
    out
}

/// The patch of `old` → `new` with mistakes `m` (all none: as git writes it).
fn patch_text(old: &str, new: &str, m: &Mistakes) -> Option<String> {
    let diff = FileDiff::compute("f.txt", Some(old), new);
    if diff.is_empty() {
        return None;
    }
    let header = "--- a/f.txt\n+++ b/f.txt\n";
    let mut hunks: Vec<String> = diff
        .hunks
        .iter()
        .enumerate()
        .map(|(i, h)| hunk_text(h, m.counts.get(i).copied().unwrap_or((0, 0)), m))
        .collect();
    let by = m.rotate % hunks.len();
    hunks.rotate_left(by);
    let mut out = format!("diff --git a/f.txt b/f.txt\nindex 1111111..2222222 100644\n{header}");
    for (i, hunk) in hunks.iter().enumerate() {
        if m.split && i > 0 {
            out.push_str(header);
        }
        out.push_str(hunk);
    }
    Some(out)
}

/// `Ok(true)`: applied exactly; `Ok(false)`: refused; `Err`: a wrong result.
fn check(old: &str, new: &str, patch: &str) -> Result<bool, String> {
    let Ok(files) = parse(patch) else {
        return Ok(false);
    };
    if files.len() != 1 {
        return Ok(false); // a section for another file: that file does not exist
    }
    match apply_checked(old, &files[0]) {
        Err(_) => Ok(false),
        Ok(done) if done.text == new => Ok(true),
        Ok(done) => Err(format!(
            "WRONG RESULT\nold: {old:?}\nnew: {new:?}\npatch:\n{patch}\ngot: {:?}",
            done.text
        )),
    }
}

#[test]
fn generated_patches_apply_exactly_or_are_refused() {
    let config = Config {
        cases: 1500,
        failure_persistence: None,
        ..Config::default()
    };
    // The same cases every run: the acceptance rate is a figure to compare.
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let (tried, applied) = (Cell::new(0u32), Cell::new(0u32));
    let result = runner.run(&(file_and_edit(), mistakes()), |((old, new), m)| {
        let Some(clean) = patch_text(&old, &new, &Mistakes::default()) else {
            return Ok(());
        };
        let exact = check(&old, &new, &clean).map_err(TestCaseError::fail)?;
        prop_assert!(exact, "a clean patch was refused:\n{}", clean);
        let Some(mistaken) = patch_text(&old, &new, &m) else {
            return Ok(());
        };
        let ok = check(&old, &new, &mistaken).map_err(TestCaseError::fail)?;
        // Right line numbers and whole hunk lines apply, whatever the counts
        // say (a last hunk short of them is whole: git ends hunks in context
        // or at the file's end). Lines that read as a `---`/`+++` header
        // need right counts, and so does a hunk followed by a repeated file
        // header: counts too large read the header as a removed and an added
        // line, and the patch is refused (safe, and rare).
        let counts_too_large = m.counts.iter().any(|&(o, n)| o > 0 || n > 0);
        let header_like = mistaken.contains("\n--- c") || m.split && counts_too_large;
        // A last hunk short of its counts shows it is whole (see
        // `apply::check_whole`) when its old count is too large by at least
        // as much as its new one (then it ends in context as git writes
        // it, or at the file's end), or its new side is marked as the file's
        // last; other short hunks may be refused as possibly cut.
        let even = m.counts.iter().all(|&(o, n)| n <= o);
        let marked = mistaken.trim_end().ends_with(NO_NEWLINE)
            && (mistaken.trim_end().lines().rev().nth(1))
                .is_some_and(|l| l.starts_with(['+', ' ']));
        let maybe_cut = counts_too_large && !even && !marked;
        let numbered = !m.bare && !header_like && !maybe_cut;
        prop_assert!(ok || !numbered, "refused though numbered:\n{}", mistaken);
        tried.set(tried.get() + 1);
        applied.set(applied.get() + u32::from(ok));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    eprintln!(
        "{} of {} mistaken patches applied",
        applied.get(),
        tried.get()
    );
    // At least 95% of the model-style mistakes apply (the rest are bare
    // `@@` hunks that match at several places, rightly refused).
    assert!(
        applied.get() * 100 >= tried.get() * 95,
        "{} of {} applied",
        applied.get(),
        tried.get()
    );
}

/// `git diff --no-index -U3` of two files in `dir`, or why there is none.
fn git_diff(dir: &std::path::Path, old: &str, new: &str) -> Result<String, String> {
    std::fs::write(dir.join("old.txt"), old).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("new.txt"), new).map_err(|e| e.to_string())?;
    let out = std::process::Command::new("git")
        .args(["-c", "core.autocrlf=false", "-c", "diff.noprefix=false"])
        .args(["diff", "--no-index", "--no-color", "--no-ext-diff", "-U3"])
        .args(["--", "old.txt", "new.txt"])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .map_err(|e| format!("git could not run: {e}"))?;
    // 1: the files differ.
    if out.status.code() != Some(1) {
        return Err(format!("git diff exited with {:?}", out.status.code()));
    }
    String::from_utf8(out.stdout).map_err(|e| e.to_string())
}

/// Bare headers and context copied without trailing whitespace, on git's text.
fn mistaken_git(patch: &str, bare: bool, strip: bool) -> String {
    patch
        .lines()
        .map(|l| {
            if bare && l.starts_with("@@") {
                "@@"
            } else if strip && l.starts_with([' ', '-']) {
                l.trim_end_matches([' ', '\t'])
            } else {
                l
            }
        })
        .fold(String::new(), |out, l| out + l + "\n")
}

#[test]
fn real_git_diffs_apply_exactly_or_are_refused() {
    let Ok(dir) = tempfile::tempdir() else {
        println!("skipped: no temporary folder");
        return;
    };
    if let Err(why) = git_diff(dir.path(), "a\n", "b\n") {
        println!("skipped: {why}");
        return;
    }
    let mut runner = TestRunner::new(Config {
        cases: 80,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(
        &(file_and_edit(), any::<bool>(), any::<bool>()),
        |((old, new), bare, strip)| {
            if old == new {
                return Ok(());
            }
            let patch = git_diff(dir.path(), &old, &new).map_err(TestCaseError::fail)?;
            let exact = check(&old, &new, &patch).map_err(TestCaseError::fail)?;
            prop_assert!(exact, "git's own patch was refused:\n{}", patch);
            let mistaken = mistaken_git(&patch, bare, strip);
            check(&old, &new, &mistaken).map_err(TestCaseError::fail)?;
            Ok(())
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}
