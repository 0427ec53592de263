//! `/continue` resumes the same task: what a task that stopped without an
//! accepted answer (an error, an interrupt, the step budget) leaves for its
//! resumption.
//!
//! What must stay true: resuming never forgets an untested change — the
//! completion gate, the task's changed files (its task number), its last test
//! run and its step counter carry over; only a new task starts afresh.
//! (Tokens and cost are counted per run, as the front ends add them up.)

use crate::agent::contract::TestReceipt;
use crate::agent::task::Task;
use crate::tools::reading::snapshot::RunChange;
use std::collections::BTreeMap;

/// The state of a task that stopped before an accepted answer.
#[derive(Debug, Clone)]
pub(in crate::agent) struct Carried {
    step: u32,
    changed_since_tests: bool,
    last_tests: Option<TestReceipt>,
    tool_used: bool,
    changed_by_tests: Vec<RunChange>,
    kept_out: Vec<String>,
    made_by: BTreeMap<String, String>,
    run_rewrites: Option<Vec<String>>,
    rewritten_by_every_run: Vec<String>,
    mcp_server: Option<String>,
}

impl Carried {
    pub(in crate::agent) fn from_task(t: &Task<'_>) -> Self {
        Carried {
            step: t.step,
            changed_since_tests: t.changed_since_tests,
            last_tests: t.last_tests.clone(),
            tool_used: t.tool_used,
            changed_by_tests: t.changed_by_tests.clone(),
            kept_out: t.kept_out.clone(),
            made_by: t.made_by.clone(),
            run_rewrites: t.run_rewrites.clone(),
            rewritten_by_every_run: t.rewritten_by_every_run.clone(),
            mcp_server: t.mcp_server.clone(),
        }
    }

    /// Put the stopped task's state back; the resumed run gets a full step
    /// budget counted on from where the task stopped.
    pub(in crate::agent) fn restore(self, t: &mut Task<'_>, max_steps: u32) {
        t.step = self.step;
        t.limit = self.step.saturating_add(max_steps);
        t.changed_since_tests = self.changed_since_tests;
        t.last_tests = self.last_tests;
        t.tool_used = self.tool_used;
        t.changed_by_tests = self.changed_by_tests;
        t.kept_out = self.kept_out;
        t.made_by = self.made_by;
        t.run_rewrites = self.run_rewrites;
        t.rewritten_by_every_run = self.rewritten_by_every_run;
        t.mcp_server = self.mcp_server;
    }
}
