//! Light markdown for assistant text: ``` fences make code blocks, and
//! `inline code`, **bold** and `#` headings are styled within a line.

use crate::tui::panes::line_kind::Kind;
use crate::tui::render::theme;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

/// The kind of one line of markdown-ish text, tracking ``` fences.
pub fn markdown_kind(line: &str, base: Kind, in_code: &mut bool) -> Kind {
    if !matches!(base, Kind::Assistant | Kind::Final) {
        return base;
    }
    if line.trim_start().starts_with("```") {
        *in_code = !*in_code;
        Kind::Fence
    } else if *in_code {
        Kind::Code
    } else {
        base
    }
}

pub const CODE: Style = theme::ACCENT;

/// `inline code`, **bold** and `#` headings.
pub fn inline_markdown(text: &str, base: Style) -> Vec<Span<'static>> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('#') {
        let heading = trimmed.trim_start_matches('#').trim_start();
        return vec![Span::styled(
            heading.to_string(),
            base.add_modifier(Modifier::BOLD),
        )];
    }
    let mut spans = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let tick = rest.find('`');
        let bold = rest.find("**");
        match (tick, bold) {
            (Some(t), b) if b.is_none_or(|b| t < b) => match rest[t + 1..].find('`') {
                Some(end) => {
                    push(&mut spans, &rest[..t], base);
                    push(&mut spans, &rest[t + 1..t + 1 + end], CODE);
                    rest = &rest[t + 2 + end..];
                }
                None => break,
            },
            (_, Some(b)) => match rest[b + 2..].find("**") {
                Some(end) => {
                    push(&mut spans, &rest[..b], base);
                    push(
                        &mut spans,
                        &rest[b + 2..b + 2 + end],
                        base.add_modifier(Modifier::BOLD),
                    );
                    rest = &rest[b + 4 + end..];
                }
                None => break,
            },
            _ => break,
        }
    }
    push(&mut spans, rest, base);
    spans
}

fn push(spans: &mut Vec<Span<'static>>, text: &str, style: Style) {
    if !text.is_empty() {
        spans.push(Span::styled(text.to_string(), style));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_code_bold_and_headings() {
        let spans = inline_markdown("call `divide(1, 0)` for **errors**", Style::new());
        let text: Vec<&str> = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, ["call ", "divide(1, 0)", " for ", "errors"]);
        assert_eq!(spans[1].style, CODE);
        assert!(spans[3].style.add_modifier.contains(Modifier::BOLD));
        let heading = inline_markdown("## Plan", Style::new());
        assert_eq!(heading[0].content, "Plan");
        // An unclosed backtick is left as typed.
        let open = inline_markdown("a `b", Style::new());
        assert_eq!(open[0].content, "a `b");
    }

    #[test]
    fn fences_toggle_code_blocks() {
        let mut in_code = false;
        let kinds: Vec<Kind> = ["text", "```py", "x = 1", "```", "after"]
            .iter()
            .map(|l| markdown_kind(l, Kind::Assistant, &mut in_code))
            .collect();
        assert_eq!(
            kinds,
            [
                Kind::Assistant,
                Kind::Fence,
                Kind::Code,
                Kind::Fence,
                Kind::Assistant
            ]
        );
    }
}
