//! Styling a diff lazily, line by line and in any order, gives the same rows
//! as styling every hunk at once from scratch, word budget included.

use crate::diff::{FileDiff, Hunk, LineKind};
use crate::tui::panes::diff::rows::{ADDED_WORD, HunkStyle, REMOVED_WORD, Styled};
use crate::tui::panes::diff::source::{Source, build_rows};
use crate::tui::render::text::sanitize;

/// Spans of every line of a hunk: `path` picks the syntax colours of context
/// lines ("" for none); `texts` are the lines sanitized; `word_pairs` is what
/// is left of the diff's word-highlight budget when this hunk starts.
fn style_hunk(
    path: &str,
    hunk: &Hunk,
    texts: &[String],
    w: usize,
    word_pairs: usize,
) -> Vec<Styled> {
    let style = HunkStyle::new(path, hunk, texts, w, word_pairs);
    (0..hunk.lines.len())
        .filter_map(|i| style.line(hunk, texts, i))
        .collect()
}

/// A file and a version with every third line changed and a line added.
fn edit(lines: usize) -> (String, String) {
    let old: String = (0..lines)
        .map(|i| format!("v{i} = f({i}, 'x')\n"))
        .collect();
    let new: String = (0..lines)
        .map(|i| match i % 3 {
            0 => format!("v{i} = f({i}, 'y')\n\tw{i} = {i}\n"),
            _ => format!("v{i} = f({i}, 'x')\n"),
        })
        .collect();
    (old, new)
}

fn word_styled(s: &Styled) -> bool {
    s.text
        .iter()
        .any(|sp| sp.style == ADDED_WORD || sp.style == REMOVED_WORD)
}

/// The changed middle of `a` against `b`: what is left of it once the
/// bytes both start and end with are cut (the lines here differ in one word).
fn changed_middle<'a>(a: &'a str, b: &str) -> &'a str {
    let start = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let end = (a[start..].bytes().rev())
        .zip(b[start..].bytes().rev())
        .take_while(|(x, y)| x == y)
        .count();
    &a[start..a.len() - end]
}

/// Three hunks: a changed line, three lines replaced by one (two removed
/// lines without a partner), and a changed line.
fn three_hunks() -> (String, String) {
    let old: String = (0..80).map(|i| format!("v{i} = f({i}, 'x')\n")).collect();
    let new: String = (0..80)
        .filter(|i| !(41..43).contains(i))
        .map(|i| match i {
            5 | 40 | 70 => format!("v{i} = f({i}, 'y')\n"),
            _ => format!("v{i} = f({i}, 'x')\n"),
        })
        .collect();
    (old, new)
}

/// Each changed line's partner for the word highlight, as the diff pane
/// promises it: the k-th line of a run of removed lines with the k-th of
/// the added lines right after it, pairs counted in order until `budget`.
fn expected_partners(kinds: &[LineKind], budget: &mut usize) -> Vec<Option<usize>> {
    let mut out = vec![None; kinds.len()];
    let mut i = 0;
    while i < kinds.len() {
        let removed: Vec<usize> = (i..kinds.len())
            .take_while(|&j| kinds[j] == LineKind::Removed)
            .collect();
        let after = i + removed.len();
        let added: Vec<usize> = (after..kinds.len())
            .take_while(|&j| kinds[j] == LineKind::Added)
            .collect();
        for (&r, &a) in removed.iter().zip(&added) {
            if *budget > 0 {
                *budget -= 1;
                out[r] = Some(a);
                out[a] = Some(r);
            }
        }
        i = (after + added.len()).max(i + 1);
    }
    out
}

#[test]
fn lines_styled_in_any_order_are_what_each_line_says() {
    use crate::tui::panes::diff::rows::{ADDED, CONTEXT, REMOVED};
    use ratatui::style::Modifier;
    let (old, new) = three_hunks();
    let diff = FileDiff::compute("f.py", Some(&old), &new);
    assert_eq!(diff.hunks.len(), 3);
    for (path, budget) in [("f.py", 1_000), ("", 1_000), ("", 2), ("f.py", 0)] {
        let mut left = budget;
        for hunk in &diff.hunks {
            let texts: Vec<String> = hunk.lines.iter().map(|l| sanitize(&l.text)).collect();
            let kinds: Vec<LineKind> = hunk.lines.iter().map(|l| l.kind).collect();
            let style = HunkStyle::new(path, hunk, &texts, 2, left);
            let partners = expected_partners(&kinds, &mut left);
            let side = HunkStyle::sides(hunk);
            let syntax = crate::tui::render::highlight::hunk(path, &texts, &side);
            // Backwards, then every other line: no line depends on another styled first.
            let n = texts.len();
            for i in (0..n).rev().chain((0..n).step_by(2)) {
                let line = &hunk.lines[i];
                let got = style.line(hunk, &texts, i).expect("a line");
                let no = |n: Option<usize>| n.map_or(String::new(), |n| n.to_string());
                let gutter = format!(" {:>2} {:>2} │", no(line.old_no), no(line.new_no));
                assert_eq!(got.first[0].content, gutter, "line {i}");
                let (sign, plain, word) = match line.kind {
                    LineKind::Added => ("+", ADDED, ADDED_WORD),
                    LineKind::Removed => ("-", REMOVED, REMOVED_WORD),
                    LineKind::Context => (" ", CONTEXT, CONTEXT),
                };
                assert_eq!(got.first[1].content, sign, "line {i}");
                assert_eq!(got.first[1].style, plain.add_modifier(Modifier::BOLD));
                let text: String = got.text.iter().map(|s| s.content.as_ref()).collect();
                assert_eq!(text, texts[i], "line {i} keeps its text");
                let changed: String = (got.text.iter())
                    .filter(|s| line.kind != LineKind::Context && s.style == word)
                    .map(|s| s.content.as_ref())
                    .collect();
                let expected = partners[i].map_or("", |p| changed_middle(&texts[i], &texts[p]));
                assert_eq!(
                    changed, expected,
                    "line {i} {:?}, budget {budget}",
                    line.kind
                );
                match (line.kind, syntax.get(i).cloned().flatten()) {
                    // Every line has its syntax colours over its own style
                    // (context dim, changes green or red), changed words apart.
                    (kind, Some(colours)) => {
                        let per_char = |spans: &[ratatui::text::Span<'static>], over: bool| {
                            spans
                                .iter()
                                .flat_map(|s| {
                                    let style = if over { plain.patch(s.style) } else { s.style };
                                    s.content
                                        .chars()
                                        .map(move |c| (c, style))
                                        .collect::<Vec<_>>()
                                })
                                .collect::<Vec<_>>()
                        };
                        let (want, have) = (per_char(&colours, true), per_char(&got.text, false));
                        assert_eq!(want.len(), have.len(), "line {i}");
                        for (h, w) in have.iter().zip(&want) {
                            if kind == LineKind::Context || h.1 != word {
                                assert_eq!(h, w, "line {i} has its syntax colours");
                            }
                        }
                    }
                    _ => {
                        let other = got.text.iter().filter(|s| s.style != word);
                        assert!(other.clone().all(|s| s.style == plain), "line {i}");
                    }
                }
            }
        }
    }
}

#[test]
fn the_word_budget_is_spent_in_order() {
    let (old, new) = edit(30);
    // One hunk: every line is within three lines of a change.
    let diff = FileDiff::compute("f.txt", Some(&old), &new);
    assert_eq!(diff.hunks.len(), 1);
    let hunk = &diff.hunks[0];
    let texts: Vec<String> = hunk.lines.iter().map(|l| sanitize(&l.text)).collect();
    let highlighted = |budget| -> usize {
        style_hunk("", hunk, &texts, 2, budget)
            .iter()
            .filter(|s| word_styled(s))
            .count()
    };
    // Each pair highlights both its lines; the budget counts pairs.
    assert_eq!(highlighted(3), 6);
    assert_eq!(highlighted(0), 0);
    let all = highlighted(1_000);
    assert_eq!(all, 20, "ten pairs");
    let style = HunkStyle::new("", hunk, &texts, 2, 3);
    let first_six: Vec<usize> = (0..texts.len())
        .filter(|&i| style.line(hunk, &texts, i).is_some_and(|s| word_styled(&s)))
        .collect();
    let whole = style_hunk("", hunk, &texts, 2, 1_000);
    let expected: Vec<usize> = (0..texts.len())
        .filter(|&i| word_styled(&whole[i]))
        .take(6)
        .collect();
    assert_eq!(first_six, expected, "the first three pairs, in diff order");
}

#[test]
fn a_source_shown_out_of_order_equals_the_diff_built_at_once() {
    let (old, new) = edit(400);
    let diff = FileDiff::compute("f.py", Some(&old), &new);
    let width = 30;
    let built = build_rows(&[&diff], width, false).rows;
    let mut source = Source::new(&[&diff], false);
    let mut rows = vec![Vec::new(); source.len()];
    // The middle first, then the end, then the start: as a scrolled view asks.
    let n = source.len();
    for i in (n / 2..n).chain((0..n / 2).rev()) {
        rows[i] = source.rows(i, width);
        assert_eq!(source.row_count(i, width), rows[i].len(), "item {i}");
    }
    let lazy: Vec<_> = rows.into_iter().flatten().collect();
    assert_eq!(lazy, built);
    assert_eq!(source.stylings(), diff.hunks.len(), "each hunk styled once");
}

#[test]
fn colours_computed_on_threads_end_as_those_computed_here() {
    // Small hunks with syntax colours (under the diff's syntax budget).
    let (old, new) = edit(40);
    let old = old.replace("'x')\n", "'x')\n\n\n\n\n");
    let new = new.replace("'x')\n", "'x')\n\n\n\n\n");
    let diff = FileDiff::compute("f.py", Some(&old), &new);
    assert!(diff.hunks.len() > 3, "several hunks");
    let width = 40;
    let here = build_rows(&[&diff], width, false).rows;
    let mut source = Source::new(&[&diff], false).colour_on_worker();
    let n = source.len();
    let mut rows: Vec<Vec<_>> = (0..n).map(|i| source.rows(i, width)).collect();
    // Until they arrive, hunks are plain; the text is the same.
    let plain = |r: &[ratatui::text::Line<'_>]| r.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert_eq!(plain(&rows.concat()), plain(&here));
    let mut coloured = Vec::new();
    for _ in 0..10_000 {
        coloured.extend(source.take_coloured());
        if !source.colouring_due() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(!source.colouring_due(), "the colours never arrived");
    assert_eq!(coloured.len(), diff.hunks.len(), "each hunk coloured once");
    for h in coloured {
        for i in source.hunk_items()[h].clone() {
            rows[i] = source.rows(i, width);
        }
    }
    assert_eq!(rows.concat(), here, "the same colours as computed here");
    assert_eq!(source.stylings(), diff.hunks.len());
}

/// Wait until the colours computed on the worker have all arrived.
fn settle(source: &mut Source) {
    for _ in 0..10_000 {
        source.take_coloured();
        if !source.colouring_due() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("colours never arrived");
}

#[test]
fn a_grown_preview_keeps_the_colours_of_the_lines_it_shares_with_the_last() {
    let old: String = (0..30)
        .map(|i| format!("def f{i}(x):\n    return x + {i}\n"))
        .collect();
    let part = format!("{old}def g(y):\n    return y\n");
    let more = format!("{part}def h(z):\n    return z * 2\n");
    let before = FileDiff::compute("f.py", Some(&old), &part);
    let after = FileDiff::compute("f.py", Some(&old), &more);
    let width = 60;
    let mut last = Source::new(&[&before], false).colour_on_worker();
    for i in 0..last.len() {
        last.rows(i, width);
    }
    settle(&mut last);
    let mut here = Source::new(&[&after], false);
    let mut plain = Source::new(&[&after], false).colour_on_worker();
    let mut grown = Source::new(&[&after], false).colour_on_worker();
    grown.inherit(&last);
    // The hunk's rule, then the lines shared with the last preview: three
    // of context and two added.
    let shared = 1..6;
    assert!(
        shared
            .clone()
            .any(|i| plain.rows(i, width) != here.rows(i, width)),
        "without colours the shared lines look different"
    );
    for i in shared {
        assert_eq!(grown.rows(i, width), here.rows(i, width), "line {i}");
    }
    for i in 6..grown.len() {
        grown.rows(i, width);
    }
    settle(&mut grown);
    for i in 0..grown.len() {
        assert_eq!(grown.rows(i, width), here.rows(i, width), "item {i}");
    }
}
