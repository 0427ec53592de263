//! The layers over the base view (the panes, the input and the prompt): a
//! stack, the newest on top. A key goes to the top layer first, which either
//! consumes it or passes it down (`Handled`); a key that closes a layer is
//! consumed by it and never reaches what lies beneath.
//!
//! What must stay true: a layer is only ever closed through `close` (or
//! `close_all`), which remembers when, so the prompt beneath can tell a
//! deliberate key from the reflex that follows a closing (`closed_within`).

use crate::tui::overlays::detail::DetailView;
use crate::tui::overlays::session_diff::SessionDiffView;
use std::time::{Duration, Instant};

/// A full-screen view over the panes.
#[derive(Debug)]
pub enum Overlay {
    Help,
    Detail(DetailView),
    /// `/diff`: the session's cumulative diff.
    SessionDiff(SessionDiffView),
    /// `f` at a prompt: the prompt's diff takes the whole body; the
    /// prompt's own keys still answer beneath it.
    FullDiff,
}

/// What a layer did with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    /// The layer acted on the key (or closed on it); nothing beneath sees it.
    Consumed,
    /// Not this layer's key: the one beneath gets it.
    NotConsumed,
}

/// The stack of overlays, and when one was last closed.
#[derive(Debug, Default)]
pub struct Layers {
    stack: Vec<Overlay>,
    /// First row of the help shown (it scrolls on small terminals).
    help_top: usize,
    closed_at: Option<Instant>,
}

impl Layers {
    /// Open `overlay` on top. The help opens at its first row, and a view
    /// already open is brought up instead of being stacked twice.
    pub fn open(&mut self, overlay: Overlay) {
        if matches!(overlay, Overlay::Help) {
            self.help_top = 0;
        }
        let same = std::mem::discriminant(&overlay);
        self.stack.retain(|o| std::mem::discriminant(o) != same);
        self.stack.push(overlay);
    }

    /// Close the top layer (`now`: when, for `closed_within`).
    pub fn close(&mut self, now: Instant) -> Option<Overlay> {
        let closed = self.stack.pop();
        if closed.is_some() {
            self.closed_at = Some(now);
        }
        closed
    }

    /// Something the user saw closed without a layer (leaving the input for
    /// the prompt): counts as a closing for `closed_within`.
    pub fn note_closed(&mut self, now: Instant) {
        self.closed_at = Some(now);
    }

    /// Close every layer matching `which` (e.g. the full diff when its prompt
    /// is answered).
    pub fn close_all(&mut self, which: impl Fn(&Overlay) -> bool, now: Instant) {
        let before = self.stack.len();
        self.stack.retain(|o| !which(o));
        if self.stack.len() != before {
            self.closed_at = Some(now);
        }
    }

    pub fn top(&self) -> Option<&Overlay> {
        self.stack.last()
    }

    pub fn top_mut(&mut self) -> Option<&mut Overlay> {
        self.stack.last_mut()
    }

    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// Whether any open layer matches `which`.
    pub fn any(&self, which: impl Fn(&Overlay) -> bool) -> bool {
        self.stack.iter().any(which)
    }

    /// Whether a layer closed less than `window` before `now`.
    pub fn closed_within(&self, window: Duration, now: Instant) -> bool {
        self.closed_at
            .is_some_and(|at| now.saturating_duration_since(at) < window)
    }

    /// The layer under the full diff that covers the body, if any (the one
    /// drawn over the panes).
    pub fn covering(&self) -> Option<&Overlay> {
        self.stack
            .iter()
            .rev()
            .find(|o| !matches!(o, Overlay::FullDiff))
    }

    pub fn covering_mut(&mut self) -> Option<&mut Overlay> {
        self.stack
            .iter_mut()
            .rev()
            .find(|o| !matches!(o, Overlay::FullDiff))
    }

    pub fn help_top(&self) -> usize {
        self.help_top
    }

    pub fn set_help_top(&mut self, top: usize) {
        self.help_top = top;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_is_remembered_and_a_view_is_never_stacked_twice() {
        let mut layers = Layers::default();
        let t0 = Instant::now();
        layers.open(Overlay::FullDiff);
        layers.open(Overlay::Help);
        layers.open(Overlay::FullDiff);
        assert!(matches!(layers.top(), Some(Overlay::FullDiff)));
        assert!(!layers.closed_within(Duration::from_secs(1), t0));
        assert!(matches!(layers.close(t0), Some(Overlay::FullDiff)));
        assert!(layers.closed_within(Duration::from_secs(1), t0));
        assert!(!layers.closed_within(Duration::from_secs(1), t0 + Duration::from_secs(2)));
        assert!(matches!(layers.top(), Some(Overlay::Help)));
        layers.close(t0);
        assert!(layers.is_empty() && layers.close(t0).is_none());
    }
}
