//! The theme: every colour the UI uses, named by what it means. This is the
//! only module that may name a `Color` (the crate's `clippy.toml` forbids it
//! elsewhere), so a new colour is added here, once, with a name that says
//! where it goes; the panes pick styles from here and add only modifiers.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use ratatui::style::{Color, Modifier, Style};

/// Focused borders, overlay frames, hunk separators, code, detail keys.
pub const ACCENT: Style = Style::new().fg(Color::Cyan);
pub const ACCENT_BOLD: Style = ACCENT.add_modifier(Modifier::BOLD);
/// Hints, gutters, unfocused borders, separators, notices.
pub const DIM: Style = Style::new().fg(Color::DarkGray);
/// Secondary text: unfocused titles, header details, key descriptions.
pub const MUTED: Style = Style::new().fg(Color::Gray);
/// Something to look at: a waiting approval, a one-off message, a gate.
pub const WARN: Style = Style::new().fg(Color::Yellow);
/// Keys to press, file headers, the hunk cursor.
pub const WARN_BOLD: Style = WARN.add_modifier(Modifier::BOLD);
/// Success: additions, passing tests, a final answer.
pub const GOOD: Style = Style::new().fg(Color::Green);
pub const GOOD_BOLD: Style = GOOD.add_modifier(Modifier::BOLD);
/// Failure: removals, errors, failing tests.
pub const BAD: Style = Style::new().fg(Color::Red);
pub const BAD_BOLD: Style = BAD.add_modifier(Modifier::BOLD);
/// Declined calls and interrupts.
pub const DECLINED: Style = Style::new().fg(Color::Magenta);
/// The header's first row.
pub const HEADER_BAR: Style = Style::new().bg(Color::Blue).fg(Color::White);
/// The approval prompt's question row.
pub const PROMPT_BAR: Style = Style::new()
    .bg(Color::Yellow)
    .fg(Color::Black)
    .add_modifier(Modifier::BOLD);
/// Changed words inside an added line.
pub const ADDED_WORD: Style = Style::new()
    .fg(Color::Black)
    .bg(Color::Green)
    .add_modifier(Modifier::BOLD);
/// Changed words inside a removed line.
pub const REMOVED_WORD: Style = Style::new()
    .fg(Color::Black)
    .bg(Color::Red)
    .add_modifier(Modifier::BOLD);
/// A note about an edit still streaming in.
pub const STREAMING: Style = WARN.add_modifier(Modifier::ITALIC);
/// A reply that broke off and was discarded (kept on screen, struck through).
pub const DISCARDED: Style = DIM.add_modifier(Modifier::CROSSED_OUT);
/// The rows of a hunk the user rejected.
pub const REJECTED: Style = DIM.add_modifier(Modifier::CROSSED_OUT);
