//! One task's running state: its events and interrupt, the step counter and
//! budget, the completion gate (`changed_since_tests`), its tokens and cost,
//! its last test run. It lives while `Session::run_task` runs; what must
//! survive a stop for `/continue` is taken and put back by `carry`.

use super::contract::{AgentEvent, EventSender, TestReceipt};
use crate::llm::TokenUsage;
use crate::tools::reading::snapshot::RunChange;
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
    /// What test runs wrote that was kept out of the workspace, and runs
    /// compared only partly (for the receipt).
    pub(super) kept_out: Vec<String>,
    /// The run of identical calls with identical results so far.
    pub(super) repeats: super::model::repeats::RepeatWatch,
    /// Files changed by a tool other than stepwise's own edits, and who
    /// changed them (`mcp <server>`), for the receipt.
    pub(super) made_by: BTreeMap<String, String>,
    /// The files the last test run rewrote, when it passed and nothing else
    /// changed since: a next passing run that rewrites only these converges.
    pub(super) run_rewrites: Option<Vec<String>>,
    /// Files every passing run rewrites (a report, a coverage file): the gate
    /// accepted the second such run, and the receipt says so.
    pub(super) rewritten_by_every_run: Vec<String>,
    /// The last MCP server the task called: from then on the workspace is
    /// looked at again before each action and answer, for writes a call
    /// set off that landed after it was compared (see `execute`).
    pub(super) mcp_server: Option<String>,
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
        // Only output converges: a run that rewrites code is never taken as
        // tested by the next run that rewrites it again.
        let output_only = !rewrote.iter().any(|p| is_code(p));
        let converged = output_only
            && self
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

/// Whether a path is code: source, build or test configuration, or a file
/// a loader imports (`.so`, `.pth`, …). Rewritten by a run, it changed what
/// was tested, so it never converges.
fn is_code(path: &str) -> bool {
    crate::tools::layer::rules::is_code(path)
}

#[cfg(test)]
mod tests {
    use super::is_code;

    #[test]
    fn reports_converge_and_code_does_not() {
        for report in [
            "report.txt",
            "coverage.xml",
            "out/results.json",
            "junit.xml",
        ] {
            assert!(!is_code(report), "{report}");
        }
        for code in [
            "calculator.py",
            "src/lib.rs",
            "web/app.ts",
            "Makefile",
            "conftest.py",
            "calculator.cpython-311-x86_64-linux-gnu.so",
            "site-hook.pth",
        ] {
            assert!(is_code(code), "{code}");
        }
    }
}
