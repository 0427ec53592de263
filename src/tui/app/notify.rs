//! Asking for attention when an approval waits while the terminal is not
//! focused: a bell and a desktop notification (OSC 9), once per request,
//! unless `notify = false`.
//!
//! What must stay true: the notification text is sanitized, and a request
//! is announced at most once.

use crate::tui::app::{App, Effect};

impl App {
    /// Whether to ring the bell when an approval waits unfocused.
    pub fn set_notify(&mut self, on: bool) {
        self.term.notify = on;
    }

    /// An approval waits and the terminal is not focused: ask for attention,
    /// once per request.
    pub(in crate::tui) fn maybe_notify(&mut self) {
        let serial = self.approvals.serial();
        if !self.term.notify || self.term.focused || serial == self.term.notified {
            return;
        }
        let Some(request) = self.approvals.current() else {
            return;
        };
        let text = crate::tui::render::text::sanitize(&format!(
            "stepwise: approval waiting: {}",
            request.action.prompt()
        ));
        self.term.notified = serial;
        self.effect(Effect::Notify(text));
    }
}
