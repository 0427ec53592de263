//! A program's colours (SGR sequences kept by `tools::testing::ansi::keep_colours`)
//! turned into styles of the theme: the eight colours and their bright
//! forms, 256-colour indexes below 16, bold, dim, italic, underline,
//! reverse and strike. Other colours (indexes above 15, RGB) and
//! backgrounds are dropped, so the theme's contrast and `NO_COLOR` hold for
//! test output like for everything else.
//!
//! What must stay true: the spans' text holds no escape and no control
//! character (every piece is sanitized); a sequence that is not SGR cannot
//! reach here, and if one did it would be dropped, not drawn.

use crate::tui::render::text::sanitize;
use crate::tui::render::theme;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

/// The spans of one line of output (without its line break).
pub fn spans(line: &str) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut style = Style::new();
    let mut rest = line;
    while let Some(at) = rest.find('\u{1b}') {
        push(&mut out, &rest[..at], style);
        let after = &rest[at + 1..];
        let Some(body) = after.strip_prefix('[') else {
            rest = after;
            continue;
        };
        let end = body
            .find(|c: char| !(c.is_ascii_digit() || c == ';' || c == ':'))
            .unwrap_or(body.len());
        if body[end..].starts_with('m') {
            style = apply(style, &body[..end]);
            rest = &body[end + 1..];
        } else {
            // Not SGR (keep_colours lets none through): dropped, final byte too.
            let tail = &body[end..];
            let final_len = tail
                .chars()
                .next()
                .filter(|c| ('\u{40}'..='\u{7e}').contains(c))
                .map_or(0, char::len_utf8);
            rest = &tail[final_len..];
        }
    }
    push(&mut out, rest, style);
    out
}

fn push(out: &mut Vec<Span<'static>>, text: &str, style: Style) {
    if !text.is_empty() {
        out.push(Span::styled(sanitize(text), style));
    }
}

/// `style` after the SGR parameters `params` (`1;31`, `38;5;9`, `38:5:9`).
fn apply(mut style: Style, params: &str) -> Style {
    let codes: Vec<u16> = params
        .split([';', ':'])
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    let mut i = 0;
    while i < codes.len() {
        let code = codes[i];
        style = match code {
            0 => Style::new(),
            1 => style.add_modifier(Modifier::BOLD),
            2 => style.add_modifier(Modifier::DIM),
            3 => style.add_modifier(Modifier::ITALIC),
            4 => style.add_modifier(Modifier::UNDERLINED),
            7 => style.add_modifier(Modifier::REVERSED),
            9 => style.add_modifier(Modifier::CROSSED_OUT),
            22 => style.remove_modifier(Modifier::BOLD | Modifier::DIM),
            23 => style.remove_modifier(Modifier::ITALIC),
            24 => style.remove_modifier(Modifier::UNDERLINED),
            27 => style.remove_modifier(Modifier::REVERSED),
            29 => style.remove_modifier(Modifier::CROSSED_OUT),
            30..=37 => colour(style, (code - 30) as u8),
            90..=97 => colour(style, (code - 90 + 8) as u8),
            39 => Style { fg: None, ..style },
            38 | 48 => {
                // 5;N or 2;R;G;B: only a foreground index of the 16 is kept.
                let (n, skip) = match codes.get(i + 1) {
                    Some(5) => (codes.get(i + 2).copied(), 2),
                    Some(2) => (None, 4),
                    _ => (None, 0),
                };
                i += skip;
                match n {
                    Some(n) if code == 38 && n < 16 => colour(style, n as u8),
                    _ => style,
                }
            }
            _ => style,
        };
        i += 1;
    }
    style
}

fn colour(style: Style, index: u8) -> Style {
    let fg = theme::ansi(index).fg;
    Style { fg, ..style }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_become_theme_styles_and_text_stays_whole() {
        let spans = spans("\u{1b}[90m•\u{1b}[39m ok \u{1b}[1;31mFAIL\u{1b}[0m end");
        let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "• ok FAIL end");
        assert_eq!(spans[0].style.fg, theme::DIM.fg);
        assert_eq!(spans[1].style.fg, None);
        assert_eq!(spans[2].style.fg, theme::BAD.fg);
        assert!(spans[2].style.add_modifier.contains(Modifier::BOLD));
        assert_eq!(spans[3].style, Style::new());
    }

    #[test]
    fn other_colours_and_escapes_draw_nothing_of_their_own() {
        let spans = spans("\u{1b}[38;2;1;2;3ma\u{1b}[38;5;200mb\u{1b}[2Jc\u{1b}\t");
        let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert!(text.starts_with("abc"), "{text:?}");
        assert!(spans.iter().all(|s| s.style.fg.is_none()));
    }
}
