//! Where a streaming reply's markdown can be cut: the start of a line that
//! opens a new top-level block after a blank line, outside any fence. The
//! text before such a cut renders the same alone as within the whole text
//! (its blocks are closed), so a streaming reply keeps those lines and
//! renders again only what came after the last cut.
//!
//! What must stay true: a cut is never inside a fenced block, before a line
//! that could continue a list (a marker or an indent), or at or after an
//! HTML line (some HTML blocks span blank lines). Link reference
//! definitions further on can still change how earlier links show; the
//! reply is rendered whole once it is complete, which settles that.

/// The last cut in `text[from..]` (an index into `text`), or `from`; `from`
/// must itself be a cut (or 0).
pub fn last_cut(text: &str, from: usize) -> usize {
    let Some(rest) = text.get(from..) else {
        return from;
    };
    let mut fence: Option<(char, usize)> = None;
    let mut prev_blank = false;
    let mut best = from;
    let mut at = from;
    for line in rest.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let line = line.trim_end_matches(['\n', '\r']);
        if let Some((ch, n)) = fence {
            if closes(line, ch, n) {
                fence = None;
            }
            prev_blank = false;
            continue;
        }
        let first = line.chars().next();
        if prev_blank && first.is_some_and(opens_block) {
            best = start;
        }
        if line.trim_start().starts_with('<') {
            break;
        }
        fence = opens(line);
        prev_blank = line.trim().is_empty();
    }
    best
}

/// A line starting with `c` (after a blank line) cannot continue the block before it.
fn opens_block(c: char) -> bool {
    !(c.is_whitespace() || c.is_ascii_digit() || matches!(c, '-' | '*' | '+' | '<'))
}

/// The fence a line opens: its character and length.
fn opens(line: &str) -> Option<(char, usize)> {
    let body = line.trim_start_matches(' ');
    if line.len() - body.len() > 3 {
        return None;
    }
    let ch = body.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let n = body.chars().take_while(|&c| c == ch).count();
    let info = &body[n..];
    (n >= 3 && !(ch == '`' && info.contains('`'))).then_some((ch, n))
}

/// Whether `line` closes a fence of `n` or more `ch`.
fn closes(line: &str, ch: char, n: usize) -> bool {
    let body = line.trim_start_matches(' ');
    if line.len() - body.len() > 3 {
        return false;
    }
    let run = body.chars().take_while(|&c| c == ch).count();
    run >= n && body[run..].trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_only_between_closed_top_level_blocks() {
        let text = "One.\n\nTwo.\n\n```\ncode\n\nstill code\n```\n\n- a\n\n- b\n\n  more b\n\nEnd";
        let cut = last_cut(text, 0);
        assert_eq!(&text[cut..], "End");
        let fenced = "a\n\n```\nx\n\ny";
        assert_eq!(&fenced[last_cut(fenced, 0)..], "```\nx\n\ny");
        assert_eq!(last_cut("a\n\n- b\n\n- c", 0), 0, "a list goes on");
        assert_eq!(last_cut("a\n\n<!--\n\nb", 0), 0, "HTML stops the search");
        assert_eq!(last_cut("x\n\n    indented\n", 0), 0);
        assert_eq!(last_cut("héllo\n\nwörld", 99), 99);
    }
}
