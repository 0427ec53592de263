//! The task's approval scopes as the session owns them: grants come from the
//! user's "approve for task" answers, revocations from the `Revoker` channel
//! (drained before each tool call's approval check), and the whole set is
//! cleared at each task's start and end. Every change is reported as one
//! `ScopesChanged` event carrying the complete set, so a front end never
//! reads shared state.

use crate::agent::contract::{AgentEvent, EventSender};
use crate::agent::session::Session;
use crate::agent::step::scopes::Revoker;
use crate::tools::ToolId;

impl Session {
    /// The tools approved for the rest of the running task, sorted by name.
    pub fn approved_tools(&self) -> Vec<ToolId> {
        self.approvals.list()
    }

    /// A handle to take task approvals back, also while a task runs.
    pub fn revoker(&self) -> Revoker {
        self.revoker.clone()
    }

    /// Apply the revocations sent so far; report the new set if it changed.
    pub(in crate::agent) fn apply_revocations(&mut self, events: &EventSender) {
        let mut changed = false;
        while let Ok(tools) = self.revocations.try_recv() {
            changed |= self.approvals.revoke(&tools);
        }
        if changed {
            self.report_scopes(events);
        }
    }

    /// Send the whole set of task approvals (after it changed).
    pub(in crate::agent) fn report_scopes(&self, events: &EventSender) {
        let _ = events.send(AgentEvent::ScopesChanged {
            approved: self.approvals.list(),
        });
    }

    /// Forget the task's approvals (and revocations meant for them).
    pub(in crate::agent) fn end_scopes(&mut self, events: &EventSender) {
        while self.revocations.try_recv().is_ok() {}
        if self.approvals.clear() {
            self.report_scopes(events);
        }
    }
}
