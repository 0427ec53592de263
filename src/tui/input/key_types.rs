//! The key map's vocabulary: the layers keys are read in, the actions they
//! trigger, chords and one row of the table (`Binding`). Only types live
//! here, so that the table (`bindings`) and the lookups (`keymap`) both use
//! them without importing each other.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

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
    /// The `@` file picker is open over the input.
    Picker,
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
    /// The diff under review full screen (and back).
    FullDiff,
    /// Search the earlier tasks for the text typed (Ctrl+R).
    HistorySearch,
    /// The first hunk of the next / previous file of a patch under review.
    NextFile,
    PrevFile,
    /// The `@` file picker: move the selection, insert the path, close.
    PickerUp,
    PickerDown,
    PickerAccept,
    PickerClose,
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
