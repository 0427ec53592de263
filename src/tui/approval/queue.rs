//! Pending approvals: the queue of the core's requests (answered in order
//! through their `oneshot` replies), the optional decline reason being typed,
//! and the review (hunks, edited version) of the request at the front. The
//! queue, the reason and the review change only through `Approvals`' methods;
//! the prompt bar that shows them is drawn by `render::prompt_bar`.
//!
//! What must stay true: a request that comes to the front ignores its keys
//! for `ARMING` (keys typed ahead into the input never answer it); while the
//! user is composing (`App::composing`) its keys stay text until the user
//! moves to the prompt (`take`), which each request needs anew; and a
//! key that asks for a second press (`a` for the whole task, `n` on the
//! user's own version) is forgotten when another request comes to the front.

use crate::agent::{ApprovalAction, ApprovalRequest, Decision};
use crate::tools::ToolId;
use crate::tui::approval::review::Review;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How long a prompt ignores keys after it appears.
pub const ARMING: Duration = Duration::from_millis(300);

/// A key pressed once that acts only when pressed again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirm {
    /// `a`: approve the tool for the rest of the task.
    ForTask,
    /// `n` on the user's edited version: discard it.
    DiscardEdit,
}

/// What was answered, for the tool-call pane and the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub step: u32,
    pub call_id: String,
    pub tool: ToolId,
    pub decision: Decision,
    /// It was an `/undo`, not a step of a task.
    pub undo: bool,
}

#[derive(Debug, Default)]
pub struct Approvals {
    queue: VecDeque<ApprovalRequest>,
    /// `Some` while the user types a reason for declining the current request.
    reason: Option<String>,
    /// The review of the current request; starts afresh for each request.
    review: Review,
    /// Counts the requests that came to the front (names the current one).
    serial: u64,
    /// Which request the review belongs to.
    front: Option<(u32, String)>,
    /// When the front request was first shown (set by `stamp`).
    opened_at: Option<Instant>,
    /// A key waiting for its second press.
    confirm: Option<Confirm>,
    /// The user moved to the prompt (Esc or Tab while composing).
    taken: bool,
}

impl Approvals {
    pub fn push(&mut self, request: ApprovalRequest) {
        self.queue.push_back(request);
        self.front_changed();
    }

    /// Identifies the current request (a new one gets a new serial).
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// Start a new review (and forget a half-typed reason) when another
    /// request came to the front.
    fn front_changed(&mut self) {
        let front = self.queue.front().map(|r| (r.step, r.call_id.clone()));
        if front == self.front {
            return;
        }
        self.front = front;
        self.serial += 1;
        self.reason = None;
        self.opened_at = None;
        self.confirm = None;
        self.taken = false;
        self.review = self
            .queue
            .front()
            .map(|r| Review::new(&r.action))
            .unwrap_or_default();
    }

    /// The clock as of an update: a request that came to the front since
    /// the last one starts arming now.
    pub fn stamp(&mut self, now: Instant) {
        if self.opened_at.is_none() && self.is_open() {
            self.opened_at = Some(now);
        }
    }

    /// The user moved to the front request's prompt: its keys answer it even
    /// with a draft in the input.
    pub fn take(&mut self) {
        self.taken = true;
    }

    pub fn taken(&self) -> bool {
        self.taken
    }

    /// Until when the front request ignores keys, if it still does at `now`.
    pub fn arming_until(&self, now: Instant) -> Option<Instant> {
        let until = self.opened_at? + ARMING;
        (now < until).then_some(until)
    }

    /// The key waiting for its second press, if any.
    pub fn confirm(&self) -> Option<Confirm> {
        self.confirm
    }

    /// Set (or forget, with `None`) the key waiting for its second press.
    pub fn set_confirm(&mut self, confirm: Option<Confirm>) {
        self.confirm = confirm;
    }

    /// The decline reason being typed, if the user is typing one.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// Start typing a reason for declining the current request.
    pub fn start_reason(&mut self) {
        self.reason = Some(String::new());
    }

    /// Back to the y/N question.
    pub fn cancel_reason(&mut self) {
        self.reason = None;
    }

    /// The reason being typed, to edit it (`None` when none is typed).
    pub fn reason_mut(&mut self) -> Option<&mut String> {
        self.reason.as_mut()
    }

    /// The review of the current request.
    pub fn review(&self) -> &Review {
        &self.review
    }

    /// Accept or reject the hunk under the review's cursor.
    pub fn toggle_hunk(&mut self) {
        self.review.toggle();
    }

    /// Move the review's cursor by `delta` hunks; returns the hunk it is on.
    pub fn move_hunk(&mut self, delta: isize) -> usize {
        self.review.move_cursor(delta);
        self.review.cursor
    }

    /// Move the review's cursor to the next / previous file of a patch;
    /// returns the hunk it is on.
    pub fn move_file(&mut self, delta: isize) -> usize {
        self.review.move_file(delta);
        self.review.cursor
    }

    pub fn current(&self) -> Option<&ApprovalRequest> {
        self.queue.front()
    }

    pub fn is_open(&self) -> bool {
        !self.queue.is_empty()
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Forget requests the core stopped waiting for (e.g. after an interrupt).
    pub fn prune(&mut self) -> bool {
        let before = self.queue.len();
        self.queue.retain(|r| !r.reply.is_closed());
        self.front_changed();
        before != self.queue.len()
    }

    /// Answer the current request.
    pub fn decide(&mut self, decision: Decision) -> Option<Answered> {
        let request = self.queue.pop_front()?;
        self.front_changed();
        let answered = Answered {
            step: request.step,
            call_id: request.call_id.clone(),
            tool: request.tool.clone(),
            decision: decision.clone(),
            undo: matches!(request.action, ApprovalAction::Undo { .. }),
        };
        // The core may have stopped waiting; then there is nothing to tell it.
        let _ = request.reply.send(decision);
        Some(answered)
    }

    /// What `y` means for the current request, after its review.
    pub fn decision(&self) -> Option<Decision> {
        self.current().map(|r| self.review.decision(&r.action))
    }

    /// The user edited the current proposal: review their version instead.
    pub fn set_edited(&mut self, content: String) {
        self.confirm = None;
        if let Some(request) = self.queue.front() {
            self.review.set_edited(&request.action, content);
        }
    }

    /// Approve every queued request of `tool` (after "approve for the task").
    pub fn approve_tool(&mut self, tool: &ToolId) -> Vec<Answered> {
        let (matching, rest): (VecDeque<_>, VecDeque<_>) = self.queue.drain(..).partition(|r| {
            &r.tool == tool && r.allow_for_task && !matches!(r.action, ApprovalAction::Undo { .. })
        });
        self.queue = rest;
        self.front_changed();
        matching
            .into_iter()
            .map(|request| {
                let answered = Answered {
                    step: request.step,
                    call_id: request.call_id.clone(),
                    tool: request.tool.clone(),
                    decision: Decision::Approve,
                    undo: false,
                };
                let _ = request.reply.send(Decision::Approve);
                answered
            })
            .collect()
    }

    /// Decline everything (quit or interrupt): nothing gets written.
    pub fn decline_all(&mut self) -> Vec<Answered> {
        let mut out = Vec::new();
        while let Some(a) = self.decide(Decision::Decline { reason: None }) {
            out.push(a);
        }
        out
    }
}
