//! What the diff pane shows at a `run_tests` prompt: the run the user is
//! asked to allow (command, working directory, timeout, sandbox), instead of
//! the previous edit's diff.
//!
//! What must stay true: every row comes from the request or from the
//! session's settings, never from the model's text; the sandbox row says
//! plainly when the request does not report it.

use crate::agent::ApprovalAction;
use crate::tui::app::App;
use crate::tui::render::text::sanitize;
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use std::time::Duration;

/// `(label, value)` rows for the open `run_tests` request, if that is what is open.
pub fn rows(app: &App) -> Option<Vec<(&'static str, String)>> {
    let request = app.approvals.current()?;
    let ApprovalAction::RunTests { command, sandbox } = &request.action else {
        return crate::tui::panes::diff::mcp_call::rows(&request.action);
    };
    let timeout = match app.test_timeout() {
        Some(t) => timeout_text(t),
        None => "the configured test timeout".to_string(),
    };
    Some(vec![
        ("Command", sanitize(&command.join(" "))),
        ("Working directory", app.workspace().to_string()),
        ("Timeout", timeout),
        ("Sandbox", sandbox_text(sandbox)),
    ])
}

/// The core's word for the run's confinement, or a plain "not reported".
fn sandbox_text(sandbox: &str) -> String {
    if sandbox.is_empty() {
        "not reported".to_string()
    } else {
        sanitize(sandbox)
    }
}

fn timeout_text(t: Duration) -> String {
    let secs = t.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) {
        format!("{} min (then killed, children too)", secs / 60)
    } else {
        format!("{secs} s (then killed, children too)")
    }
}

/// Draw the rows into the pane's inner area.
pub fn render(rows: &[(&'static str, String)], inner: Rect, buf: &mut Buffer) {
    let label_w = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    for (i, (label, value)) in rows.iter().enumerate().take(inner.height as usize) {
        let line = Line::from(vec![
            Span::styled(format!(" {label:<label_w$}  "), theme::MUTED),
            Span::raw(value.clone()),
        ]);
        buf.set_line(inner.x, inner.y + i as u16, &line, inner.width);
    }
}
