//! The typed result of a finished test run (`TestRun`): the completion gate
//! and the receipt read its fields; the model's JSON result is built from it
//! (`to_output`), so nothing reads test results back out of JSON.

use crate::tools::ToolOutput;
use crate::tools::reading::snapshot::{self, RunChange};
pub use crate::tools::testing::test_summary::Verified;
use serde_json::json;

/// One finished test run, as measured by stepwise: what the completion gate
/// and the receipt use, and what the model's JSON is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRun {
    /// The command line as shown, e.g. `python3 -m pytest -q`.
    pub command: String,
    /// `None` when the process was killed (timeout) or ended by a signal.
    pub exit_code: Option<i32>,
    /// Exit code 0 and the runner's summary agree that tests ran and passed
    /// (or, for a runner stepwise cannot read, exit code 0), within the timeout.
    pub passed: bool,
    pub timed_out: bool,
    /// The runner's summary line (`4 passed`), else `exit N` or `timed out
    /// after Ns`, with any disagreement said.
    pub summary: String,
    /// Whether the runner's summary was checked, or only the exit code.
    pub verified: Verified,
    /// Tests passed and failed, as stepwise parsed them.
    pub counts: Option<(u64, u64)>,
    /// The tail of the combined output, without any escape sequence.
    pub output: String,
    /// The same tail with its colour sequences, when it had any (for the
    /// user's eyes; see `tools::testing::ansi`).
    pub coloured_output: Option<String>,
    /// The timeout that applied, in seconds.
    pub timeout_secs: u64,
    /// The sandbox state of the run, e.g. `sandboxed` or `not sandboxed`.
    pub sandbox: String,
    /// The resource limit that stopped the run, named (e.g. `memory limit (…)`).
    pub limit: Option<String>,
    /// Files the run created, changed or deleted (they count as changes).
    pub changed_files: Vec<RunChange>,
    /// What the sandbox has to say about the run (a cache it could not
    /// fill, a planted `.git`), shown first.
    pub notes: Vec<String>,
    /// What the run wrote into its layer (`None`: it had none and wrote
    /// straight into the workspace). Taken by the caller, which decides
    /// what of it to keep.
    pub layer: Option<LayerRun>,
}

/// What a run left in its layer, read before the layer was removed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LayerRun {
    pub entries: Vec<crate::tools::layer::Entry>,
    /// The build output folders (relative), kept in the build layer.
    pub build_outputs: Vec<std::path::PathBuf>,
    /// The layer could not be read whole: why (nothing of it is kept).
    pub error: Option<String>,
}

impl TestRun {
    /// A warning (a planted `.git` or `.pyc`), shown before the summary.
    fn warning(&self) -> Option<&str> {
        self.notes
            .iter()
            .find(|n| n.starts_with("WARNING"))
            .map(String::as_str)
    }

    /// The tool result for the model and the displays.
    pub fn to_output(&self) -> ToolOutput {
        let mut out = self.output_for_model();
        out.coloured = self.coloured_output.clone();
        out
    }

    fn output_for_model(&self) -> ToolOutput {
        let payload = json!({
            "command": self.command,
            "returncode": self.exit_code,
            "timed_out": self.timed_out,
            "passed": self.passed,
            "summary": self.summary,
            "verified": self.verified,
            "output": self.output,
            "sandbox": self.sandbox,
        });
        let mut payload = payload;
        if !self.notes.is_empty() {
            payload["sandbox_notes"] = json!(self.notes);
        }
        if let Some(note) = self.warning() {
            payload["summary"] = json!(format!("{note}; {}", self.summary));
        }
        if !self.changed_files.is_empty() {
            payload["files_changed_by_run"] = json!(self.changed_files);
            payload["note"] = json!(format!(
                "this test run itself {}; these count as changes: read them, and run the tests again before answering",
                snapshot::describe(&self.changed_files)
            ));
        }
        if let Some(limit) = &self.limit {
            payload["limit"] = json!(limit);
            return ToolOutput::failed(
                self.summary.clone(),
                format!(
                    "the run was stopped by the sandbox's {limit}; a test uses far more than a test should, or the limit is too low for this project ([sandbox] in stepwise.toml)"
                ),
                payload,
            );
        }
        if self.timed_out {
            return ToolOutput::failed(
                self.summary.clone(),
                format!(
                    "the tests did not finish within {}s and were killed; look for a hanging or very slow test",
                    self.timeout_secs
                ),
                payload,
            );
        }
        if self.passed {
            let mut summary = match self.changed_files.len() {
                0 => self.summary.clone(),
                n => format!("{}; the run changed {n} file(s)", self.summary),
            };
            if let Some(note) = self.warning() {
                summary = format!("{note}; {summary}");
            }
            return ToolOutput::ok(summary, payload);
        }
        let why = match self.notes.first() {
            Some(note) => format!("the tests failed: {note}"),
            None => {
                "the tests failed; read the output, fix the cause, and run the tests again".into()
            }
        };
        ToolOutput::failed(
            format!("{} (exit {})", self.summary, exit_text(self.exit_code)),
            why,
            payload,
        )
    }
}

pub(in crate::tools) fn exit_text(code: Option<i32>) -> String {
    code.map_or("?".into(), |c| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(exit_code: Option<i32>, timed_out: bool) -> TestRun {
        TestRun {
            command: "python3 -m pytest -q".into(),
            exit_code,
            passed: exit_code == Some(0) && !timed_out,
            timed_out,
            summary: if timed_out {
                "timed out after 5s".into()
            } else {
                "1 passed".into()
            },
            output: "out".into(),
            coloured_output: None,
            timeout_secs: 5,
            sandbox: "sandboxed".into(),
            limit: None,
            verified: Verified::ExitCodeAndSummary,
            counts: Some((1, 0)),
            changed_files: Vec::new(),
            notes: Vec::new(),
            layer: None,
        }
    }

    #[test]
    fn the_model_json_is_built_from_the_typed_run() {
        let ok = run(Some(0), false).to_output();
        assert!(ok.success);
        assert_eq!(ok.summary, "1 passed");
        assert_eq!(ok.body["returncode"], 0);
        assert_eq!(ok.body["command"], "python3 -m pytest -q");
        let failed = run(Some(1), false).to_output();
        assert!(!failed.success);
        assert_eq!(failed.summary, "1 passed (exit 1)");
        assert!(
            failed.body["error"]
                .as_str()
                .unwrap()
                .contains("tests failed")
        );
        let slow = run(None, true).to_output();
        assert!(!slow.success);
        assert_eq!(slow.body["timed_out"], true);
        assert!(slow.body["returncode"].is_null());
        assert!(slow.body["error"].as_str().unwrap().contains("within 5s"));
        assert_eq!(ok.body["sandbox"], "sandboxed");
        let limited = TestRun {
            limit: Some("file size limit (1 MiB per file)".into()),
            passed: false,
            ..run(Some(1), false)
        }
        .to_output();
        assert!(!limited.success);
        assert_eq!(limited.body["limit"], "file size limit (1 MiB per file)");
        assert!(
            limited.body["error"]
                .as_str()
                .unwrap()
                .contains("file size limit")
        );
        let mut touched = run(Some(0), false);
        touched.changed_files = vec![RunChange {
            path: "calculator.py".into(),
            change: snapshot::Touch::Changed,
            before: None,
            after: None,
            contents_known: false,
        }];
        let out = touched.to_output();
        assert_eq!(out.summary, "1 passed; the run changed 1 file(s)");
        assert_eq!(out.body["files_changed_by_run"][0]["path"], "calculator.py");
        assert_eq!(out.body["files_changed_by_run"][0]["change"], "changed");
        assert!(
            out.body["note"]
                .as_str()
                .unwrap()
                .contains("changed calculator.py")
        );
    }
}
