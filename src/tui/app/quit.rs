//! Leaving the app without losing work: Ctrl+C first clears a draft (Up
//! recalls it), interrupts a running task, and quits only when there is
//! nothing to lose; quitting while a task runs or an approval waits takes a
//! second Ctrl+C / Ctrl+D (or `/quit`) within `CONFIRM_WINDOW`. Also the App's next
//! timed change (`wake_at`), so the run loop redraws when it happens, and
//! whether colouring in view wants another frame (`colouring_due`).
//!
//! What must stay true: no single key press throws away a draft, a running
//! task or a pending approval without saying how to get it back or asking.

use crate::tui::app::App;
use std::time::{Duration, Instant};

/// How long a first Ctrl+C / Ctrl+D waits for the second that quits.
pub const CONFIRM_WINDOW: Duration = Duration::from_secs(2);

impl App {
    /// A task runs or an approval waits: quitting would lose it.
    fn busy(&self) -> bool {
        self.is_running() || self.approvals.is_open()
    }

    /// A first Ctrl+C / Ctrl+D was pressed less than `CONFIRM_WINDOW` ago.
    fn quit_confirmed(&self) -> bool {
        self.life.quit_confirm.is_some_and(|until| self.now < until)
    }

    /// Ctrl+C: interrupt a task, else clear a draft, else quit.
    pub(in crate::tui) fn interrupt_key(&mut self) {
        if self.quit_confirmed() {
            return self.request_quit();
        }
        if self.busy() {
            self.interrupt();
            self.life.quit_confirm = Some(self.now + CONFIRM_WINDOW);
            self.show_flash("Interrupting the task. Press Ctrl+C again within 2 s to quit.");
            return;
        }
        if !self.input.is_empty() {
            // `take` keeps it in the history, where Up finds it.
            self.input.take();
            self.show_flash(
                "Draft cleared: press ↑ to get it back. Ctrl+C on an empty input quits.",
            );
            return;
        }
        self.request_quit();
    }

    /// Ctrl+D where it quits: asks first while there is work to lose.
    pub(in crate::tui) fn quit_key(&mut self) {
        self.confirm_quit("press Ctrl+D again");
    }

    /// `/quit` or `/exit`: asks exactly like Ctrl+D; a second `/quit` or a
    /// Ctrl+D within the window quits.
    pub(in crate::tui) fn quit_command(&mut self) {
        self.confirm_quit("press Ctrl+D or type /quit again");
    }

    /// Quit now when nothing would be lost (or this is the second ask),
    /// else ask, saying how to confirm.
    fn confirm_quit(&mut self, how: &str) {
        if !self.busy() || self.quit_confirmed() {
            return self.request_quit();
        }
        self.life.quit_confirm = Some(self.now + CONFIRM_WINDOW);
        let what = if self.approvals.is_open() {
            "an approval is waiting (it would be declined)"
        } else {
            "a task is running (it would be interrupted)"
        };
        self.show_flash(format!("Quit? {what}: {how} within 2 s to quit."));
    }

    /// The next moment the screen changes by itself (a prompt done arming
    /// or done waiting for the user to stop typing, a quit confirmation or
    /// a retry's countdown running out, the silent model's count), if it
    /// is still ahead.
    pub fn wake_at(&self) -> Option<Instant> {
        let quit = self.life.quit_confirm.filter(|until| self.now < *until);
        let retry = self.status.retry_until.filter(|until| self.now < *until);
        let arming = self.approvals.arming_until(self.now);
        let idle = self
            .last_typed
            .map(|typed| typed + crate::tui::input::COMPOSING)
            .filter(|until| self.now < *until && self.approvals.is_open());
        let token = self.token_wait_tick();
        [quit, retry, arming, idle, token]
            .into_iter()
            .flatten()
            .min()
    }

    /// Code in view still waits for its syntax colours: the frame after
    /// this one should be drawn too (to pick up colours computed on the
    /// UI's worker, or to colour the next slice without one).
    /// Only panes on screen count: one that is not laid out (hidden by
    /// the layout, or the terminal too small) would never pick up its
    /// colours, and the frames would never stop.
    pub fn colouring_due(&self) -> bool {
        if self.panes.too_small {
            return false;
        }
        self.conversation.colouring_due()
            || (self.panes.diff.is_some() && self.diff.colouring_due())
    }

    /// Time passed: a quit confirmation that ran out takes its message along.
    pub(in crate::tui) fn timers_passed(&mut self) {
        if self
            .life
            .quit_confirm
            .is_some_and(|until| self.now >= until)
        {
            self.life.quit_confirm = None;
            if self
                .flash()
                .as_ref()
                .is_some_and(|f| f.contains("again within 2 s"))
            {
                self.clear_flash();
            }
        }
        self.approvals.stamp(self.now);
    }
}
