//! The App's side of the `@` file picker (`picker`): opening it when an `@`
//! starts a word, asking the run loop to list the files, following what is
//! typed after the `@`, and putting the chosen path in the input.
//!
//! What must stay true: the picker never takes a key it has no row for in
//! the key map's `Picker` layer; closing it never changes the text.

use crate::tui::app::{App, Effect};
use crate::tui::input::keymap::{self, Action, Layer};
use crate::tui::input::picker::{FileSource, Picker, opens_after};
use crossterm::event::{KeyCode, KeyEvent};
use std::sync::Arc;

impl App {
    /// Where the `@` picker lists files from (the run loop walks it).
    pub fn set_file_source(&mut self, workspace: crate::tools::Workspace) {
        self.picking.file_source = Some(FileSource(Arc::new(workspace)));
    }

    /// The open picker, for tests and the renderer.
    pub fn picker(&self) -> Option<&Picker> {
        self.picking.picker.as_ref()
    }

    /// A key for the open picker; whether it took it.
    pub(in crate::tui) fn picker_key(&mut self, key: &KeyEvent) -> bool {
        let Some(picker) = self.picking.picker.as_mut() else {
            return false;
        };
        match keymap::action(Layer::Picker, key) {
            Some(Action::PickerUp) => picker.move_by(-1),
            Some(Action::PickerDown) => picker.move_by(1),
            Some(Action::PickerClose) => self.picking.picker = None,
            Some(Action::PickerAccept) => {
                let Some(path) = picker.chosen().map(str::to_string) else {
                    // Nothing to insert: Enter/Tab do what they always do.
                    self.picking.picker = None;
                    return false;
                };
                let typed = picker.query().chars().count() + 1;
                self.picking.picker = None;
                self.input.delete_back(typed);
                self.input.insert_str(&format!("{path} "));
            }
            _ => return false,
        }
        true
    }

    /// After an edit of the input: open the picker on an `@` that starts a
    /// word, follow the query, or close it when the `@` is gone.
    pub(in crate::tui) fn sync_picker(&mut self, key: &KeyEvent) {
        let before = self.input.before_cursor();
        if let Some(picker) = self.picking.picker.as_mut() {
            let query = before
                .rfind('@')
                .filter(|&at| opens_after(&before[..at]))
                .map(|at| &before[at + 1..])
                .filter(|q| !q.contains(char::is_whitespace));
            match query {
                Some(q) => picker.set_query(q),
                None => self.picking.picker = None,
            }
            return;
        }
        let Some(head) = before.strip_suffix('@') else {
            return;
        };
        if key.code != KeyCode::Char('@') || !opens_after(head) {
            return;
        }
        self.picking.picker = Some(Picker::new());
        if let Some(ws) = &self.picking.file_source {
            self.effect(Effect::ListFiles(ws.clone()));
        }
    }

    /// The run loop listed the workspace's files.
    pub(in crate::tui) fn files_listed(&mut self, files: Vec<String>, more: bool) {
        if let Some(picker) = self.picking.picker.as_mut() {
            picker.set_files(files, more);
        }
    }
}
