//! The verification receipt shown under an accepted final answer: the test
//! command, its exit code and summary, the files changed with +N/−M and the
//! short hash of the workspace diff, all computed by stepwise (the heading
//! says so), never taken from the model's text.

use crate::agent::Receipt;
use crate::present::{self, Tone};
use crate::tui::panes::line_kind::Kind;
use crate::tui::render::text::wrap;
use crate::tui::render::theme;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// The receipt as conversation lines (the wording is `present`'s).
pub fn lines(receipt: &Receipt) -> Vec<(Kind, String)> {
    present::receipt_lines(receipt)
        .into_iter()
        .map(|line| {
            let kind = match line.tone {
                Tone::Problem => Kind::ReceiptBad,
                Tone::Heading | Tone::Normal => Kind::Receipt,
            };
            (kind, line.text)
        })
        .collect()
}

/// The rows of one receipt line (sanitized `text`) at `width`: a colored bar,
/// the heading in bold, a problem in red.
pub fn rows(text: &str, kind: Kind, first: bool, width: usize) -> Vec<Line<'static>> {
    let color = if kind == Kind::ReceiptBad {
        theme::BAD
    } else {
        theme::GOOD
    };
    let bar = [Span::styled("┃ ", color)];
    let style = match (first, kind) {
        (true, _) => color.add_modifier(Modifier::BOLD),
        (false, Kind::ReceiptBad) => theme::BAD,
        _ => Style::new(),
    };
    wrap(&[Span::styled(text.to_string(), style)], width, &bar, &bar)
}
