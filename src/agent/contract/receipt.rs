//! The receipt of an accepted final answer: facts stepwise measured itself
//! (the last test run, the files changed, the diff hash), never text taken
//! from the model.

use crate::tools::reading::snapshot::RunChange;
use crate::tools::testing::test_infra::InfraChange;
use crate::tools::testing::test_run::Verified;
use crate::tools::testing::test_runner::TestRun;
use serde::Serialize;

/// What stepwise itself checked when it accepted a final answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Receipt {
    /// The task's last test run, if it ran tests.
    pub tests: Option<TestReceipt>,
    /// Files the task changed (net, from before its first edit to after its last).
    pub files: Vec<FileStat>,
    /// Short SHA-256 of the workspace diff since the session started.
    pub diff_hash: String,
    /// The task ended with a final answer in its first step and no tool was
    /// called: nothing was looked at or checked.
    pub no_tool_used: bool,
    /// Files changed in this task and the workspace has no test command: the
    /// answer was accepted without a test run ("unverified: no test command").
    pub no_test_command: bool,
    /// Files the task's test runs created, changed or deleted themselves
    /// (for runs with a layer: what the user kept of it).
    pub changed_by_tests: Vec<RunChange>,
    /// What test runs wrote and stepwise kept out of the workspace, each
    /// `path (why)`; and runs whose changes were compared only partly.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept_out: Vec<String>,
    /// Files each of the last two passing runs rewrote, and nothing else
    /// changed: the gate took them as the runs' own output (a report).
    pub rewritten_by_every_run: Vec<String>,
    /// Files the task changed that change how the tests run (`conftest.py`,
    /// runner configs, test scripts, build scripts): the green is the project's own.
    pub tests_changed: Vec<InfraChange>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestReceipt {
    pub command: String,
    pub exit_code: Option<i32>,
    /// The summary stepwise built from the runner's output, e.g. `5 passed`.
    pub summary: String,
    /// The run's sandbox state (`sandboxed`, `not sandboxed`, …); empty when unknown.
    pub sandbox: String,
    /// The gate's verdict on the run (exit code and summary agree).
    pub passed: bool,
    /// Whether the runner's summary was checked, or only the exit code.
    pub verified: Verified,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileStat {
    pub path: String,
    pub added: usize,
    pub removed: usize,
    pub created: bool,
    /// Who changed it when it was not one of stepwise's own edits: an MCP
    /// server (`mcp filesystem`). Absent for stepwise's edits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

impl From<&TestRun> for TestReceipt {
    fn from(run: &TestRun) -> Self {
        TestReceipt {
            command: run.command.clone(),
            exit_code: run.exit_code,
            summary: run.summary.clone(),
            sandbox: run.sandbox.clone(),
            passed: run.passed,
            verified: run.verified,
        }
    }
}
