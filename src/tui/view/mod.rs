//! Drawing the App, at the top of the TUI (it reads every component):
//! `header` and `prompt_bar` are the chrome around the panes, `diff_pane`
//! decides and draws the diff pane, `test_run` its rows at a run's prompt.
//! `relayout` computes the panes for the frame size and brings the
//! wrap caches up to date (the only work that grows with new content), then
//! `render` paints the state. Each pane draws only its visible rows.

mod diff_pane;
pub mod header;
pub mod prompt_bar;
mod test_run;

use crate::tui::app::{App, Focus, Overlay};
use crate::tui::overlays::help;
use crate::tui::panes::diff::view::DiffKey;
use crate::tui::render::chrome::{block, overlay_frame};
use crate::tui::render::layout::{self, Needs, detail_area};
use crate::tui::render::text::truncate;
use crate::tui::render::theme;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;

/// Draw one frame of the state: a pure function of `app`, once `relayout`
/// prepared it for the frame's area.
pub fn draw(frame: &mut Frame, app: &App) {
    render(app, frame.area(), frame.buffer_mut());
    theme::paint(frame.buffer_mut(), app.look());
}

/// The update step for a frame (`relayout`), then the frame (`draw`): what
/// the run loop does each time it draws.
pub fn prepare_and_draw(frame: &mut Frame, app: &mut App) {
    relayout(app, frame.area());
    draw(frame, app);
}

/// The update step before a frame: compute the panes for `area` and bring
/// the caches they show up to date (wrapping, previews, the layout). The
/// only work that grows with new content, and the only `&mut` of drawing.
pub fn relayout(app: &mut App, area: Rect) {
    let input_inner_width = area.width;
    app.live.refresh(app.now());
    let needs = Needs {
        tool_rows: app.calls.rows().len(),
        has_diff: diff_pane::key(app) != DiffKey::None,
        prompt_rows: if app.approvals.is_open() {
            prompt_bar::height(app)
        } else {
            0
        },
        input_rows: app.input.rows(input_inner_width),
        diff_full: app.diff_full(),
    };
    let panes = layout::compute(area, needs);
    app.panes = panes;
    if panes.too_small {
        return;
    }
    let conv = panes.conversation.inner();
    app.conversation
        .ensure_wrapped(conv.width as usize, conv.height as usize);
    if let Some(diff) = panes.diff {
        let inner = diff.inner();
        diff_pane::ensure(app, inner.width as usize, inner.height as usize);
    }
    let overlay_width = detail_area(panes.body).width as usize;
    match app.layers.covering_mut() {
        Some(Overlay::Detail(detail)) => {
            if let Some(call) = app.calls.rows().get(detail.row) {
                detail.ensure(call, overlay_width);
            }
        }
        Some(Overlay::SessionDiff(view)) => view.ensure(overlay_width),
        _ => {}
    }
    let typing = app.focus == Focus::Input && app.layers.is_empty() && !app.approvals.is_open();
    app.input.set_focused(typing);
}

/// Paint the state (after `relayout` for the same area).
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let panes = app.panes;
    if panes.too_small {
        too_small(area, buf);
        return;
    }
    header::render(app, panes.header, buf);

    let conv_title = match app.conversation.scroll().is_following() {
        true => "Conversation".to_string(),
        false => "Conversation · scrolled (End follows)".to_string(),
    };
    block(
        &panes.conversation,
        &conv_title,
        app.focus == Focus::Conversation,
        buf,
    );
    app.conversation.render(panes.conversation.inner(), buf);

    let tools_title = match app.calls.selected_row() {
        Some(row) => format!(
            "Tool calls · step {} selected (Enter details, End newest)",
            row.step
        ),
        None => format!("Tool calls ({})", app.calls.rows().len()),
    };
    block(
        &panes.tools,
        &tools_title,
        app.focus == Focus::ToolCalls,
        buf,
    );
    app.calls
        .render(panes.tools.inner(), buf, app.focus == Focus::ToolCalls);

    if let Some(pane) = panes.diff {
        diff_pane::render(app, &pane, buf);
    }

    if let Some(prompt) = panes.prompt {
        prompt_bar::render(app, prompt, buf);
    }
    if let Some(input) = panes.input {
        let title = match (app.flash(), app.is_running()) {
            (Some(flash), _) => flash.to_string(),
            (None, true) => "Task running · Ctrl+C interrupts".to_string(),
            (None, false) => "Task · Enter sends · ? help".to_string(),
        };
        let focused = app.focus == Focus::Input;
        block(&input, &title, focused, buf);
        if app.flash().is_some() {
            let r = input.outer;
            buf.set_style(Rect { height: 1, ..r }, theme::WARN);
        }
        app.input.render(input.inner(), buf);
        if let Some(picker) = app.picker() {
            picker.render(input.outer, buf);
        } else if let Some(typed) = app.command_menu() {
            crate::tui::input::slash::render_menu(&typed, input.outer, buf);
        }
    }

    match app.layers.covering() {
        Some(Overlay::Help) => help::render(area, buf, app.layers.help_top()),
        Some(Overlay::Detail(detail)) => {
            overlay_frame(
                " Tool call details · ↑↓ PgUp PgDn scroll · Esc closes ",
                panes.body,
                buf,
            );
            detail.render(detail_area(panes.body), buf);
        }
        Some(Overlay::SessionDiff(view)) => {
            overlay_frame(
                " Session diff (/diff) · ↑↓ PgUp PgDn scroll · Esc closes ",
                panes.body,
                buf,
            );
            view.render(detail_area(panes.body), buf);
        }
        Some(Overlay::FullDiff) | None => {}
    }
}

fn too_small(area: Rect, buf: &mut Buffer) {
    let lines = [
        "Terminal too small".to_string(),
        format!(
            "{}x{} — stepwise needs at least {}x{}",
            area.width,
            area.height,
            layout::MIN_WIDTH,
            layout::MIN_HEIGHT
        ),
        "Enlarge the window, or press Ctrl+D to quit.".to_string(),
    ];
    let top = area.y + area.height.saturating_sub(lines.len() as u16) / 2;
    for (i, text) in lines.iter().enumerate() {
        if top + (i as u16) >= area.bottom() {
            break;
        }
        let text = truncate(text, area.width as usize);
        let x = area.x
            + (area
                .width
                .saturating_sub(crate::tui::render::text::width(&text) as u16))
                / 2;
        let style = if i == 0 {
            theme::WARN_BOLD
        } else {
            Style::new()
        };
        buf.set_line(x, top + i as u16, &Line::styled(text, style), area.width);
    }
}
