//! One task's running state: its events and interrupt, the step counter and
//! budget, the completion gate (`changed_since_tests`), its tokens and cost,
//! its last test run. It lives while `Session::run_task` runs; what must
//! survive a stop for `/continue` is taken and put back by `carry`.

use super::contract::{AgentEvent, EventSender, TestReceipt};
use crate::llm::TokenUsage;
use crate::tools::snapshot::RunChange;
use tokio_util::sync::CancellationToken;

/// State of the task being run.
pub(super) struct Task<'a> {
    pub(super) events: &'a EventSender,
    pub(super) cancel: &'a CancellationToken,
    pub(super) step: u32,
    /// The step count at which the step budget runs out.
    pub(super) limit: u32,
    /// A file changed and no test run has passed since.
    pub(super) changed_since_tests: bool,
    pub(super) usage: TokenUsage,
    pub(super) cost: f64,
    /// The task's last test run.
    pub(super) last_tests: Option<TestReceipt>,
    /// A tool was called in this task (for the receipt's `no_tool_used`).
    pub(super) tool_used: bool,
    /// Files the task's test runs created, changed or deleted.
    pub(super) changed_by_tests: Vec<RunChange>,
    /// The run of identical calls with identical results so far.
    pub(super) repeats: super::repeats::RepeatWatch,
}

impl Task<'_> {
    pub(super) fn emit(&self, event: AgentEvent) {
        // A consumer that went away is not the core's problem.
        let _ = self.events.send(event);
    }
}
