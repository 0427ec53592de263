//! The key map's rows, in the order the help lists them (see `keymap` for
//! how they are read). Adding a key means adding a row here; its handler,
//! its help line and its prompt hint all come from that row.

use crate::tui::input::key_types::Action::*;
use crate::tui::input::key_types::Layer::*;
use crate::tui::input::key_types::{Action, Binding, Chord, Layer, Mods, Section};
use crossterm::event::KeyCode::{self, *};

const fn k(code: KeyCode, mods: Mods) -> Chord {
    Chord { code, mods }
}

const fn any(code: KeyCode) -> Chord {
    k(code, Mods::Any)
}

const fn plain(c: char) -> Chord {
    k(Char(c), Mods::Plain)
}

const fn ctrl(c: char) -> Chord {
    k(Char(c), Mods::Ctrl)
}

/// A row that dispatches, without help or hint.
const fn key(layer: Layer, action: Action, chords: &'static [Chord]) -> Binding {
    Binding {
        layer,
        action,
        chords,
        help: None,
        hint: None,
    }
}

/// A row with a help line.
const fn doc(
    layer: Layer,
    action: Action,
    chords: &'static [Chord],
    section: Section,
    keys: &'static str,
    what: &'static str,
) -> Binding {
    Binding {
        layer,
        action,
        chords,
        help: Some((section, keys, what)),
        hint: None,
    }
}

/// A row with a help line and a prompt hint.
const fn hinted(b: Binding, keys: &'static str, what: &'static str) -> Binding {
    Binding {
        hint: Some((keys, what)),
        ..b
    }
}

use Section::{Input as InputKeys, Panes as PaneKeys, Prompt as PromptKeys, Session};

/// One row a line, as a table reads best.
#[rustfmt::skip]
pub const BINDINGS: &[Binding] = &[
    // Input
    doc(Input, Submit, &[k(Enter, Mods::NoAltOrShift)], InputKeys, "Enter", "send the task (or a /command)"),
    doc(Input, NewLine, &[k(Enter, Mods::AltOrShift), ctrl('j')], InputKeys, "Alt+Enter Shift+Enter", "new line in the input (also Ctrl+J)"),
    doc(Input, HistoryOlder, &[any(Up)], InputKeys, "↑ ↓", "earlier tasks (when the input is empty)"),
    key(Input, HistoryNewer, &[any(Down)]),
    doc(Input, HistorySearch, &[ctrl('r')], InputKeys, "Ctrl+R", "earlier tasks containing what is typed (Esc: back)"),
    key(Input, Help, &[any(Char('?'))]),
    doc(Docs, Doc, &[], InputKeys, "/", "the commands (type to filter, Tab completes)"),
    doc(Input, KillToStart, &[ctrl('u')], InputKeys, "Ctrl+A/E/U/K/W", "line start/end, delete to start/end, delete word"),
    doc(Docs, Doc, &[], InputKeys, "@", "insert a workspace file's path (type to filter)"),
    key(Picker, PickerUp, &[any(Up)]),
    key(Picker, PickerDown, &[any(Down)]),
    key(Picker, PickerAccept, &[any(Enter), any(Tab)]),
    key(Picker, PickerClose, &[any(Esc)]),
    key(Input, ScrollConversation, &[any(PageUp), any(PageDown)]),
    key(Input, Ignore, &[any(Esc)]),
    // Approval prompt
    hinted(doc(Prompt, Approve, &[plain('y'), plain('Y')], PromptKeys, "y", "approve (only the accepted hunks, or your version)"), "y", " yes"),
    hinted(doc(Prompt, Decline, &[plain('n'), plain('N'), any(Enter), any(Esc)], PromptKeys, "n Enter Esc", "decline (N is the default; your own version: n n)"), "n/Enter/Esc", " no"),
    hinted(doc(Prompt, DeclineWithReason, &[plain('r'), plain('R')], PromptKeys, "r", "decline with a reason for the model"), "r", " no, with a reason"),
    hinted(doc(Prompt, ApproveForTask, &[plain('a'), plain('A')], PromptKeys, "a", "approve this tool for the task (a again confirms)"), "a", " yes to every tool this task"),
    hinted(doc(Prompt, NextHunk, &[any(Char('j')), any(Down)], PromptKeys, "j k  ↑ ↓", "next / previous hunk of an edit (else scroll)"), "j/k", " hunk"),
    key(Prompt, PrevHunk, &[any(Char('k')), any(Up)]),
    hinted(doc(Prompt, ToggleHunk, &[any(Char(' '))], PromptKeys, "Space", "accept / reject the hunk under the cursor"), "Space", " toggle"),
    hinted(doc(Prompt, NextFile, &[any(Char(']'))], PromptKeys, "] [", "next / previous file of a patch"), "]/[", " file"),
    key(Prompt, PrevFile, &[any(Char('['))]),
    key(Prompt, Help, &[any(Char('?'))]),
    hinted(doc(Prompt, EditProposal, &[plain('e'), plain('E')], PromptKeys, "e", "edit the proposal in $VISUAL / $EDITOR, then y/N"), "e", " edit in $EDITOR"),
    hinted(doc(Prompt, FullDiff, &[plain('f'), plain('F')], PromptKeys, "f", "the diff full screen (f or Esc: back)"), "f", " full diff"),
    hinted(doc(Prompt, ScrollDiff, &[any(PageUp), any(PageDown), any(Home), any(End)], PromptKeys, "PgUp PgDn Home End", "scroll the diff while the prompt is open"), "PgUp PgDn", " scroll diff"),
    hinted(doc(Global, Revoke, &[any(F(3))], PromptKeys, "F3  /revoke", "revoke auto-approvals (the header lists them)"), "F3", " revoke auto-approve"),
    hinted(key(Reason, SendReason, &[any(Enter)]), "Enter", " send the reason to the model  "),
    hinted(key(Reason, CancelReason, &[any(Esc)]), "Esc", " back to y/N"),
    key(Reason, ClearReason, &[k(Char('u'), Mods::NotPlain)]),
    key(Reason, DeleteChar, &[any(Backspace)]),
    // Panes
    doc(Main, FocusNext, &[any(Tab)], PaneKeys, "Tab Shift+Tab", "move focus: input, conversation, tool calls, diff"),
    key(Main, FocusPrev, &[any(BackTab)]),
    doc(Panes, ScrollPane, &[any(Up), any(Down), any(PageUp), any(PageDown), any(Home), any(End)], PaneKeys, "↑ ↓ PgUp PgDn Home End", "scroll the focused pane (End follows again)"),
    doc(Docs, Doc, &[], PaneKeys, "Mouse wheel", "scroll the pane under the pointer"),
    doc(Panes, Activate, &[any(Enter)], PaneKeys, "Enter / Esc", "open / close a tool call's arguments and result"),
    key(Panes, Back, &[any(Esc)]),
    key(Panes, Help, &[any(Char('?'))]),
    doc(Global, ToggleMouse, &[any(F(2))], PaneKeys, "F2", "mouse capture on/off (off: select text freely)"),
    // Session
    doc(Global, Interrupt, &[ctrl('c')], Session, "Ctrl+C", "interrupt · clear the draft (↑ recalls it) · quit"),
    doc(Global, Quit, &[ctrl('d')], Session, "Ctrl+D  /quit", "quit (twice if a task runs or a prompt waits)"),
    doc(Global, Help, &[any(F(1))], Session, "F1  ?  /help", "this help, anywhere (Esc closes; ? in a draft is text)"),
    // Overlays
    key(HelpOverlay, Close, &[any(Esc), any(F(1)), any(Char('?')), any(Char('q')), any(Enter)]),
    key(Overlay, Close, &[any(Esc), any(Enter), any(Backspace), any(Char('q'))]),
    key(Overlay, Help, &[any(Char('?'))]),
];
