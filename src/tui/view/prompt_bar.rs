//! The approval prompt bar that replaces the input while a request is open:
//! the question (with the hunk review's state, or the user's edited version)
//! on the first row, and the keys that apply to this request on the second
//! (or the reason being typed, or a one-off message). A draft in the input
//! stays on screen, on a row of its own above the question.

use crate::agent::{ApprovalAction, ApprovalRequest};
use crate::tui::app::App;
use crate::tui::approval::review::Review;
use crate::tui::input::keymap::{self, Action, Layer};
use crate::tui::render::text::{sanitize, truncate, truncate_left, width};
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Rows the prompt bar needs.
pub const HEIGHT: u16 = 2;

/// Rows the prompt bar takes for `app`: one more while a draft waits.
pub fn height(app: &App) -> u16 {
    HEIGHT + u16::from(!app.input().is_empty())
}

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let area = match area.height > HEIGHT {
        true => {
            draft(app, Rect { height: 1, ..area }, buf);
            Rect {
                y: area.y + 1,
                height: area.height - 1,
                ..area
            }
        }
        false => area,
    };
    let approvals = &app.approvals;
    let Some(request) = approvals.current() else {
        return;
    };
    let review = approvals.review();
    let w = area.width as usize;
    let bar = theme::PROMPT_BAR;
    let key = theme::WARN_BOLD;
    let dim = theme::MUTED;
    let undo = matches!(request.action, ApprovalAction::Undo { .. });
    let question = sanitize(&question(&request.action, review));
    let queued = match approvals.len() {
        1 => String::new(),
        n => format!("  (+{} queued)", n - 1),
    };
    let step = if undo {
        String::new()
    } else {
        format!("Step {} · ", request.step)
    };
    buf.set_style(Rect { height: 1, ..area }, bar);
    let (first, second) = match approvals.reason() {
        None => {
            let place = review.place(review.cursor).filter(|_| review.selectable());
            let hunks = if let Some(p) = place {
                format!(
                    " · file {}/{} · hunk {}/{} · {} of {} accepted",
                    p.file + 1,
                    p.files,
                    p.hunk + 1,
                    p.hunks,
                    review.accepted_count(),
                    review.accepted.len()
                )
            } else if review.selectable() {
                format!(
                    " · hunk {}/{} · {} of {} accepted",
                    review.cursor + 1,
                    review.accepted.len(),
                    review.accepted_count(),
                    review.accepted.len()
                )
            } else {
                String::new()
            };
            let text = format!(" {step}{question}? [y/N]{hunks}{queued}");
            let groups = key_groups(app, request, review);
            let arming = approvals.arming_until(app.now()).is_some();
            let waiting = app.composing() && !approvals.taken();
            let second = match app.flash() {
                _ if arming => Line::styled(
                    truncate(" arming… keys typed this instant are ignored", w),
                    dim,
                ),
                _ if waiting => Line::styled(
                    truncate(
                        " prompt waiting: you are typing, keys stay text · Esc to leave the input, or Tab",
                        w,
                    ),
                    theme::WARN,
                ),
                Some(flash) => Line::styled(
                    format!(" {}", truncate(&sanitize(flash), w.saturating_sub(1))),
                    theme::WARN,
                ),
                None => hints(&groups, w, key, dim),
            };
            (Line::styled(truncate(&text, w), bar), second)
        }
        Some(reason) => {
            let head = format!(" {step}Decline “{question}” because: ");
            let room = w.saturating_sub(width(&head) + 1);
            let shown = truncate_left(&sanitize(reason), room);
            let first = Line::from(vec![
                Span::styled(head, bar),
                Span::styled(shown, bar.remove_modifier(Modifier::BOLD)),
                Span::styled("▏", bar),
            ]);
            let (send, send_what) = keymap::hint(Layer::Reason, Action::SendReason);
            let (back, back_what) = keymap::hint(Layer::Reason, Action::CancelReason);
            let hints = Line::from(vec![
                Span::styled(format!(" {send}"), key),
                Span::styled(send_what, dim),
                Span::styled(back, key),
                Span::styled(back_what, dim),
            ]);
            (first, hints)
        }
    };
    buf.set_line(area.x, area.y, &first, area.width);
    if area.height > 1 {
        buf.set_line(area.x, area.y + 1, &second, area.width);
    }
}

/// The draft in the input, its end in view (where the typing is).
fn draft(app: &App, area: Rect, buf: &mut Buffer) {
    let label = " draft: ";
    let text = sanitize(&app.input().text().replace('\n', " ⏎ "));
    let room = (area.width as usize).saturating_sub(width(label) + 1);
    let line = Line::from(vec![
        Span::styled(label, theme::MUTED),
        Span::raw(truncate_left(&text, room)),
    ]);
    buf.set_line(area.x, area.y, &line, area.width);
}

/// The prompt's question: the user's version, the accepted hunks only, or
/// the proposal as it stands.
fn question(action: &ApprovalAction, review: &Review) -> String {
    match (action, &review.edited) {
        (ApprovalAction::Edit { path, .. }, Some(e)) => {
            format!("Write your edited version of {path} ({})", e.diff.stat())
        }
        // Only what `y` would write: the accepted hunks.
        (ApprovalAction::Edit { path, diff, .. }, None) if review.modified() => {
            let verb = if diff.new_file { "Create" } else { "Write" };
            format!("{verb} {path} ({} accepted)", review.accepted_stat(diff))
        }
        (ApprovalAction::Patch { .. }, None) if review.modified() => {
            let (files, stat) = review.accepted_of_patch(action);
            let s = if files == 1 { "" } else { "s" };
            format!("Apply patch to {files} file{s} ({stat} accepted)")
        }
        (action, _) => action.prompt(),
    }
}

/// The keys that apply to `request`, in order of importance, as
/// `(keys, what)`; the keys come from the key map.
fn key_groups(app: &App, request: &ApprovalRequest, review: &Review) -> Vec<(String, String)> {
    let undo = matches!(request.action, ApprovalAction::Undo { .. });
    let edit = matches!(request.action, ApprovalAction::Edit { .. });
    let hint = |layer, action| {
        let (k, what): (&str, &str) = keymap::hint(layer, action);
        (k.to_string(), what.to_string())
    };
    let prompt = |action| hint(Layer::Prompt, action);
    let yes = if review.edited.is_some() {
        " write your version"
    } else if review.modified() {
        " apply accepted"
    } else {
        " yes"
    };
    let mut groups = vec![(prompt(Action::Approve).0, yes.to_string())];
    // What the body shows: a diff, or a command or call to read.
    let diff = !matches!(
        request.action,
        ApprovalAction::RunTests { .. } | ApprovalAction::McpCall { .. }
    );
    if app.diff_full() {
        // Full screen, Esc goes back and never declines: the hints say so.
        let (back, _) = prompt(Action::FullDiff);
        let (no, what) = prompt(Action::Decline);
        groups.push((no.replace("/Esc", ""), what));
        groups.push((format!("{back}/Esc"), " back".to_string()));
        if review.selectable() {
            groups.push(prompt(Action::NextHunk));
            groups.push(prompt(Action::ToggleHunk));
        }
        let (keys, _) = prompt(Action::ScrollDiff);
        groups.push((format!("↑↓ {keys}"), " scroll".to_string()));
        return groups;
    }
    if review.edited.is_some() {
        // Enter and Esc never discard the user's own version.
        groups.push(("n n".to_string(), " discard yours".to_string()));
    } else {
        groups.push(prompt(Action::Decline));
    }
    if review.selectable() {
        groups.push(prompt(Action::NextHunk));
        groups.push(prompt(Action::ToggleHunk));
    }
    if review.selectable() && review.several_files() {
        groups.push(prompt(Action::NextFile));
    }
    if !app.auto_approved().is_empty() {
        groups.push(hint(Layer::Global, Action::Revoke));
    }
    if edit {
        groups.push(prompt(Action::EditProposal));
    }
    if request.allow_for_task && !undo && !review.modified() {
        let tool = crate::tui::render::text::sanitize(&request.tool.to_string());
        let keys = prompt(Action::ApproveForTask).0;
        groups.push((keys, format!(" yes to every {tool} this task")));
    }
    let (full, full_what) = prompt(Action::FullDiff);
    groups.push(match diff {
        true => (full, full_what),
        false => (full, " full screen".to_string()),
    });
    if !undo {
        groups.push(prompt(Action::DeclineWithReason));
    }
    // Without hunks to move between, the arrows scroll the diff too.
    let (keys, what) = prompt(Action::ScrollDiff);
    let keys = if review.selectable() {
        keys
    } else {
        format!("↑↓ {keys}")
    };
    let what = match diff {
        true => what,
        false => " scroll".to_string(),
    };
    groups.push((keys, what));
    groups
}

/// Said when not every key fits on the hint row.
const MORE: &str = "  … F1 for all keys";

/// The key groups in order of importance, as many as fit in `w` columns;
/// when some do not fit, the row ends with `… F1 for all keys` instead of
/// cutting them silently.
fn hints(groups: &[(String, String)], w: usize, key: Style, dim: Style) -> Line<'static> {
    let need = |(k, what): &(String, String)| 2 + width(k) + width(what);
    let total: usize = groups.iter().map(need).sum();
    let room = if total <= w {
        w
    } else {
        w.saturating_sub(width(MORE))
    };
    let mut spans = Vec::new();
    let mut used = 0;
    for group in groups {
        if used + need(group) > room {
            break;
        }
        used += need(group);
        let (k, what) = group;
        spans.push(Span::styled(format!("  {k}"), key));
        spans.push(Span::styled(what.clone(), dim));
    }
    if total > w {
        spans.push(Span::styled(MORE, dim));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(line: &Line) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn hints_that_do_not_fit_end_with_a_pointer_to_the_help() {
        let groups: Vec<(String, String)> = ["y yes", "n no", "r no, with a reason", "e edit"]
            .iter()
            .map(|g| {
                let (k, w) = g.split_once(' ').unwrap_or((g, ""));
                (k.to_string(), format!(" {w}"))
            })
            .collect();
        let all = hints(&groups, 80, Style::new(), Style::new());
        assert_eq!(text(&all), "  y yes  n no  r no, with a reason  e edit");
        let cut = hints(&groups, 40, Style::new(), Style::new());
        assert_eq!(text(&cut), "  y yes  n no  … F1 for all keys");
        assert!(width(&text(&cut)) <= 40);
    }
}
