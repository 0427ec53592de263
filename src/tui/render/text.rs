//! Text hygiene and wrapping shared by every pane: `sanitize` makes untrusted
//! text (file content, model output, test output) safe to put on screen
//! (through the core's one sanitizer, so both front ends show the same), and
//! `wrap` breaks styled text into rows of a given display width, with separate
//! prefixes (gutters) for the first and the continuation rows.
//!
//! What must stay true: text is measured and cut by grapheme cluster, each
//! as wide as `unicode-width` says the whole cluster is (a ZWJ family or a
//! flag is one 2-column cell, never split), which is how ratatui's buffer
//! places it; `width` is the one width function every pane uses.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Columns between tab stops when tabs are expanded.
pub const TAB_WIDTH: usize = 4;

/// One line of untrusted text made safe for the screen: the core's one
/// sanitizer (`present::screen_line`), with tabs expanded to [`TAB_WIDTH`].
pub fn sanitize(line: &str) -> String {
    crate::present::screen_line(line, TAB_WIDTH)
}

/// Split multi-line untrusted text into sanitized lines.
pub fn sanitized_lines(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split('\n').map(sanitize)
}

/// Display width of a string (sanitized text only). Printable ASCII (most
/// code) is one column a byte, without segmenting it into clusters.
pub fn width(s: &str) -> usize {
    if is_printable_ascii(s) {
        return s.len();
    }
    s.graphemes(true).map(cluster_width).sum()
}

/// Columns one grapheme cluster takes.
fn cluster_width(g: &str) -> usize {
    g.width()
}

/// Cut `s` to at most `max` columns, ending with `…` when something was cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for g in s.graphemes(true) {
        let w = cluster_width(g);
        if used + w > max - 1 {
            break;
        }
        out.push_str(g);
        used += w;
    }
    out.push('…');
    out
}

/// Cut `s` from the left to at most `max` columns (`…` first), for paths.
pub fn truncate_left(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut used = 0;
    for g in s.graphemes(true).rev() {
        let w = cluster_width(g);
        if used + w > max - 1 {
            break;
        }
        kept.push(g);
        used += w;
    }
    kept.push("…");
    kept.iter().rev().copied().collect()
}

/// Wrap styled (already sanitized) text to `width` columns. The first row
/// starts with `first`, the others with `cont`; both prefixes should have the
/// same width. Breaks at the last space that fits, else anywhere.
pub fn wrap(
    spans: &[Span<'_>],
    width: usize,
    first: &[Span<'static>],
    cont: &[Span<'static>],
) -> Vec<Line<'static>> {
    // Printable ASCII (most code and prose) is a column a byte and a cluster
    // a byte: no segmenting, and text that fits is one row as it is.
    let ascii = spans.iter().all(|s| is_printable_ascii(&s.content));
    let prefix_w = first.iter().map(|s| s.width()).sum::<usize>();
    let avail = width.saturating_sub(prefix_w).max(1);
    if ascii && spans.iter().map(|s| s.content.len()).sum::<usize>() <= avail {
        let mut out = first.to_vec();
        let pieces = spans.iter().map(|s| (s.content.as_ref(), s.style));
        out.extend(merge(pieces.filter(|(text, _)| !text.is_empty())));
        return vec![Line::from(out)];
    }
    wrap_clusters(spans, avail, first, cont, ascii)
}

fn is_printable_ascii(s: &str) -> bool {
    s.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// The clusters of `s`: its bytes when it is printable ASCII (`ascii`),
/// else its extended grapheme clusters.
fn clusters(s: &str, ascii: bool) -> impl Iterator<Item = &str> {
    let bytes = (0..if ascii { s.len() } else { 0 }).map(move |i| &s[i..i + 1]);
    let graphemes = (!ascii).then(|| s.graphemes(true)).into_iter().flatten();
    bytes.chain(graphemes)
}

/// `wrap`, cluster by cluster, in rows of `avail` columns after the prefix.
fn wrap_clusters(
    spans: &[Span<'_>],
    avail: usize,
    first: &[Span<'static>],
    cont: &[Span<'static>],
    ascii: bool,
) -> Vec<Line<'static>> {
    let mut rows: Vec<Vec<(&str, Style)>> = Vec::new();
    let mut row: Vec<(&str, Style)> = Vec::new();
    let mut row_w = 0usize;
    // Index in `row` just after the last space, and the width up to it.
    let mut brk: Option<(usize, usize)> = None;
    for span in spans {
        for c in clusters(&span.content, ascii) {
            let w = if ascii { 1 } else { cluster_width(c) };
            if row_w + w > avail && !row.is_empty() {
                if c == " " {
                    // Break at this space; it is not carried over.
                    rows.push(std::mem::take(&mut row));
                    row_w = 0;
                    brk = None;
                    continue;
                }
                match brk {
                    Some((at, at_w)) if at < row.len() => {
                        let rest = row.split_off(at);
                        let mut done = std::mem::replace(&mut row, rest);
                        if done.last().is_some_and(|(c, _)| *c == " ") {
                            done.pop();
                        }
                        rows.push(done);
                        row_w -= at_w;
                    }
                    _ => {
                        let mut done = std::mem::take(&mut row);
                        while done.len() > 1 && done.last().is_some_and(|(c, _)| *c == " ") {
                            done.pop();
                        }
                        rows.push(done);
                        row_w = 0;
                    }
                }
                brk = None;
            }
            row.push((c, span.style));
            row_w += w;
            if c == " " {
                brk = Some((row.len(), row_w));
            }
        }
    }
    rows.push(row);
    rows.into_iter()
        .enumerate()
        .map(|(i, cells)| {
            let mut out: Vec<Span<'static>> = if i == 0 {
                first.to_vec()
            } else {
                cont.to_vec()
            };
            out.extend(merge(cells.into_iter()));
            Line::from(out)
        })
        .collect()
}

/// Turn styled clusters (or pieces of text) back into as few spans as possible.
fn merge<'a>(cells: impl Iterator<Item = (&'a str, Style)>) -> Vec<Span<'static>> {
    let mut out: Vec<Span<'static>> = Vec::new();
    let mut text = String::new();
    let mut style: Option<Style> = None;
    for (c, s) in cells {
        if style.is_some_and(|cur| cur != s) {
            out.push(Span::styled(
                std::mem::take(&mut text),
                style.unwrap_or_default(),
            ));
        }
        style = Some(s);
        text.push_str(c);
    }
    if let Some(s) = style {
        out.push(Span::styled(text, s));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ascii_shortcut_measures_as_clusters_do() {
        let all: String = (0x20u8..0x7f).map(char::from).collect();
        for s in [
            all.as_str(),
            "",
            "x = compute(1, 'y')  # changed",
            "a\u{301}",
            "é 👨‍👩‍👧 ｗ",
        ] {
            let slow: usize = s.graphemes(true).map(cluster_width).sum();
            assert_eq!(width(s), slow, "{s:?}");
        }
    }

    #[test]
    fn ascii_text_wraps_as_its_clusters_do() {
        let bold = Style::new().add_modifier(ratatui::style::Modifier::BOLD);
        let first = [Span::raw("> ")];
        let cont = [Span::raw("  ")];
        let texts = [
            vec![Span::raw("")],
            vec![Span::raw("short")],
            vec![Span::raw("a"), Span::styled("", bold), Span::raw("b")],
            vec![Span::raw("two  words"), Span::styled(" and bold", bold)],
            vec![Span::raw(
                "a line long enough to wrap at most of these widths, twice",
            )],
            vec![Span::raw(
                "nospacesatallinthislongwordthatmustbecutanywhere",
            )],
            vec![
                Span::raw("trailing spaces     "),
                Span::styled("   x", bold),
            ],
        ];
        for spans in &texts {
            for width in [1usize, 3, 4, 8, 12, 20, 80] {
                // Rows of what is left after the 2-column prefix (at least 1).
                let avail = width.saturating_sub(2).max(1);
                assert_eq!(
                    wrap(spans, width, &first, &cont),
                    wrap_clusters(spans, avail, &first, &cont, false),
                    "{spans:?} at {width}"
                );
            }
        }
    }

    fn plain(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn tabs_expand_to_tab_stops_and_controls_become_visible() {
        assert_eq!(sanitize("\tx"), "    x");
        assert_eq!(sanitize("ab\tc"), "ab  c");
        let s = sanitize("red\x1b[31m bell\x07 cr\rback\u{9b}2J\u{202e}rtl");
        assert!(!s.chars().any(|c| c.is_control()), "{s:?}");
        assert!(s.contains('\u{241b}') && s.contains('\u{2407}'), "{s:?}");
        assert!(!s.contains('\u{202e}'));
        assert_eq!(sanitize("line\r"), "line");
    }

    #[test]
    fn wraps_at_spaces_and_hard_breaks_long_words() {
        let spans = [Span::raw("the quick brown fox jumps")];
        let rows = wrap(&spans, 10, &[], &[]);
        assert_eq!(plain(&rows), ["the quick", "brown fox", "jumps"]);
        let rows = wrap(&[Span::raw("abcdefghijkl")], 5, &[], &[]);
        assert_eq!(plain(&rows), ["abcde", "fghij", "kl"]);
    }

    #[test]
    fn prefixes_go_on_first_and_continuation_rows() {
        let rows = wrap(
            &[Span::raw("aaaa bbbb")],
            6,
            &[Span::raw("> ")],
            &[Span::raw("  ")],
        );
        assert_eq!(plain(&rows), ["> aaaa", "  bbbb"]);
    }

    #[test]
    fn wide_characters_count_double() {
        let rows = wrap(&[Span::raw("日本語のテキスト")], 6, &[], &[]);
        assert_eq!(plain(&rows), ["日本語", "のテキ", "スト"]);
        assert_eq!(truncate("日本語", 4), "日…");
        assert_eq!(truncate_left("/very/long/path", 6), "…/path");
    }

    #[test]
    fn styles_survive_wrapping() {
        let red = crate::tui::render::theme::BAD;
        let rows = wrap(&[Span::raw("ab "), Span::styled("cd", red)], 3, &[], &[]);
        assert_eq!(plain(&rows), ["ab", "cd"]);
        assert_eq!(rows[1].spans[0].style, red);
    }
}

#[cfg(test)]
mod grapheme_tests {
    use super::*;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::widgets::{Block, Widget};

    const FAMILY: &str = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
    const FLAG: &str = "🇩🇪";

    #[test]
    fn a_zwj_family_and_a_flag_are_one_cell_each() {
        assert_eq!(width(FAMILY), 2);
        assert_eq!(width(FLAG), 2);
        assert_eq!(width(&format!("a{FAMILY}b{FLAG}")), 6);
        let rows = wrap(&[Span::raw(format!("{FAMILY}{FAMILY}{FLAG}"))], 4, &[], &[]);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(
            rows[0].to_string(),
            format!("{FAMILY}{FAMILY}"),
            "never split"
        );
        assert_eq!(
            truncate(&format!("{FAMILY}{FLAG}x"), 3),
            format!("{FAMILY}…")
        );
        assert_eq!(
            truncate_left(&format!("x{FLAG}{FAMILY}"), 3),
            format!("…{FAMILY}")
        );
    }

    #[test]
    fn the_border_after_combined_emoji_stays_in_its_column() {
        let area = Rect::new(0, 0, 12, 3);
        let mut buf = Buffer::empty(area);
        Block::bordered().render(area, &mut buf);
        let text = format!("{FAMILY}{FLAG}abcdefgh");
        let rows = wrap(&[Span::raw(text)], 10, &[], &[]);
        assert_eq!(width(&rows[0].to_string()), 10);
        buf.set_line(1, 1, &rows[0], 10);
        assert_eq!(buf[(11, 1)].symbol(), "│", "{:?}", buf);
        assert_eq!(buf[(10, 1)].symbol(), "f");
    }
}
