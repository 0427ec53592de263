//! The slash commands: ONE table ([`SLASH`]) of every `/command`, read by
//! the help overlay (its Commands section), by the `/` menu that opens as
//! the user types a slash (filtered by what follows it) and by the message
//! for an unknown command, so none of them can leave a command out.
//!
//! What must stay true: every command `App::run_command` carries out has a
//! row here (`tests/tui/commands.rs` types each one).

use crate::tui::render::text::width;
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// One command: its name (what follows the slash), how it is typed, and
/// what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slash {
    pub name: &'static str,
    pub usage: &'static str,
    pub what: &'static str,
}

const fn row(name: &'static str, usage: &'static str, what: &'static str) -> Slash {
    Slash { name, usage, what }
}

/// Every command, in the order help and the menu list them.
#[rustfmt::skip]
pub const SLASH: &[Slash] = &[
    row("help", "/help", "every key and command (also F1 and ?)"),
    row("diff", "/diff", "everything stepwise changed in this session"),
    row("undo", "/undo  /undo all", "revert the last change / all changes (y/N)"),
    row("compact", "/compact", "shorten the model's context now"),
    row("continue", "/continue", "go on after an error or interrupt"),
    row("clear", "/clear", "a new conversation"),
    row("model", "/model  /model NAME", "the model and the server's list · ask NAME from now on"),
    row("mcp", "/mcp", "the MCP servers, their state and tools"),
    row("stage", "/stage", "staged tasks on/off: one tested changeset to review"),
    row("mouse", "/mouse", "mouse capture on/off (also F2)"),
    row("revoke", "/revoke", "revoke auto-approvals (also F3)"),
    row("quit", "/quit", "quit (also Ctrl+D)"),
];

/// The commands whose name starts with `typed` (the text after the slash).
pub fn matching(typed: &str) -> Vec<&'static Slash> {
    SLASH.iter().filter(|s| s.name.starts_with(typed)).collect()
}

/// The commands, for a message: `/help, /diff, /undo, /undo all, …`.
pub fn names() -> String {
    let names: Vec<String> = SLASH.iter().map(|s| s.usage.replace("  ", ", ")).collect();
    names.join(", ")
}

/// What the input's text is as a command being typed: the text after the
/// slash, while it is one word (`None`: not a command, or its arguments
/// have started).
pub fn typing(input: &str) -> Option<&str> {
    let rest = input.strip_prefix('/')?;
    (!rest.contains(char::is_whitespace)).then_some(rest)
}

/// The `/` menu above the input box `input`: the commands matching `typed`.
pub fn render_menu(typed: &str, input: Rect, buf: &mut Buffer) {
    let rows = matching(typed);
    let title = match rows.len() {
        0 => format!(" / commands · none starts with “{typed}” "),
        _ => " / commands · Tab completes · Enter runs · Esc leaves ".to_string(),
    };
    let height = (rows.len().max(1) as u16 + 1).min(input.y);
    if height < 2 {
        return;
    }
    let area = Rect {
        x: input.x,
        y: input.y - height,
        width: input.width,
        height,
    };
    ratatui::widgets::Widget::render(ratatui::widgets::Clear, area, buf);
    buf.set_style(area, theme::MENU);
    buf.set_line(
        area.x,
        area.y,
        &Line::styled(title, theme::MENU_KEY),
        area.width,
    );
    let usage_w = rows.iter().map(|s| width(s.usage)).max().unwrap_or(0);
    for (i, s) in rows.iter().take(height as usize - 1).enumerate() {
        let line = Line::from(vec![
            Span::styled(format!(" {:<usage_w$}  ", s.usage), theme::MENU_KEY),
            Span::raw(s.what),
        ]);
        buf.set_line(area.x, area.y + 1 + i as u16, &line, area.width);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_is_one_word_after_a_slash() {
        assert_eq!(typing("/mo"), Some("mo"));
        assert_eq!(typing("/"), Some(""));
        assert_eq!(typing("/model gpt"), None);
        assert_eq!(typing("fix /x"), None);
        assert_eq!(
            matching("m").iter().map(|s| s.name).collect::<Vec<_>>(),
            ["model", "mcp", "mouse"]
        );
    }
}
