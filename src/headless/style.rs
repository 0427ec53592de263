//! Colors of `exec`'s human output: whether to use them (`--color`,
//! `NO_COLOR`, whether stdout is a terminal) and the only escape sequences
//! `exec` ever writes itself (SGR colors around text already sanitized).
//!
//! What must stay true: `paint` is the one place `exec` emits an escape
//! sequence, and it emits nothing when colors are off.

use crate::config::ColorChoice;

pub const GREEN: &str = "\x1b[32m";
pub const RED: &str = "\x1b[31m";
pub const DIM: &str = "\x1b[2m";
pub const BOLD: &str = "\x1b[1m";
pub const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// Whether human output is colored: `always` and `never` decide; `auto`
/// colors only a terminal, and not when `NO_COLOR` is set to anything but
/// the empty string (<https://no-color.org>) or `TERM` is `dumb`.
pub fn use_color(
    choice: ColorChoice,
    stdout_is_terminal: bool,
    no_color: Option<&str>,
    term: Option<&str>,
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            stdout_is_terminal && no_color.is_none_or(str::is_empty) && term != Some("dumb")
        }
    }
}

/// Wrap text in a color when colors are on.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub fn paint(&self, color: &str, text: &str) -> String {
        if self.color {
            format!("{color}{text}{RESET}")
        } else {
            text.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_and_the_flag_decide() {
        let auto = ColorChoice::Auto;
        assert!(use_color(auto, true, None, Some("xterm")));
        assert!(
            use_color(auto, true, Some(""), None),
            "empty NO_COLOR is unset"
        );
        assert!(!use_color(auto, true, Some("1"), None));
        assert!(
            !use_color(auto, false, None, None),
            "a pipe is never colored"
        );
        assert!(!use_color(auto, true, None, Some("dumb")));
        assert!(use_color(ColorChoice::Always, false, Some("1"), None));
        assert!(!use_color(ColorChoice::Never, true, None, None));
        assert_eq!(Style { color: false }.paint(RED, "x"), "x");
        assert_eq!(Style { color: true }.paint(RED, "x"), "\x1b[31mx\x1b[0m");
    }
}
