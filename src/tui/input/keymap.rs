//! The key map: ONE table (`bindings::BINDINGS`) of which key does what in
//! which layer. The key handlers look their keys up here (`action`), the help
//! overlay lists the table's help rows (`help_rows`, then the slash
//! commands of `slash::SLASH`), and the approval prompt
//! takes its hints from it (`hint`), so the three cannot disagree.
//!
//! What must stay true: within one layer no two rows match the same key, so
//! the order of the rows only decides the order of the help.

use crate::tui::panes::scroll::ScrollMove;
use crossterm::event::{KeyCode, KeyEvent};

pub use crate::tui::input::bindings::BINDINGS;
pub use crate::tui::input::key_types::{Action, Binding, Chord, Layer, Mods, Section};

/// What `key` does in `layer`, if anything.
pub fn action(layer: Layer, key: &KeyEvent) -> Option<Action> {
    BINDINGS
        .iter()
        .filter(|b| b.layer == layer)
        .find(|b| b.chords.iter().any(|c| c.matches(key)))
        .map(|b| b.action)
}

/// The prompt hint of `action` in `layer`: `(keys, what)`.
pub fn hint(layer: Layer, action: Action) -> (&'static str, &'static str) {
    BINDINGS
        .iter()
        .find(|b| b.layer == layer && b.action == action)
        .and_then(|b| b.hint)
        .unwrap_or(("", ""))
}

/// The help table: `(keys, what they do)`; an empty key starts a section.
pub fn help_rows() -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    for section in [
        Section::Input,
        Section::Prompt,
        Section::Panes,
        Section::Session,
    ] {
        out.push(("", section.title()));
        for b in BINDINGS {
            if let Some((s, keys, what)) = b.help
                && s == section
            {
                out.push((keys, what));
            }
        }
    }
    // The slash commands, from their own table (the `/` menu reads it too).
    out.push(("", "Commands"));
    out.extend(
        crate::tui::input::slash::SLASH
            .iter()
            .map(|s| (s.usage, s.what)),
    );
    out
}

/// The scroll keys every scrolling view shares.
pub fn scroll_move(code: KeyCode) -> Option<ScrollMove> {
    Some(match code {
        KeyCode::Up => ScrollMove::Up(1),
        KeyCode::Down => ScrollMove::Down(1),
        KeyCode::PageUp => ScrollMove::PageUp,
        KeyCode::PageDown => ScrollMove::PageDown,
        KeyCode::Home => ScrollMove::Top,
        KeyCode::End => ScrollMove::Bottom,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    #[test]
    fn no_two_rows_of_a_layer_share_a_key() {
        for (i, a) in BINDINGS.iter().enumerate() {
            for b in &BINDINGS[i + 1..] {
                if a.layer != b.layer {
                    continue;
                }
                for ca in a.chords {
                    for cb in b.chords {
                        let clash = ca.code == cb.code
                            && (ca.mods == cb.mods || [ca.mods, cb.mods].contains(&Mods::Any));
                        assert!(!clash, "{:?} and {:?} both take {ca:?}", a.action, b.action);
                    }
                }
            }
        }
    }

    #[test]
    fn the_prompt_keys_come_from_the_table() {
        let y = KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE);
        assert_eq!(action(Layer::Prompt, &y), Some(Action::Approve));
        let ctrl_y = KeyEvent::new(KeyCode::Char('y'), KeyModifiers::CONTROL);
        assert_eq!(action(Layer::Prompt, &ctrl_y), None);
        assert_eq!(hint(Layer::Prompt, Action::Decline), ("n/Enter/Esc", " no"));
        let help = help_rows();
        assert!(help.contains(&("y", "approve (only the accepted hunks, or your version)")));
    }
}
