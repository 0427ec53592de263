//! Rows of a diff built at once: gutters, word and syntax colours, headers.

use super::*;
use crate::tui::panes::diff::rows::{ADDED, ADDED_WORD, REMOVED_WORD};
use crate::tui::render::theme;

fn plain(d: &FileDiff, width: usize) -> Vec<String> {
    build_rows(&[d], width, false)
        .rows
        .iter()
        .map(|l| l.to_string())
        .collect()
}

#[test]
fn context_lines_get_syntax_colours_within_a_budget() {
    let styles = |d: &FileDiff| -> Vec<Style> {
        let rows = build_rows(&[d], 80, false).rows;
        rows.iter()
            .flat_map(|r| r.spans.iter().map(|s| s.style))
            .collect()
    };
    let keyword = theme::SYN_KEYWORD.patch(CONTEXT);
    let small = FileDiff::compute(
        "f.py",
        Some("def f():\n    x = 1\n"),
        "def f():\n    x = 2\n",
    );
    assert!(styles(&small).contains(&keyword), "context is coloured");
    let old: String = (0..MAX_SYNTAX_LINES)
        .map(|i| format!("def f{i}(): pass\n"))
        .collect();
    let new: String = old
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i % 4 == 0 {
                format!("{l} # changed\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let big = FileDiff::compute("f.py", Some(&old), &new);
    assert!(big.hunks[0].lines.len() > MAX_SYNTAX_LINES, "one long hunk");
    assert!(!styles(&big).contains(&keyword), "over the budget: plain");
}

#[test]
fn gutters_signs_and_continuation_rows() {
    let old = "a\nb\n";
    let new = "a\nb\nthis line is much too long to fit\n";
    let d = FileDiff::compute("f.py", Some(old), new);
    let rows = plain(&d, 25);
    assert_eq!(rows[0], "       ├─ @@ -1,2 +1,3 @@ ");
    assert_eq!(rows[1], "  1  1 │ a");
    assert_eq!(rows[3], "     3 │+this line is");
    assert_eq!(rows[4], "       │ much too long to");
    assert_eq!(rows[5], "       │ fit");
    let styled = build_rows(&[&d], 25, false).rows;
    assert_eq!(styled[3].spans.last().map(|s| s.style), Some(ADDED));
}

#[test]
fn changed_words_are_highlighted_in_paired_lines() {
    // A language without colours: only the line's own style and the words.
    let d = FileDiff::compute(
        "f.txt",
        Some("x = compute(1, 'x')\n"),
        "x = compute(1, 'y')\n",
    );
    let rows = build_rows(&[&d], 60, false).rows;
    let styled = |row: &Line<'_>, style: Style| -> String {
        row.spans
            .iter()
            .filter(|s| s.style == style)
            .map(|s| s.content.as_ref())
            .collect()
    };
    assert_eq!(styled(&rows[1], REMOVED_WORD), "x");
    assert_eq!(styled(&rows[2], ADDED_WORD), "y");
    assert_eq!(styled(&rows[2], ADDED), "x = compute(1, '')");
}

#[test]
fn added_and_removed_lines_get_syntax_colours_with_their_changed_words() {
    use crate::tui::render::theme;
    let d = FileDiff::compute(
        "f.py",
        Some("def f():\n    return 1\n"),
        "def f():\n    return 2\n",
    );
    let rows = build_rows(&[&d], 60, false).rows;
    let fg_of = |row: &Line<'_>, word: &str| {
        row.spans
            .iter()
            .find(|s| s.content.contains(word))
            .map(|s| s.style.fg)
    };
    // Removed, then added: `return` is a keyword on both.
    assert_eq!(
        fg_of(&rows[2], "return"),
        Some(theme::SYN_KEYWORD.fg),
        "{:?}",
        rows[2]
    );
    assert_eq!(
        fg_of(&rows[3], "return"),
        Some(theme::SYN_KEYWORD.fg),
        "{:?}",
        rows[3]
    );
    // The changed number keeps its word highlight.
    let word = |row: &Line<'_>, style: Style| -> String {
        row.spans
            .iter()
            .filter(|s| s.style == style)
            .map(|s| s.content.as_ref())
            .collect()
    };
    assert_eq!(word(&rows[2], REMOVED_WORD), "1");
    assert_eq!(word(&rows[3], ADDED_WORD), "2");
}

#[test]
fn hunk_rows_are_recorded_and_files_get_headers() {
    let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 2\n", "line two\n")
        .replace("line 28\n", "");
    let d = FileDiff::compute("f.txt", Some(&old), &new);
    let created = FileDiff::compute("g.txt", None, "g\n");
    let built = build_rows(&[&d, &created], 60, true);
    assert_eq!(built.hunks.len(), 3);
    assert!(built.rows[0].to_string().contains("f.txt  +1 −2"));
    for r in &built.hunks {
        assert!(built.rows[r.start].to_string().contains("@@"));
    }
    let g = built.hunks[2].start - 1;
    assert!(
        built.rows[g]
            .to_string()
            .contains("g.txt  +1 −0 (new file)")
    );
}
