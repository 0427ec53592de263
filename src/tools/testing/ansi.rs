//! Terminal escape sequences in what a program printed (a test runner's
//! colours, a progress line's cursor moves): [`strip`] removes every one,
//! for the model and for everything that reads output as text (the runner's
//! summary, the receipt, the transcript); [`keep_colours`] keeps only the
//! colour sequences (SGR, `ESC [ digits;… m`), for a front end that turns
//! them into styles of its own.
//!
//! What must stay true: [`strip`]'s output has no ESC and no C1 control
//! introducer (CSI, OSC, DCS, …); in [`keep_colours`]'s output every ESC
//! starts a well-formed SGR sequence of digits, `;` and `:`, and nothing
//! else of an escape survives. Anything that is not an escape is kept as it
//! is (the sanitizer still decides how other controls show).

/// `text` without any escape sequence.
pub fn strip(text: &str) -> String {
    if !has_escape(text) {
        return text.to_string();
    }
    scan(text, false)
}

/// `text` with only its SGR colour sequences left (every other escape removed).
pub fn keep_colours(text: &str) -> String {
    if !has_escape(text) {
        return text.to_string();
    }
    scan(text, true)
}

fn has_escape(text: &str) -> bool {
    text.chars().any(introducer)
}

/// ESC, or a C1 control that opens a sequence on its own.
fn introducer(c: char) -> bool {
    matches!(
        c,
        '\u{1b}' | '\u{90}' | '\u{98}' | '\u{9b}' | '\u{9d}'..='\u{9f}'
    )
}

fn scan(text: &str, keep_sgr: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let kind = match c {
            '\u{1b}' => match chars.peek() {
                Some('[') => {
                    chars.next();
                    Seq::Csi
                }
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    Seq::Str
                }
                Some(_) => Seq::Short,
                // A lone ESC at the very end.
                None => continue,
            },
            '\u{9b}' => Seq::Csi,
            '\u{90}' | '\u{98}' | '\u{9d}'..='\u{9f}' => Seq::Str,
            c => {
                out.push(c);
                continue;
            }
        };
        match kind {
            Seq::Csi => {
                let mut params = String::new();
                let mut plain = true;
                let mut end = None;
                while let Some(&n) = chars.peek() {
                    match n {
                        '\u{30}'..='\u{3f}' => params.push(n),
                        '\u{20}'..='\u{2f}' => plain = false,
                        '\u{40}'..='\u{7e}' => {
                            chars.next();
                            end = Some(n);
                            break;
                        }
                        // Not part of a sequence: the sequence is cut off here.
                        _ => break,
                    }
                    chars.next();
                }
                let sgr = end == Some('m')
                    && plain
                    && params
                        .chars()
                        .all(|p| p.is_ascii_digit() || p == ';' || p == ':');
                if keep_sgr && sgr {
                    out.push_str("\u{1b}[");
                    out.push_str(&params);
                    out.push('m');
                }
            }
            Seq::Str => {
                // Up to BEL, ST (`ESC \` or U+009C), or the end of the text.
                while let Some(n) = chars.next() {
                    match n {
                        '\u{7}' | '\u{9c}' => break,
                        '\u{1b}' => {
                            if chars.peek() == Some(&'\\') {
                                chars.next();
                            }
                            break;
                        }
                        _ => {}
                    }
                }
            }
            Seq::Short => {
                // Intermediates, then one final character.
                while let Some(&n) = chars.peek() {
                    chars.next();
                    if !('\u{20}'..='\u{2f}').contains(&n) {
                        break;
                    }
                }
            }
        }
    }
    out
}

enum Seq {
    /// `ESC [` … final byte.
    Csi,
    /// OSC, DCS, SOS, PM, APC: a string up to its terminator.
    Str,
    /// `ESC` and one character (after any intermediates).
    Short,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_removes_colours_cursor_moves_titles_and_c1() {
        let text = "\u{1b}[90m•\u{1b}[39m ok \u{1b}[2K\u{1b}[1A\u{1b}]0;title\u{7}x\u{1b}(B\u{9b}31my\u{1b}]8;;http://e\u{1b}\\z\u{1b}";
        assert_eq!(strip(text), "• ok xyz");
    }

    #[test]
    fn keep_colours_keeps_only_sgr() {
        let text = "\u{1b}[1;31mFAIL\u{1b}[0m \u{1b}[2J\u{1b}]0;t\u{7}\u{1b}[?25l\u{1b}[38:5:196mx";
        assert_eq!(
            keep_colours(text),
            "\u{1b}[1;31mFAIL\u{1b}[0m \u{1b}[38:5:196mx"
        );
    }

    #[test]
    fn text_without_escapes_is_unchanged() {
        assert_eq!(strip("a\tb\nc"), "a\tb\nc");
        assert_eq!(keep_colours("a\tb\nc"), "a\tb\nc");
    }

    #[test]
    fn a_sequence_cut_off_leaves_no_escape() {
        for text in [
            "\u{1b}[31",
            "\u{1b}[3\n1m",
            "\u{1b}]0;never ends",
            "a\u{1b}",
        ] {
            assert!(!strip(text).contains('\u{1b}'), "{text:?}");
            assert!(!keep_colours(text).contains('\u{1b}'), "{text:?}");
        }
        assert_eq!(strip("\u{1b}[3\n1m"), "\n1m");
    }
}
