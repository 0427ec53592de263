//! The theme: every colour the UI uses, named by what it means. This is the
//! only module that may name a `Color` (the crate's `clippy.toml` forbids it
//! elsewhere), so a new colour is added here, once, with a name that says
//! where it goes; the panes pick styles from here and add only modifiers.
//!
//! The style constants name palette *slots*, not colours: a slot is a token
//! (`Color::Indexed(n)` with `n < SLOTS`) that no palette ever produces. The
//! panes draw with tokens; at the end of each frame [`paint`] makes one pass
//! over the buffer and replaces every token with the active [`Look`]'s real
//! colour (or with none at all: `NO_COLOR`, `--color never`). So drawing
//! stays a pure function of the state and every `theme::X` keeps its name.
//!
//! What must stay true: the dark and light palettes use only xterm-256
//! colours `>= SLOTS` (known RGB, so `theme_tests` can check that every text
//! style has a contrast of at least 4.5:1 on its background), and `paint`
//! is idempotent.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier, Style};

/// The palette slots, in the order of [`Palette::slots`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Slot {
    Accent,
    Dim,
    Muted,
    Warn,
    Good,
    Bad,
    Declined,
    HeaderBg,
    HeaderFg,
    PromptBg,
    /// Dark text on the bright bars (prompt, changed words).
    OnBar,
    AddedBg,
    RemovedBg,
    SynKeyword,
    SynString,
    SynComment,
    SynNumber,
    SynType,
    SynFunction,
    /// A safety notice on the header bar (auto-approve, weakened sandbox, mouse off).
    HeaderWarn,
    /// The background of the selected row of a menu or picker.
    Selection,
}

/// How many slots there are (tokens are `Color::Indexed(0..SLOTS)`).
pub const SLOTS: usize = Slot::Selection as usize + 1;

const fn token(slot: Slot) -> Color {
    Color::Indexed(slot as u8)
}

const fn fg(slot: Slot) -> Style {
    Style::new().fg(token(slot))
}

/// Focused borders, overlay frames, hunk separators, code, detail keys.
pub const ACCENT: Style = fg(Slot::Accent);
pub const ACCENT_BOLD: Style = ACCENT.add_modifier(Modifier::BOLD);
/// Hints, gutters, unfocused borders, separators, notices.
pub const DIM: Style = fg(Slot::Dim);
/// Secondary text: unfocused titles, header details, key descriptions.
pub const MUTED: Style = fg(Slot::Muted);
/// Something to look at: a waiting approval, a one-off message, a gate.
pub const WARN: Style = fg(Slot::Warn);
/// Keys to press, file headers, the hunk cursor.
pub const WARN_BOLD: Style = WARN.add_modifier(Modifier::BOLD);
/// Success: additions, passing tests, a final answer.
pub const GOOD: Style = fg(Slot::Good);
pub const GOOD_BOLD: Style = GOOD.add_modifier(Modifier::BOLD);
/// Failure: removals, errors, failing tests.
pub const BAD: Style = fg(Slot::Bad);
pub const BAD_BOLD: Style = BAD.add_modifier(Modifier::BOLD);
/// Declined calls and interrupts.
pub const DECLINED: Style = fg(Slot::Declined);
/// The header's first row.
pub const HEADER_BAR: Style = Style::new()
    .bg(token(Slot::HeaderBg))
    .fg(token(Slot::HeaderFg));
/// The approval prompt's question row.
pub const PROMPT_BAR: Style = Style::new()
    .bg(token(Slot::PromptBg))
    .fg(token(Slot::OnBar))
    .add_modifier(Modifier::BOLD);
/// A safety notice drawn on the header bar: readable on the bar itself.
pub const HEADER_WARN: Style = Style::new()
    .bg(token(Slot::HeaderBg))
    .fg(token(Slot::HeaderWarn))
    .add_modifier(Modifier::BOLD);
/// A menu or picker drawn over the panes (`/`, `@`): the bar's colours.
pub const MENU: Style = Style::new()
    .bg(token(Slot::PromptBg))
    .fg(token(Slot::OnBar));
/// A menu's title and the names it lists: the bar's colours, bold.
pub const MENU_KEY: Style = MENU.add_modifier(Modifier::BOLD);
/// The selected row of a menu or picker (without colours: the one row of
/// the menu that is not in reverse video).
pub const SELECTED: Style = Style::new()
    .bg(token(Slot::Selection))
    .fg(token(Slot::HeaderFg))
    .add_modifier(Modifier::BOLD);
/// Changed words inside an added line.
pub const ADDED_WORD: Style = Style::new()
    .fg(token(Slot::OnBar))
    .bg(token(Slot::AddedBg))
    .add_modifier(Modifier::BOLD);
/// Changed words inside a removed line.
pub const REMOVED_WORD: Style = Style::new()
    .fg(token(Slot::OnBar))
    .bg(token(Slot::RemovedBg))
    .add_modifier(Modifier::BOLD);
/// A note about an edit still streaming in.
pub const STREAMING: Style = WARN.add_modifier(Modifier::ITALIC);
/// A reply that broke off and was discarded (kept on screen, struck through).
pub const DISCARDED: Style = DIM.add_modifier(Modifier::CROSSED_OUT);
/// The rows of a hunk the user rejected.
pub const REJECTED: Style = DIM.add_modifier(Modifier::CROSSED_OUT);
/// Syntax colours (code blocks, diffs): what `highlight` maps scopes to.
pub const SYN_KEYWORD: Style = fg(Slot::SynKeyword);
pub const SYN_STRING: Style = fg(Slot::SynString);
pub const SYN_COMMENT: Style = fg(Slot::SynComment);
pub const SYN_NUMBER: Style = fg(Slot::SynNumber);
pub const SYN_TYPE: Style = fg(Slot::SynType);
pub const SYN_FUNCTION: Style = fg(Slot::SynFunction);

/// The theme's style for a program's colour `index` (0–7 and their bright
/// forms 8–15, as SGR 30–37 and 90–97 name them): each becomes the slot
/// that means the same, white and anything else the text's own colour.
pub fn ansi(index: u8) -> Style {
    match index % 8 {
        0 => DIM,
        1 => BAD,
        2 => GOOD,
        3 => WARN,
        4 | 6 => ACCENT,
        5 => SYN_KEYWORD,
        _ => Style::new(),
    }
}

/// Real colours for every slot, plus the text and background colours that
/// cells without a colour of their own get.
#[derive(Debug, PartialEq, Eq)]
pub struct Palette {
    pub name: &'static str,
    pub slots: [Color; SLOTS],
    pub text: Color,
    pub background: Color,
}

/// Slots whose colour is a background: with no colours they become reverse video.
const BAR_SLOTS: [Slot; 4] = [
    Slot::HeaderBg,
    Slot::PromptBg,
    Slot::AddedBg,
    Slot::RemovedBg,
];

const fn x(n: u8) -> Color {
    Color::Indexed(n)
}

/// For dark terminals (xterm-256 colours with known RGB).
pub static DARK: Palette = Palette {
    name: "dark",
    slots: [
        x(80),  // accent #5fd7d7
        x(245), // dim #8a8a8a
        x(250), // muted #bcbcbc
        x(221), // warn #ffd75f
        x(114), // good #87d787
        x(210), // bad #ff8787
        x(177), // declined #d787ff
        x(24),  // header bg #005f87
        x(255), // header fg #eeeeee
        x(221), // prompt bg
        x(232), // on bar #080808
        x(114), // added bg
        x(210), // removed bg
        x(176), // keyword #d787d7
        x(150), // string #afd787
        x(245), // comment
        x(216), // number #ffaf87
        x(117), // type #87d7ff
        x(111), // function #87afff
        x(221), // header warn #ffd75f
        x(24),  // selection #005f87
    ],
    text: x(252),
    background: x(233),
};

/// For light terminals.
pub static LIGHT: Palette = Palette {
    name: "light",
    slots: [
        x(24),  // accent #005f87
        x(242), // dim #6c6c6c
        x(239), // muted #4e4e4e
        x(130), // warn #af5f00
        x(28),  // good #008700
        x(124), // bad #af0000
        x(90),  // declined #870087
        x(24),  // header bg
        x(231), // header fg #ffffff
        x(222), // prompt bg #ffd787
        x(232), // on bar
        x(151), // added bg #afd7af
        x(217), // removed bg #ffafaf
        x(90),  // keyword
        x(28),  // string
        x(242), // comment
        x(130), // number
        x(24),  // type
        x(25),  // function #005faf
        x(229), // header warn #ffffaf
        x(24),  // selection
    ],
    text: x(235),
    background: x(231),
};

/// The terminal's own 16 colours (what the UI drew before it had palettes):
/// the `App`'s starting look until the front end picks one.
pub static TERMINAL: Palette = Palette {
    name: "terminal",
    slots: [
        Color::Cyan,
        Color::DarkGray,
        Color::Gray,
        Color::Yellow,
        Color::Green,
        Color::Red,
        Color::Magenta,
        Color::Blue,
        Color::White,
        Color::Yellow,
        Color::Black,
        Color::Green,
        Color::Red,
        Color::Magenta,
        Color::Green,
        Color::DarkGray,
        Color::Yellow,
        Color::Cyan,
        Color::Blue,
        Color::Yellow,
        Color::Blue,
    ],
    text: Color::Reset,
    background: Color::Reset,
};

/// How the frame is coloured: a palette, or no colour at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    Colored(&'static Palette),
    /// `NO_COLOR` / `--color never`: modifiers only.
    Plain,
}

impl Default for Look {
    fn default() -> Self {
        Look::Colored(&TERMINAL)
    }
}

/// Which palette a background colour calls for: light above mid luminance.
pub fn for_background(rgb: (u8, u8, u8)) -> &'static Palette {
    if luminance(rgb) > 0.5 { &LIGHT } else { &DARK }
}

/// Replace every slot token in `buf` with the look's colour (one pass).
pub fn paint(buf: &mut Buffer, look: Look) {
    match look {
        Look::Colored(p) => {
            let resolve = |c: Color, plain: Color| match c {
                Color::Indexed(n) if (n as usize) < SLOTS => p.slots[n as usize],
                Color::Reset => plain,
                other => other,
            };
            for cell in buf.content.iter_mut() {
                cell.fg = resolve(cell.fg, p.text);
                cell.bg = resolve(cell.bg, p.background);
            }
        }
        Look::Plain => {
            for cell in buf.content.iter_mut() {
                if BAR_SLOTS.iter().any(|s| cell.bg == token(*s)) {
                    cell.modifier.insert(Modifier::REVERSED);
                }
                // A selection sits on a (reversed) menu: it is the row
                // that is not reversed, so it stands out without colour.
                if cell.bg == token(Slot::Selection) {
                    cell.modifier.remove(Modifier::REVERSED);
                }
                cell.fg = Color::Reset;
                cell.bg = Color::Reset;
                cell.underline_color = Color::Reset;
            }
        }
    }
}

/// The RGB of an xterm-256 colour (`None` for the 16 the terminal decides).
pub fn xterm_rgb(c: Color) -> Option<(u8, u8, u8)> {
    let Color::Indexed(n) = c else { return None };
    match n {
        16..=231 => {
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            let v = n - 16;
            Some((level(v / 36), level(v / 6 % 6), level(v % 6)))
        }
        232..=255 => {
            let g = 8 + 10 * (n - 232);
            Some((g, g, g))
        }
        _ => None,
    }
}

/// WCAG relative luminance of an sRGB colour (0 black … 1 white).
pub fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    let lin = |v: u8| {
        let c = f64::from(v) / 255.0;
        if c <= 0.03928 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

/// WCAG contrast ratio of two colours (1 … 21).
pub fn contrast(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    let (hi, lo) = if la > lb { (la, lb) } else { (lb, la) };
    (hi + 0.05) / (lo + 0.05)
}

/// The least contrast any text on screen may have (WCAG AA).
pub const MIN_CONTRAST: f64 = 4.5;

/// The cells of a painted frame whose text is hard to read *as composed*:
/// the foreground over the background the cell actually has (reverse video
/// swaps them), below [`MIN_CONTRAST`] or of unknown RGB. Blank cells carry
/// no text and are skipped. `(x, y, contrast)`; 0 for an unknown colour.
pub fn unreadable(buf: &Buffer) -> Vec<(u16, u16, f64)> {
    let mut out = Vec::new();
    for y in buf.area.top()..buf.area.bottom() {
        for x in buf.area.left()..buf.area.right() {
            let cell = &buf[(x, y)];
            if cell.symbol().trim().is_empty() {
                continue;
            }
            let (fg, bg) = match cell.modifier.contains(Modifier::REVERSED) {
                true => (cell.bg, cell.fg),
                false => (cell.fg, cell.bg),
            };
            let ratio = match (xterm_rgb(fg), xterm_rgb(bg)) {
                (Some(f), Some(b)) => contrast(f, b),
                _ => 0.0,
            };
            if ratio < MIN_CONTRAST {
                out.push((x, y, ratio));
            }
        }
    }
    out
}

/// Every (foreground, background) pair of colours the styles above draw,
/// resolved in `p` (for the contrast check).
pub fn pairs(p: &Palette) -> Vec<(&'static str, Color, Color)> {
    let styles: [(&'static str, Style); 21] = [
        ("accent", ACCENT),
        ("dim", DIM),
        ("muted", MUTED),
        ("warn", WARN),
        ("good", GOOD),
        ("bad", BAD),
        ("declined", DECLINED),
        ("header bar", HEADER_BAR),
        ("prompt bar", PROMPT_BAR),
        ("added word", ADDED_WORD),
        ("removed word", REMOVED_WORD),
        ("keyword", SYN_KEYWORD),
        ("string", SYN_STRING),
        ("comment", SYN_COMMENT),
        ("number", SYN_NUMBER),
        ("type", SYN_TYPE),
        ("function", SYN_FUNCTION),
        ("header warning", HEADER_WARN),
        ("menu", MENU_KEY),
        ("selected", SELECTED),
        ("text", Style::new()),
    ];
    let resolve = |c: Option<Color>, plain: Color| match c {
        Some(Color::Indexed(n)) if (n as usize) < SLOTS => p.slots[n as usize],
        _ => plain,
    };
    styles
        .iter()
        .map(|(name, s)| (*name, resolve(s.fg, p.text), resolve(s.bg, p.background)))
        .collect()
}

#[cfg(test)]
#[path = "theme_tests.rs"]
mod tests;
