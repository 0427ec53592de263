//! The one sanitizer for text stepwise did not write itself: anything from
//! the model, a file, a test run or a server passes through here before it
//! reaches a terminal, in every front end and every mode. One table
//! ([`visible`]) decides which characters are unsafe and how they show; the
//! functions below differ only in what a field may keep (a newline in a
//! multi-line text, a tab in a line of content).
//!
//! What must stay true: no output of these functions contains a C0 or C1
//! control character, DEL, or a bidirectional override, except `\n` (from
//! [`sanitize`] only) and `\t` (from [`sanitize`] and [`content_line`]), so
//! nothing the text holds can move the cursor, set a title, write the
//! clipboard or reorder the display; and [`one_line`] never returns a line
//! break, so a path or a name cannot start a line of its own.

use std::borrow::Cow;
use unicode_width::UnicodeWidthChar;

/// How an unsafe character shows, or `None` when it is safe as it is.
/// C0 controls become their control pictures (`ESC` is `␛`, `LF` is `␊`),
/// DEL is `␡`; C1 controls, bidirectional embeddings, overrides, isolates
/// and marks, the line and paragraph separators, and the invisible format
/// characters (zero-width spaces and joiners, the word joiner, the byte
/// order mark, the soft hyphen, tag characters, and the Hangul fillers that
/// draw as blanks) become `�`, so an edit cannot hide an identifier.
pub fn visible(c: char) -> Option<char> {
    match c {
        '\u{0}'..='\u{1f}' => Some(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
        '\u{7f}' => Some('\u{2421}'),
        '\u{80}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{2028}'
        | '\u{2029}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{61c}' => Some('\u{fffd}'),
        c if invisible_format(c) => Some('\u{fffd}'),
        _ => None,
    }
}

/// A zero-width joiner between two emoji draws one emoji (👨‍👩‍👧): it is
/// kept there, and shown everywhere else.
const ZWJ: char = '\u{200d}';

/// How `c` shows between `prev` and `next`: as [`visible`] says, except a
/// joiner inside an emoji sequence, which stays.
fn shown(prev: Option<char>, c: char, next: Option<char>) -> char {
    if c == ZWJ && prev.is_some_and(emoji_part) && next.is_some_and(emoji_part) {
        return c;
    }
    visible(c).unwrap_or(c)
}

/// Whether `c` can stand on either side of a joiner in an emoji sequence:
/// pictographs, symbols and dingbats, skin tones, and the emoji variation
/// selector.
fn emoji_part(c: char) -> bool {
    matches!(
        c,
        '\u{1f000}'..='\u{1faff}'
            | '\u{2300}'..='\u{23ff}'
            | '\u{2600}'..='\u{27bf}'
            | '\u{2b00}'..='\u{2bff}'
            | '\u{fe0f}'
    )
}

/// Format characters (Unicode category Cf) and fillers that draw nothing.
fn invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{600}'..='\u{605}'
            | '\u{6dd}'
            | '\u{70f}'
            | '\u{890}'..='\u{891}'
            | '\u{8e2}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200d}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206a}'..='\u{206f}'
            | '\u{3164}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
    )
}

/// Map every character with `f` (`None`: keep it), borrowing when nothing changes.
fn map_chars(text: &str, f: impl Fn(char, Option<char>) -> Option<&'static str>) -> Cow<'_, str> {
    let mut chars = text.chars().peekable();
    let needs_change = text.chars().any(|c| visible(c).is_some());
    if !needs_change {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev = None;
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        match f(c, next) {
            Some(kept) => out.push_str(kept),
            None => out.push(shown(prev, c, next)),
        }
        prev = Some(c);
    }
    Cow::Owned(out)
}

/// A multi-line text (the model's reply, file content, test output, a
/// server's error body): line breaks and tabs stay, a `\r` that ends a line
/// (CRLF) or the text is dropped, every other control shows visibly.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    map_chars(text, |c, next| match (c, next) {
        ('\n', _) => Some("\n"),
        ('\t', _) => Some("\t"),
        ('\r', None | Some('\n')) => Some(""),
        _ => None,
    })
}

/// One line of content (a diff line, a line of test output): tabs stay, a
/// trailing `\r` is dropped, every other control shows visibly, `\n` too.
pub fn content_line(line: &str) -> Cow<'_, str> {
    map_chars(line, |c, next| match (c, next) {
        ('\t', _) => Some("\t"),
        ('\r', None) => Some(""),
        _ => None,
    })
}

/// A name or a one-line field (a path, a tool name, a command, a summary, an
/// error line): every control shows visibly, line breaks and tabs included,
/// so the field stays on its line and says exactly what it holds.
pub fn one_line(text: &str) -> Cow<'_, str> {
    map_chars(text, |_, _| None)
}

/// One line for a grid of cells (the full-screen UI): as [`content_line`],
/// with tabs expanded to the next multiple of `tab_width` columns, so every
/// character has a known display width.
pub fn screen_line(line: &str, tab_width: usize) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let tab_width = tab_width.max(1);
    // Most code is printable ASCII and tabs: a byte is a column, nothing
    // shows differently, and only tabs need expanding.
    if line
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) || b == b'\t')
    {
        return expand_ascii_tabs(line, tab_width);
    }
    screen_line_chars(line, tab_width)
}

/// `screen_line` character by character, as it works on any line (without
/// its trailing `\r`, `tab_width` at least 1).
fn screen_line_chars(line: &str, tab_width: usize) -> String {
    let mut out = String::with_capacity(line.len());
    let mut col = 0usize;
    let mut chars = line.chars().peekable();
    let mut prev = None;
    while let Some(c) = chars.next() {
        if c == '\t' {
            let n = tab_width - col % tab_width;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
            prev = Some(c);
            continue;
        }
        let shown = shown(prev, c, chars.peek().copied());
        out.push(shown);
        col += shown.width().unwrap_or(0);
        prev = Some(c);
    }
    out
}

/// `screen_line` of a line of printable ASCII and tabs, where each byte is
/// one column: copied, with each tab expanded by the byte count so far.
fn expand_ascii_tabs(line: &str, tab_width: usize) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(tab) = rest.find('\t') {
        out.push_str(&rest[..tab]);
        let n = tab_width - out.len() % tab_width;
        out.extend(std::iter::repeat_n(' ', n));
        rest = &rest[tab + 1..];
    }
    out.push_str(rest);
    out
}

/// A serialized JSON value made safe for a terminal without changing its
/// data: the characters serde_json leaves raw inside strings (DEL, C1
/// controls, bidirectional overrides, separators) become `\uXXXX` escapes,
/// which parse back to the same string. (serde_json already escapes C0.)
pub fn json_safe(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| visible(c).is_some()) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if visible(c).is_some() {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str =
        "a\x1b]0;title\x07b\x1b]52;c;SGk=\x07c\u{9b}31m\u{202e}d\x7f\r\ne\rf\tg\n";

    fn has_control(s: &str, allowed: &[char]) -> bool {
        s.chars()
            .any(|c| visible(c).is_some() && !allowed.contains(&c))
    }

    #[test]
    fn no_control_character_survives_any_field() {
        let text = sanitize(HOSTILE);
        assert!(!has_control(&text, &['\n', '\t']), "{text:?}");
        assert_eq!(
            text,
            "a␛]0;title␇b␛]52;c;SGk=␇c\u{fffd}31m\u{fffd}d␡\ne␍f\tg\n"
        );
        let line = one_line(HOSTILE);
        assert!(!has_control(&line, &[]), "{line:?}");
        assert!(line.contains("␍␊e␍f␉g␊"), "{line:?}");
        let content = content_line("x\ty\x1b[2J\r");
        assert_eq!(content, "x\ty␛[2J");
        assert_eq!(content_line("a\nb"), "a␊b");
    }

    #[test]
    fn invisible_characters_show_in_every_field() {
        for hidden in [
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{2060}',
            '\u{feff}',
            '\u{ad}',
            '\u{3164}',
            '\u{115f}',
            '\u{ffa0}',
            '\u{e0041}',
            '\u{e007f}',
        ] {
            let name = format!("is_admin{hidden}");
            for shown in [sanitize(&name), content_line(&name), one_line(&name)] {
                assert_eq!(shown, "is_admin\u{fffd}", "U+{:04X}", hidden as u32);
            }
            assert!(screen_line(&name, 4).ends_with('\u{fffd}'));
        }
        // A joiner inside an emoji sequence draws one emoji and stays.
        let family = "👨\u{200d}👩\u{200d}👧";
        assert_eq!(one_line(family), family);
        assert_eq!(screen_line(family, 4), family);
        assert_eq!(one_line("a\u{200d}b"), "a\u{fffd}b");
        // Letters of other scripts are not format characters.
        assert_eq!(one_line("größe_δ_名前"), "größe_δ_名前");
    }

    #[test]
    fn clean_text_is_borrowed_and_unchanged() {
        for f in [sanitize, content_line, one_line, json_safe] {
            let out = f("calculator.py +4 −1 ✓ naïve 日本");
            assert!(matches!(out, Cow::Borrowed(_)));
        }
    }

    #[test]
    fn a_path_with_a_newline_stays_on_one_line() {
        let path = "a\n✓ 9 tests OK\nReceipt: fake.py";
        assert_eq!(one_line(path), "a␊✓ 9 tests OK␊Receipt: fake.py");
        assert_eq!(one_line(path).lines().count(), 1);
    }

    #[test]
    fn screen_lines_expand_tabs_and_keep_widths() {
        assert_eq!(screen_line("\tx\ty", 4), "    x   y");
        assert_eq!(screen_line("a\x1bb\r", 4), "a␛b");
        assert_eq!(screen_line("\u{202e}z", 4), "\u{fffd}z");
    }

    #[test]
    fn ascii_lines_take_the_short_way_to_the_same_result() {
        let lines = [
            "",
            "plain code();",
            "\tindented\tand\t\ttabbed\t",
            "a\tb\r",
            "x\r\r",
            "~ all printable: !\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}",
            "del\x7f and esc\x1b[2J and cr\rinside",
            "tab after wide 日本\tx",
            "\u{202e}\tbidi",
        ];
        for line in lines {
            let whole = line.strip_suffix('\r').unwrap_or(line);
            for tab in [1, 2, 4, 8] {
                let slowly = screen_line_chars(whole, tab);
                assert_eq!(screen_line(line, tab), slowly, "{line:?}");
            }
        }
    }

    #[test]
    fn json_stays_the_same_data() {
        let value = serde_json::json!({"text": "\u{9b}2J\u{202e}\x1b\x7f"});
        let raw = value.to_string();
        let safe = json_safe(&raw);
        assert!(!has_control(&safe, &[]), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }
}
