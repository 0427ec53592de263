//! The two-line header: model, workspace, the project rules file, what `a`
//! auto-approves (and the key that revokes it) and mouse mode on the first
//! line; task state, step n/max, tokens (task and session, cached), the
//! estimated cost and elapsed time on the second. Drops detail rather than
//! overflow.

use crate::llm::TokenUsage;
use crate::tui::app::{App, TaskState, format_elapsed};
use crate::tui::render::text::{sanitize, truncate_left, width};
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let w = area.width as usize;
    let bar = theme::HEADER_BAR;
    buf.set_style(Rect { height: 1, ..area }, bar);

    // Line 1: name, model, workspace ... rules, auto-approved, mouse, help.
    let name = " stepwise ";
    let model = format!(" {} ", sanitize(app.model()));
    // Keep room for at least a bit of the workspace.
    let room = w.saturating_sub(width(name) + width(&model) + 3 + 12);
    let right = right_side(app, bar, room);
    let right_w: usize = right.iter().map(|s| s.width()).sum();
    let room = w.saturating_sub(width(name) + width(&model) + right_w + 3);
    let workspace = format!(
        " {} ",
        truncate_left(&sanitize(app.workspace()), room.saturating_sub(2))
    );
    let mut left = vec![
        Span::styled(name, bar.add_modifier(Modifier::BOLD)),
        Span::styled("│", bar),
        Span::styled(model, bar),
        Span::styled("│", bar),
        Span::styled(workspace, bar),
    ];
    let left_w: usize = left.iter().map(|s| s.width()).sum();
    left.push(Span::styled(
        " ".repeat(w.saturating_sub(left_w + right_w)),
        bar,
    ));
    left.extend(right);
    buf.set_line(area.x, area.y, &Line::from(left), area.width);
    if area.height >= 2 {
        status_line(app, area, buf);
    }
}

/// Line 2: state, step, tokens, the estimated cost and elapsed time, with
/// as much detail as fits.
fn status_line(app: &App, area: Rect, buf: &mut Buffer) {
    let w = area.width as usize;
    let (glyph, color) = state_style(app.state());
    let label = match (app.retry_countdown(), app.token_wait()) {
        (Some(secs), _) => format!("{} · retrying in {secs}s", app.state().label()),
        (None, Some((silent, Some(left)))) => format!(
            "{} · no token for {silent}s, gives up in {left}s",
            app.state().label()
        ),
        (None, Some((silent, None))) => {
            format!("{} · no token for {silent}s", app.state().label())
        }
        (None, None) => app.state().label().to_string(),
    };
    let state = Span::styled(
        format!(" {glyph} {label}"),
        color.add_modifier(Modifier::BOLD),
    );
    let step = if app.max_steps() > 0 {
        format!("step {}/{}", app.step(), app.max_steps())
    } else {
        "step –".to_string()
    };
    let task_tokens = app.task_tokens();
    let cached = match task_tokens.cached_percent() {
        None => String::new(),
        Some(percent) => format!(" ({} cached, {percent}%)", count(task_tokens.cached_tokens)),
    };
    let long = format!(
        "tokens in/out {}{cached} · session {}",
        tokens(app.task_tokens()),
        tokens(app.session_tokens())
    );
    let medium = format!(
        "in/out {} · session {}",
        tokens(app.task_tokens()),
        tokens(app.session_tokens())
    );
    let short = format!("in/out {}", tokens(app.task_tokens()));
    let elapsed = format_elapsed(app.elapsed());
    let dim = theme::MUTED;
    let sep = Span::styled(" │ ", theme::DIM);
    let cost = match (app.task_cost(), app.session_cost()) {
        (Some(t), Some(s)) => Some(format!("≈${t:.3} · session ≈${s:.3} (est.)")),
        (Some(t), None) => Some(format!("≈${t:.3} (est.)")),
        (None, Some(s)) => Some(format!("session ≈${s:.3} (est.)")),
        (None, None) => None,
    };
    // The estimated cost goes before token detail.
    let with_cost = [
        (&long, true),
        (&medium, true),
        (&short, true),
        (&long, false),
        (&medium, false),
        (&short, false),
    ];
    for (toks, show_cost) in with_cost {
        let mut spans = vec![
            state.clone(),
            sep.clone(),
            Span::styled(step.clone(), dim),
            sep.clone(),
            Span::styled(toks.clone(), dim),
        ];
        match &cost {
            Some(cost) if show_cost => {
                spans.push(sep.clone());
                spans.push(Span::styled(cost.clone(), dim));
            }
            None if show_cost => continue,
            _ => {}
        }
        spans.push(sep.clone());
        spans.push(Span::styled(elapsed.clone(), dim));
        let line = Line::from(spans);
        if line.width() <= w {
            buf.set_line(area.x, area.y + 1, &line, area.width);
            return;
        }
    }
    let line = Line::from(vec![state, sep, Span::styled(step, dim)]);
    buf.set_line(area.x, area.y + 1, &line, area.width);
}

/// The right of line 1, as much as fits in `room` columns: what is
/// auto-approved (and F3 to revoke it) first, then how test runs are
/// confined, the rules file, the mouse mode and the help key.
fn right_side(app: &App, bar: Style, room: usize) -> Vec<Span<'static>> {
    let warn = theme::HEADER_WARN;
    let mut items: Vec<Vec<(String, Style)>> = Vec::new();
    if !app.auto_approved().is_empty() {
        let tools: Vec<String> = app.auto_approved().iter().map(|t| t.to_string()).collect();
        let tools = tools.join(", ");
        items.push(vec![
            (
                format!(" auto-approve: {tools} (this task) · F3 revokes "),
                warn,
            ),
            (format!(" auto-approve: {tools} (this task) "), warn),
            (format!(" auto: {tools} · F3 "), warn),
        ]);
    }
    if app.stage().is_some() {
        // Writes and test runs go to the stage without a prompt.
        items.push(vec![
            (" staged: review at the end (/stage) ".to_string(), bar),
            (" staged ".to_string(), bar),
        ]);
    }
    if !app.sandbox().is_empty() {
        let sandbox = sanitize(app.sandbox());
        // Anything short of full isolation is worth the user's eye.
        let style = if app.sandbox().starts_with("sandboxed") {
            bar
        } else {
            warn
        };
        items.push(vec![
            (format!(" tests: {sandbox} "), style),
            (format!(" {sandbox} "), style),
        ]);
    }
    if !app.rules().is_empty() {
        let rules = sanitize(&app.rules().join(", "));
        items.push(vec![
            (format!(" rules: {rules} "), bar),
            (" rules ✓ ".to_string(), bar),
        ]);
    }
    if !app.mouse_capture() {
        items.push(vec![
            (" mouse off (F2) ".to_string(), theme::HEADER_WARN),
            (" mouse off ".to_string(), theme::HEADER_WARN),
        ]);
    }
    items.push(vec![(" F1 help ".to_string(), bar)]);
    let mut out = Vec::new();
    let mut used = 0;
    for variants in items {
        if let Some((text, style)) = variants.into_iter().find(|(t, _)| used + width(t) <= room) {
            used += width(&text);
            out.push(Span::styled(text, style));
        }
    }
    out
}

fn state_style(state: TaskState) -> (&'static str, Style) {
    match state {
        TaskState::Idle => ("○", theme::MUTED),
        TaskState::Thinking | TaskState::Running => ("●", theme::ACCENT),
        TaskState::AwaitingApproval => ("?", theme::WARN),
        TaskState::RunningTests => ("▶", theme::ACCENT),
        TaskState::Interrupting => ("…", theme::DECLINED),
        TaskState::Done => ("✓", theme::GOOD),
        TaskState::Failed => ("✗", theme::BAD),
        TaskState::Interrupted => ("⊘", theme::DECLINED),
    }
}

/// `1.2k/240`: prompt (in) and completion (out) tokens.
fn tokens(t: TokenUsage) -> String {
    format!("{}/{}", count(t.prompt_tokens), count(t.completion_tokens))
}

fn count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1e3),
        10_000..1_000_000 => format!("{}k", n / 1_000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn token_counts_are_compact() {
        assert_eq!(super::count(999), "999");
        assert_eq!(super::count(1_234), "1.2k");
        assert_eq!(super::count(45_678), "45k");
        assert_eq!(super::count(2_500_000), "2.5M");
    }
}
