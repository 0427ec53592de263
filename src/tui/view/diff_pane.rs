//! The diff pane as the App shows it: which diff (the open approval's
//! review, with hunk marks, or the user's edited version, or an undo; else
//! a tool call the user selected; else the live preview of an edit still
//! streaming in; else the newest proposal), its title, and drawing it.

use crate::agent::ApprovalAction;
use crate::diff::FileDiff;
use crate::tools::calls::registry::LivePreview;
use crate::tui::app::{App, Focus};
use crate::tui::panes::diff::position;
use crate::tui::panes::diff::source::Source;
use crate::tui::panes::diff::view::{DiffKey, Marks};
use crate::tui::render::layout::Pane;
use crate::tui::render::text::sanitize;
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::text::Line;

/// The source of the diff pane for the current state.
pub fn key(app: &App) -> DiffKey {
    if let Some(request) = app.approvals.current() {
        if matches!(
            request.action,
            ApprovalAction::RunTests { .. } | ApprovalAction::McpCall { .. }
        ) {
            return DiffKey::TestRun {
                serial: app.approvals.serial(),
            };
        }
        return DiffKey::Review {
            serial: app.approvals.serial(),
            generation: app.approvals.review().generation,
        };
    }
    if app.calls.selected().is_none()
        && let Some(call) = app.live.shown()
    {
        return DiffKey::Live {
            index: call.index,
            generation: call.generation,
        };
    }
    match app.calls.diff_row() {
        Some(i) => DiffKey::Row(i),
        None => DiffKey::None,
    }
}

/// The diffs behind `key`.
pub fn files(app: &App, key: DiffKey) -> Vec<&FileDiff> {
    match key {
        DiffKey::Review { .. } => app
            .approvals
            .current()
            .map(|r| app.approvals.review().diffs(&r.action))
            .unwrap_or_default(),
        DiffKey::Row(i) => app
            .calls
            .rows()
            .get(i)
            .and_then(|r| r.diff.as_ref())
            .into_iter()
            .collect(),
        DiffKey::Live { .. } => app.live.shown().map(|c| c.diffs()).unwrap_or_default(),
        DiffKey::TestRun { .. } | DiffKey::None => Vec::new(),
    }
}

/// Lay out the pane's rows for the current state (called by `relayout`).
pub fn ensure(app: &mut App, width: usize, height: usize) {
    let key = key(app);
    // Diffs of several files, or of files the title does not name, get headers.
    let headers = matches!(key, DiffKey::Review { .. })
        && app.approvals.current().is_some_and(|r| {
            matches!(
                r.action,
                ApprovalAction::Undo { .. }
                    | ApprovalAction::Patch { .. }
                    | ApprovalAction::KeepRunOutput { .. }
                    | ApprovalAction::ApplyStage { .. }
            )
        });
    // A streaming patch names its files too.
    let headers = headers
        || matches!(key, DiffKey::Live { .. })
            && app
                .live
                .shown()
                .is_some_and(|c| c.kind == LivePreview::Patch);
    // A new preview's items may have been built with it, off this thread.
    let prepared = match key != app.diff.key() {
        true => app.live.take_prepared(key),
        false => None,
    };
    // The view is a field of the app; the diffs are borrowed from others.
    let mut view = std::mem::take(&mut app.diff);
    let source = || match prepared {
        Some(items) if !headers => items,
        _ => {
            let files = files(app, key);
            Source::new(&files, headers || files.len() > 1)
        }
    };
    view.ensure(key, source, width, height);
    view.settle(height);
    view.materialize(height);
    app.diff = view;
}

fn title(app: &App, key: DiffKey) -> String {
    let stat = |d: &FileDiff| {
        let new = if d.new_file { " (new file)" } else { "" };
        format!("{}{new} {}", sanitize(&d.path), d.stat())
    };
    match key {
        DiffKey::Review { .. } => {
            let Some(request) = app.approvals.current() else {
                return "Diff".into();
            };
            let review = app.approvals.review();
            match &request.action {
                ApprovalAction::Undo { files } => match files.len() {
                    1 => "Undo · this file goes back to its earlier content".to_string(),
                    n => format!("Undo · {n} files go back to their earlier content"),
                },
                ApprovalAction::Patch { files }
                | ApprovalAction::KeepRunOutput { files, .. }
                | ApprovalAction::ApplyStage { files, .. } => {
                    let n = files.len();
                    let s = if n == 1 { "" } else { "s" };
                    let what = match request.action {
                        ApprovalAction::KeepRunOutput { .. } => "Written by the test run",
                        ApprovalAction::ApplyStage { .. } => "Staged changeset (tests passed)",
                        _ => "Patch",
                    };
                    let mut t = format!("{what} · {n} file{s} · step {}", request.step);
                    if let Some(p) = review.place(review.cursor).filter(|_| review.selectable()) {
                        let path = files.get(p.file).map(|f| sanitize(&f.path));
                        t.push_str(&format!(
                            " · {} · hunk {}/{} (j/k, Space, ]/[ file)",
                            path.unwrap_or_default(),
                            p.hunk + 1,
                            p.hunks
                        ));
                    }
                    t
                }
                ApprovalAction::Delete { path, .. } => {
                    format!("Delete · {} · step {}", sanitize(path), request.step)
                }
                _ => {
                    let Some(d) = review.diffs(&request.action).first().copied() else {
                        return "Diff".into();
                    };
                    let mut t = format!("Diff · {} · step {}", stat(d), request.step);
                    if review.edited.is_some() {
                        t.push_str(" · your edited version");
                    }
                    if review.selectable() {
                        t.push_str(&format!(
                            " · hunk {}/{} (j/k, Space)",
                            review.cursor + 1,
                            review.accepted.len()
                        ));
                    }
                    t
                }
            }
        }
        DiffKey::Row(i) => match app.calls.rows().get(i) {
            Some(row) => match &row.diff {
                Some(d) => format!("Diff · {} · step {}", stat(d), row.step),
                None => "Diff".into(),
            },
            None => "Diff".into(),
        },
        DiffKey::Live { .. } => match app.live.shown() {
            Some(call) if call.kind == LivePreview::Patch => {
                let n = call.files.len();
                let s = if n == 1 { "" } else { "s" };
                format!("Patch · {n} file{s} so far · streaming… (incomplete)")
            }
            Some(call) => {
                let what = match &call.preview {
                    Some(d) => stat(d),
                    None => sanitize(call.path().unwrap_or("")),
                };
                format!("Diff · {what} · streaming… (incomplete)")
            }
            None => "Diff".into(),
        },
        DiffKey::TestRun { .. } => match app.approvals.current() {
            Some(r) if matches!(r.action, ApprovalAction::McpCall { .. }) => {
                format!("MCP call · step {} · what y allows", r.step)
            }
            Some(r) => format!("Test run · step {} · what y allows", r.step),
            None => "Test run".into(),
        },
        DiffKey::None => "Diff".into(),
    }
}

/// Draw the pane: its block, the rows, and the review marks.
pub fn render(app: &App, pane: &Pane, buf: &mut Buffer) {
    let key = app.diff.key();
    let inner = pane.inner();
    let mut title = title(app, key);
    if !matches!(key, DiffKey::TestRun { .. }) {
        title.push_str(&position(
            app.diff.total_rows(),
            app.diff
                .scroll()
                .top(app.diff.total_rows(), inner.height as usize),
            inner.height as usize,
        ));
    }
    crate::tui::render::chrome::block(pane, &title, app.focus == Focus::Diff, buf);
    let hint = |text: String, buf: &mut Buffer, y: u16| {
        let style = theme::DIM;
        buf.set_line(inner.x, y, &Line::styled(text, style), inner.width);
    };
    if let DiffKey::Live { .. } = key
        && let Some(call) = app.live.shown()
        && call.diffs().is_empty()
    {
        let note = call.note.unwrap_or("waiting for the edit…");
        let style = theme::STREAMING;
        let line = Line::styled(format!(" ⋯ {} is streaming: {note}", call.tool), style);
        buf.set_line(inner.x, inner.y, &line, inner.width);
        return;
    }
    if let DiffKey::TestRun { .. } = key
        && let Some(rows) = super::test_run::rows(app)
    {
        return super::test_run::render(&rows, inner, buf);
    }
    if app.diff.total_rows() == 0 {
        let text = match app.calls.selected_row() {
            Some(row) => format!(
                "Step {} ({}) changes no file; Enter shows its details.",
                row.step, row.tool
            ),
            None => "No edit proposed yet.".to_string(),
        };
        return hint(text, buf, inner.y);
    }
    let review = app.approvals.review();
    let marks = (matches!(key, DiffKey::Review { .. }) && review.selectable()).then_some(Marks {
        accepted: &review.accepted,
        cursor: review.cursor,
        files: &review.files,
    });
    app.diff.render(inner, buf, marks);
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod live_tests;
