//! The verification receipt shown under an accepted final answer: the test
//! command, its exit code and summary, the files changed with +N/−M and the
//! short hash of the workspace diff, all computed by stepwise (the heading
//! says so), never taken from the model's text.

use crate::agent::Receipt;
use crate::tui::panes::line_kind::Kind;
use crate::tui::render::text::wrap;
use crate::tui::render::theme;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// The receipt as conversation lines.
pub fn lines(receipt: &Receipt) -> Vec<(Kind, String)> {
    let mut out = vec![(
        Kind::Receipt,
        "Receipt — computed by stepwise, not the model".to_string(),
    )];
    match &receipt.tests {
        Some(t) => {
            let code = t
                .exit_code
                .map_or("no exit code".to_string(), |c| format!("exit {c}"));
            let summary = if t.summary.is_empty() {
                String::new()
            } else {
                format!(" · {}", t.summary)
            };
            let kind = if t.exit_code == Some(0) {
                Kind::Receipt
            } else {
                Kind::ReceiptBad
            };
            out.push((kind, format!("tests  {} → {code}{summary}", t.command)));
        }
        None => out.push((Kind::Receipt, "tests  not run in this task".to_string())),
    }
    let files = if receipt.files.is_empty() {
        "no file changed in this task".to_string()
    } else {
        receipt
            .files
            .iter()
            .map(|f| {
                let new = if f.created { " (new)" } else { "" };
                format!("{} +{} \u{2212}{}{new}", f.path, f.added, f.removed)
            })
            .collect::<Vec<_>>()
            .join(" · ")
    };
    out.push((Kind::Receipt, format!("files  {files}")));
    out.push((Kind::Receipt, format!("diff   #{}", receipt.diff_hash)));
    out
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
