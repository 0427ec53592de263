//! One task's running state: its events and interrupt, the step counter and
//! budget, the completion gate (`changed_since_tests`), its tokens and cost,
//! its last test run. It lives while `Session::run_task` runs; what must
//! survive a stop for `/continue` is taken and put back by `carry`.

use super::contract::{AgentEvent, EventSender, TestReceipt};
use crate::llm::TokenUsage;
use crate::tools::snapshot::RunChange;
use std::collections::BTreeMap;
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
    /// Files changed by a tool other than stepwise's own edits, and who
    /// changed them (`mcp <server>`), for the receipt.
    pub(super) made_by: BTreeMap<String, String>,
    /// The files the last test run rewrote, when it passed and nothing else
    /// changed since: a next passing run that rewrites only these converges.
    pub(super) run_rewrites: Option<Vec<String>>,
    /// Files every passing run rewrites (a report, a coverage file): the gate
    /// accepted the second such run, and the receipt says so.
    pub(super) rewritten_by_every_run: Vec<String>,
}

impl Task<'_> {
    /// Something other than a test run changed files: the gate re-arms, and
    /// a report rewritten by test runs converges only on two runs in a row.
    pub(super) fn changed(&mut self) {
        self.changed_since_tests = true;
        self.run_rewrites = None;
        self.rewritten_by_every_run.clear();
    }

    /// A finished test run's verdict on the gate: a pass that changed no
    /// file meets it; a pass that rewrote only what the previous passing run
    /// (with nothing changed between) rewrote meets it too, as converged.
    /// Returns whether it converged that way.
    pub(super) fn tests_ran(&mut self, passed: bool, rewrote: Vec<String>) -> bool {
        if !passed {
            self.run_rewrites = None;
            return false;
        }
        if rewrote.is_empty() {
            self.changed_since_tests = false;
            self.run_rewrites = None;
            self.rewritten_by_every_run.clear();
            return false;
        }
        let converged = self
            .run_rewrites
            .as_ref()
            .is_some_and(|previous| rewrote.iter().all(|p| previous.contains(p)));
        if converged {
            self.changed_since_tests = false;
            self.rewritten_by_every_run = rewrote;
        } else {
            self.run_rewrites = Some(rewrote);
        }
        converged
    }

    pub(super) fn emit(&self, event: AgentEvent) {
        // A consumer that went away is not the core's problem.
        let _ = self.events.send(event);
    }
}
