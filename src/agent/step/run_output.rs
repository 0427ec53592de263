//! An approved test run, and what it wrote: the one door from a run into
//! the workspace. Where the sandbox gives the run a layer, the run wrote
//! only there; its entries are sorted by `tools::layer::rules`, the data
//! it wrote is offered (one approval, with its diff), the code it wrote is
//! offered apart (only a person's choice keeps it, never `--yes`), and
//! what is never kept (git metadata, compiled files, links, …) is named in
//! the result and the receipt. Where there is no layer, the workspace is
//! compared before and after the run (`tools::reading::snapshot`, `plants`), and a
//! comparison that could not see everything is said and never counts as a
//! clean run.
//!
//! What must stay true: nothing of a run reaches the workspace unless a
//! decision kept it; a kept change counts as a change for the gate; a run
//! that wrote what would run later (a `.git`, a `.pyc`, a link) never
//! counts as clean, even though none of it was kept.

use crate::agent::contract::{ApprovalAction, Decision, TestReceipt};
use crate::agent::session::{Session, Task};
use crate::agent::step::approve::USER_REASON;
use crate::agent::step::execute::ChangedBy;
use crate::tools::edits::patch_apply::PreparedPatch;
use crate::tools::layer::{keep, rules};
use crate::tools::reading::snapshot::{RunChange, Snapshot};
use crate::tools::testing::test_run::{LayerRun, TestRun};
use crate::tools::{TestCommand, ToolId, ToolOutput, sandbox, testing::test_runner};

/// Why a staged task keeps no code a test run wrote.
const CODE_NOT_STAGED: &str = "a stage keeps no code a test run wrote (only a person's explicit choice keeps it, and a staged task asks no one)";

impl Session {
    /// Run approved tests; keep of what they wrote only what is decided.
    pub(in crate::agent) async fn run_tests(
        &mut self,
        t: &mut Task<'_>,
        call_id: &str,
        tool: &ToolId,
        runner: TestCommand,
    ) -> ToolOutput {
        let root = self.workspace.root().to_path_buf();
        let policy = self.settings.sandbox.clone();
        if !sandbox::layered(&root, &policy) {
            return self.run_tests_compared(t, runner).await;
        }
        let timeout = self.settings.test_timeout;
        let run = test_runner::run_with(&root, &runner, timeout, t.cancel, &policy).await;
        let mut run = match run {
            Ok(run) => run,
            // It did not start, or was interrupted: its layer is gone with
            // it, and nothing of it reached the workspace.
            Err(problem) => {
                t.tests_ran(false, Vec::new());
                return ToolOutput::error(problem);
            }
        };
        let layer = run.layer.take().unwrap_or_else(|| LayerRun {
            error: Some("the run had no layer".into()),
            ..LayerRun::default()
        });
        let lower = std::fs::canonicalize(&root).unwrap_or(root);
        let deny = self.workspace.deny();
        let ctx = rules::Context::new(&lower, deny, &layer.build_outputs, &layer.entries);
        let sorted = keep::sort(&self.workspace, &ctx, &layer.entries);
        let mut kept: Vec<RunChange> = Vec::new();
        let mut not_kept: Vec<String> = Vec::new();
        for (patch, code) in [(&sorted.data, false), (&sorted.code, true)] {
            let files = patch.diffs();
            if files.is_empty() {
                continue;
            }
            let action = ApprovalAction::KeepRunOutput {
                files: files.clone(),
                code,
            };
            // In a stage, the data a run wrote is kept in the stage (the
            // changeset's review decides on it with the rest); the code it
            // wrote is not: a stage asks no one, and only a person's choice
            // keeps code a run wrote (`exec --apply` would write it unseen).
            let decision = match (self.staged, code) {
                (true, false) => Decision::Approve,
                (true, true) => Decision::Decline {
                    reason: Some(CODE_NOT_STAGED.into()),
                },
                (false, _) => self.ask(t, call_id, tool, action, false).await,
            };
            let (chosen, why) = chosen(patch, decision);
            let written = chosen.as_ref().map_or_else(Vec::new, |c| c.diffs());
            for diff in files {
                if !written.iter().any(|w| w.path == diff.path) {
                    not_kept.push(format!("{} ({why})", diff.path));
                }
            }
            if let Some(chosen) = chosen {
                let (written, refused) = keep::apply(&self.workspace, &chosen);
                kept.extend(written);
                not_kept.extend(refused.into_iter().map(|(p, why)| format!("{p} ({why})")));
            }
        }
        let (hostile, harmless): (Vec<_>, Vec<_>) = sorted
            .discarded
            .iter()
            .partition(|(_, why)| why.runs_later());
        let named = |list: &[&(String, rules::Why)]| -> Vec<String> {
            list.iter()
                .map(|(p, why)| format!("{p} ({})", why.text()))
                .collect()
        };
        let hostile = named(&hostile);
        not_kept.extend(named(&harmless));
        if let Some(error) = &layer.error {
            not_kept.push(format!("what the run wrote could not be read: {error}"));
        }
        kept.sort_by(|a, b| a.path.cmp(&b.path));
        self.record_changes(t, &kept, ChangedBy::Tests);
        // A layer that could not be read hid what the run wrote (a run that
        // replaced its own layer's folder): never a clean run.
        let converged = if hostile.is_empty() && layer.error.is_none() {
            t.tests_ran(run.passed, kept.iter().map(|c| c.path.clone()).collect())
        } else {
            t.changed();
            false
        };
        t.kept_out.push(at_most(&hostile, &not_kept, RECEIPT_NAMES));
        t.kept_out.retain(|k| !k.is_empty());
        if !not_kept.is_empty() {
            run.notes.insert(
                0,
                format!(
                    "not kept of what the run wrote (the workspace never had it): {}",
                    at_most(&not_kept, &[], NOTE_NAMES)
                ),
            );
        }
        if let Some(note) = hostile_note(&hostile) {
            run.notes.insert(0, note);
        }
        run.changed_files = kept;
        self.finish_run(t, run, converged)
    }

    /// A run without a layer: the workspace compared before and after it.
    async fn run_tests_compared(&mut self, t: &mut Task<'_>, runner: TestCommand) -> ToolOutput {
        let before = Snapshot::take_after(&self.workspace, self.snapshot.as_ref());
        let root = self.workspace.root().to_path_buf();
        let plants_before = sandbox::plants::find(&root, false);
        let timeout = self.settings.test_timeout;
        let policy = &self.settings.sandbox;
        let result = test_runner::run_with(&root, &runner, timeout, t.cancel, policy).await;
        // Whatever the run did to the files counts, even when it failed.
        let after = Snapshot::take_after(&self.workspace, Some(&before));
        let changed = before.changes_to(&after);
        let mut planted = plants_before.planted_since(&sandbox::plants::find(&root, false), &root);
        // A run that floods the workspace past what a snapshot looks at
        // could hide its changes behind the flood: said, like a plant.
        if before.complete && !after.complete {
            planted.push(format!(
                "over {} files (the snapshot stopped there: what the run changed past them was not looked at)",
                crate::tools::reading::snapshot::MAX_FILES
            ));
        }
        let partial = before.partial(&after);
        self.snapshot = Some(after);
        self.record_changes(t, &changed, ChangedBy::Tests);
        let mut run = match result {
            Ok(run) => run,
            Err(problem) => {
                t.tests_ran(false, Vec::new());
                return ToolOutput::error(problem);
            }
        };
        let rewrote = changed.iter().map(|c| c.path.clone()).collect();
        // A plant (a .pyc, a .git, a link) keeps the gate armed and never
        // converges: it is no report of the run's own. Nor does a run
        // whose changes could not all be seen.
        let converged = if planted.is_empty() && partial.is_none() {
            t.tests_ran(run.passed, rewrote)
        } else {
            t.changed();
            false
        };
        if let Some(partial) = partial {
            let text = format!(
                "what this run changed was compared only partly ({partial}): this system gives test runs no layer, so the run wrote into the workspace directly, and it does not count as a clean run"
            );
            t.kept_out.push(format!("compared only partly: {partial}"));
            run.notes.insert(0, text);
        }
        if let Some(note) = sandbox::plants::note(&planted) {
            run.notes.insert(0, note);
        }
        run.changed_files = changed;
        self.finish_run(t, run, converged)
    }

    /// The tool result of a finished run; the receipt's last run.
    fn finish_run(&self, t: &mut Task<'_>, run: TestRun, converged: bool) -> ToolOutput {
        t.last_tests = Some(TestReceipt::from(&run));
        let mut output = run.to_output();
        if converged {
            output.body["note"] = serde_json::json!(format!(
                "this run rewrote only what the previous passing run rewrote ({}): they are the runs' own output, and the tests pass",
                t.rewritten_by_every_run.join(", ")
            ));
        }
        output
    }
}

/// Most names a note lists (then `and N more`).
const NOTE_NAMES: usize = 40;
/// Most names one run adds to the receipt.
const RECEIPT_NAMES: usize = 12;

/// The names of `first` then `then`, at most `most`, then how many more.
fn at_most(first: &[String], then: &[String], most: usize) -> String {
    let all: Vec<&String> = first.iter().chain(then).collect();
    let mut shown: Vec<String> = all.iter().take(most).map(|s| s.to_string()).collect();
    if all.len() > most {
        shown.push(format!("and {} more", all.len() - most));
    }
    shown.join(", ")
}

/// What a decision on an offer keeps of it, and why the rest is not kept.
fn chosen(patch: &PreparedPatch, decision: Decision) -> (Option<PreparedPatch>, String) {
    let declined = |reason: Option<String>| match reason.filter(|r| !r.trim().is_empty()) {
        Some(r) => format!("declined:{USER_REASON}{r}"),
        None => "declined".to_string(),
    };
    match decision {
        Decision::Approve | Decision::ApproveToolForTask => {
            (Some(patch.clone()), "not chosen".to_string())
        }
        Decision::ApprovePatchHunks { files } => {
            match crate::agent::step::revise::only_patch_hunks(patch.clone(), &files) {
                Ok((patch, _)) => (Some(patch), "not chosen".to_string()),
                Err(_) => (None, "not chosen".to_string()),
            }
        }
        Decision::Decline { reason } => (None, declined(reason)),
        Decision::ApproveHunks { .. } | Decision::ApproveEdited { .. } => (
            None,
            "an edit's choices do not fit what a run wrote".to_string(),
        ),
    }
}

/// The warning for a run that wrote what would run later.
fn hostile_note(hostile: &[String]) -> Option<String> {
    (!hostile.is_empty()).then(|| {
        format!(
            "WARNING: the run wrote what would run later, and none of it reached the workspace: {}; the run does not count as clean: treat the test suite as hostile",
            at_most(hostile, &[], 6)
        )
    })
}
