//! Word-level highlighting inside changed lines: a removed line and the added
//! line it pairs with are split into tokens (identifiers, numbers, and single
//! other characters) and diffed, so a one-character change stands out. Lines
//! that are long, or too different for the highlight to mean anything, are
//! skipped. Works on sanitized text, so columns match what is drawn.

use similar::{Algorithm, DiffTag, capture_diff_slices};
use std::ops::Range;

/// Lines longer than this (in characters) get no word-level highlight.
pub const MAX_LINE_CHARS: usize = 400;
/// Below this share of unchanged characters the whole line is simply changed.
const MIN_SIMILARITY: f32 = 0.4;

/// Character ranges of a line, in order.
pub type Ranges = Vec<Range<usize>>;

/// Character ranges that changed in `old` and in `new`, or `None` when
/// highlighting is not worth it (too long, too different, identical).
pub fn changed_ranges(old: &str, new: &str) -> Option<(Ranges, Ranges)> {
    let (old_chars, new_chars): (Vec<char>, Vec<char>) =
        (old.chars().collect(), new.chars().collect());
    if old_chars.len() > MAX_LINE_CHARS || new_chars.len() > MAX_LINE_CHARS || old == new {
        return None;
    }
    let (old_tokens, new_tokens) = (tokens(&old_chars), tokens(&new_chars));
    let key = |chars: &[char], r: &Range<usize>| chars[r.clone()].iter().collect::<String>();
    let old_keys: Vec<String> = old_tokens.iter().map(|r| key(&old_chars, r)).collect();
    let new_keys: Vec<String> = new_tokens.iter().map(|r| key(&new_chars, r)).collect();
    let ops = capture_diff_slices(Algorithm::Myers, &old_keys, &new_keys);
    let span = |tokens: &[Range<usize>], r: Range<usize>| match (
        tokens.get(r.start),
        r.end.checked_sub(1).and_then(|e| tokens.get(e)),
    ) {
        (Some(first), Some(last)) if !r.is_empty() => Some(first.start..last.end),
        _ => None,
    };
    let (mut in_old, mut in_new) = (Vec::new(), Vec::new());
    let mut equal = 0usize;
    for op in &ops {
        match op.tag() {
            DiffTag::Equal => {
                equal += span(&old_tokens, op.old_range()).map_or(0, |r| r.len());
            }
            _ => {
                in_old.extend(span(&old_tokens, op.old_range()));
                in_new.extend(span(&new_tokens, op.new_range()));
            }
        }
    }
    let similarity = 2.0 * equal as f32 / (old_chars.len() + new_chars.len()).max(1) as f32;
    (similarity >= MIN_SIMILARITY).then_some((in_old, in_new))
}

/// Token ranges: runs of word characters, runs of spaces, any other single character.
fn tokens(chars: &[char]) -> Vec<Range<usize>> {
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            1
        } else if c == ' ' {
            2
        } else {
            0
        }
    };
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=chars.len() {
        let boundary = i == chars.len() || {
            let (a, b) = (class(chars[i - 1]), class(chars[i]));
            a != b || a == 0
        };
        if boundary {
            out.push(start..i);
            start = i;
        }
    }
    out
}

/// Split `text` into `(segment, changed)` pieces by the (sorted) character `ranges`.
pub fn segments<'a>(text: &'a str, ranges: &[Range<usize>]) -> Vec<(&'a str, bool)> {
    let mut out = Vec::new();
    let (mut from, mut current, mut r) = (0, false, 0);
    for (i, (byte, _)) in text.char_indices().enumerate() {
        while r < ranges.len() && ranges[r].end <= i {
            r += 1;
        }
        let changed = r < ranges.len() && ranges[r].start <= i;
        if changed != current {
            if byte > from {
                out.push((&text[from..byte], current));
                from = byte;
            }
            current = changed;
        }
    }
    if from < text.len() {
        out.push((&text[from..], current));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed(old: &str, new: &str) -> Option<(Vec<String>, Vec<String>)> {
        let (a, b) = changed_ranges(old, new)?;
        let pick = |text: &str, rs: &[Range<usize>]| {
            segments(text, rs)
                .into_iter()
                .filter(|(_, c)| *c)
                .map(|(s, _)| s.to_string())
                .collect::<Vec<_>>()
        };
        Some((pick(old, &a), pick(new, &b)))
    }

    #[test]
    fn a_one_character_change_is_all_that_is_highlighted() {
        let got = changed("value = compute(1, 'x')", "value = compute(1, 'y')");
        assert_eq!(got, Some((vec!["x".into()], vec!["y".into()])));
        let got = changed("    return a - b", "    return a + b");
        assert_eq!(got, Some((vec!["-".into()], vec!["+".into()])));
    }

    #[test]
    fn renamed_identifiers_are_whole_tokens() {
        let got = changed("def divide(a, b):", "def divide(numerator, b):");
        assert_eq!(got, Some((vec!["a".into()], vec!["numerator".into()])));
    }

    #[test]
    fn unrelated_long_or_identical_lines_are_skipped() {
        assert_eq!(changed("import os", "class Calculator:"), None);
        assert_eq!(changed("same", "same"), None);
        let long = "x".repeat(MAX_LINE_CHARS + 1);
        assert_eq!(changed(&long, "x"), None);
    }

    #[test]
    fn segments_cover_the_text_in_order_with_multibyte_characters() {
        let text = "é = 'ü' + 1";
        let segs = segments(text, &[5..6, 10..11]);
        let joined: String = segs.iter().map(|(s, _)| *s).collect();
        assert_eq!(joined, text);
        let marked: Vec<&str> = segs.iter().filter(|(_, c)| *c).map(|(s, _)| *s).collect();
        assert_eq!(marked, ["ü", "1"]);
    }
}
