//! The key map: ONE table (`bindings::BINDINGS`) of which key does what in
//! which layer. The key handlers look their keys up here (`action`), the help
//! overlay lists the table's help rows (`help_rows`), and the approval prompt
//! takes its hints from it (`hint`), so the three cannot disagree.
//!
//! What must stay true: within one layer no two rows match the same key, so
//! the order of the rows only decides the order of the help.

use crate::tui::panes::scroll::ScrollMove;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

pub use crate::tui::input::bindings::BINDINGS;

/// Where a key is read: the handlers ask for the layer they are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// Read before anything else (unless the screen is too small).
    Global,
    /// The help overlay is open.
    HelpOverlay,
    /// The detail or `/diff` overlay is open.
    Overlay,
    /// An approval prompt is open.
    Prompt,
    /// A decline reason is being typed.
    Reason,
    /// No overlay or prompt: focus moves.
    Main,
    /// The input box has the focus.
    Input,
    /// Another pane has the focus.
    Panes,
    /// Listed in the help only (slash commands, the mouse, the text editor's own keys).
    Docs,
}

/// A help section, in the order they are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Input,
    Prompt,
    Panes,
    Session,
}

impl Section {
    pub fn title(self) -> &'static str {
        match self {
            Section::Input => "Input",
            Section::Prompt => "Approval prompt",
            Section::Panes => "Panes",
            Section::Session => "Session",
        }
    }
}

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Interrupt,
    Quit,
    Help,
    ToggleMouse,
    Revoke,
    Close,
    Approve,
    Decline,
    DeclineWithReason,
    ApproveForTask,
    EditProposal,
    ToggleHunk,
    NextHunk,
    PrevHunk,
    ScrollDiff,
    SendReason,
    CancelReason,
    ClearReason,
    DeleteChar,
    FocusNext,
    FocusPrev,
    Submit,
    NewLine,
    HistoryOlder,
    HistoryNewer,
    KillToStart,
    ScrollConversation,
    Ignore,
    Activate,
    Back,
    ScrollPane,
    /// Only documented (handled elsewhere, e.g. by a slash command).
    Doc,
}

/// Which modifiers a chord accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mods {
    Any,
    /// Neither Ctrl nor Alt.
    Plain,
    /// Ctrl held.
    Ctrl,
    /// Ctrl or Alt held.
    NotPlain,
    /// Alt or Shift held.
    AltOrShift,
    /// Neither Alt nor Shift.
    NoAltOrShift,
}

/// One key and the modifiers it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chord {
    pub code: KeyCode,
    pub mods: Mods,
}

impl Chord {
    pub fn matches(&self, key: &KeyEvent) -> bool {
        let m = key.modifiers;
        let ctrl_alt = m.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let alt_shift = m.intersects(KeyModifiers::ALT | KeyModifiers::SHIFT);
        self.code == key.code
            && match self.mods {
                Mods::Any => true,
                Mods::Plain => !ctrl_alt,
                Mods::Ctrl => m.contains(KeyModifiers::CONTROL),
                Mods::NotPlain => ctrl_alt,
                Mods::AltOrShift => alt_shift,
                Mods::NoAltOrShift => !alt_shift,
            }
    }
}

/// One row of the key map.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub layer: Layer,
    pub action: Action,
    pub chords: &'static [Chord],
    /// The help row (keys as shown, what they do), if listed.
    pub help: Option<(Section, &'static str, &'static str)>,
    /// The prompt's hint (keys as shown, what they do), if it has one.
    pub hint: Option<(&'static str, &'static str)>,
}

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
