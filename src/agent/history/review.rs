//! What the session changed, seen from the front end: the verification
//! receipt of an accepted answer, `/diff` (cumulative diff, git status) and
//! `/undo` (shown as a diff, approved like any write, told to the model).

use crate::agent::contract::{
    AgentEvent, ApprovalAction, ApprovalRequest, Decision, EventSender, FileStat, Receipt,
};
use crate::agent::history::git;
use crate::agent::model::protocol;
use crate::agent::session::{Session, Task};
use crate::diff::FileDiff;
use crate::tools::ToolName;
use crate::tools::testing::test_infra::infra_change;

use sha2::{Digest, Sha256};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

impl Session {
    /// The receipt for the task's accepted answer.
    pub(in crate::agent) fn receipt(&self, t: &Task<'_>) -> Receipt {
        let mut files: Vec<FileStat> = self
            .changes
            .task_diffs(self.tasks)
            .iter()
            .map(|d| FileStat {
                path: d.path.clone(),
                added: d.added,
                removed: d.removed,
                created: d.new_file,
                by: t.made_by.get(&d.path).cloned(),
            })
            .collect();
        // A file another tool changed whose text is not known (binary, too
        // large) is named all the same.
        for (path, by) in &t.made_by {
            if !files.iter().any(|f| &f.path == path) {
                files.push(FileStat {
                    path: path.clone(),
                    added: 0,
                    removed: 0,
                    created: false,
                    by: Some(by.clone()),
                });
            }
        }
        Receipt {
            tests: t.last_tests.clone(),
            files,
            diff_hash: diff_hash(&self.changes.session_diffs(&self.workspace)),
            no_tool_used: t.step == 1 && !t.tool_used,
            no_test_command: t.changed_since_tests && self.test_commands.is_empty(),
            changed_by_tests: t.changed_by_tests.clone(),
            kept_out: t.kept_out.clone(),
            rewritten_by_every_run: t.rewritten_by_every_run.clone(),
            tests_changed: self
                .changes
                .task_contents(self.tasks)
                .iter()
                .filter_map(|(path, before, after)| {
                    infra_change(path, before.as_deref(), after.as_deref())
                })
                .collect(),
        }
    }

    /// The cumulative diff since the session started (and git's view, if any).
    pub fn session_diffs(&self) -> Vec<FileDiff> {
        self.changes.session_diffs(&self.workspace)
    }

    /// The files the session has changed so far, from its change log (see
    /// `ChangeLog::changed_paths`): no file is read.
    pub fn changed_paths(&self) -> Vec<String> {
        self.changes.changed_paths()
    }

    /// Each change in the change log, in order (path, content before and
    /// after): what a replay shows with the calls that made them.
    pub fn recorded_changes(&self) -> Vec<(String, Option<String>, Option<String>)> {
        self.changes.each()
    }

    /// `/diff`: send the session diff and the git status.
    pub async fn show_diff(&self, events: &EventSender) {
        let files = self.session_diffs();
        let ours: Vec<String> = files.iter().map(|d| d.path.clone()).collect();
        let git = git::status(self.workspace.root(), &ours).await;
        let _ = events.send(AgentEvent::SessionDiff { files, git });
    }

    /// `/undo` or `/undo all`: show the revert as a diff, ask, revert, tell the model.
    pub async fn undo(&mut self, all: bool, events: &EventSender, cancel: CancellationToken) {
        let finish = |reverted: Vec<String>, error: Option<String>| {
            let _ = events.send(AgentEvent::UndoFinished { reverted, error });
        };
        let plan = match self.changes.plan_undo(&self.workspace, all) {
            Ok(plan) => plan,
            Err(e) => return finish(Vec::new(), Some(e)),
        };
        let (reply, answer) = oneshot::channel();
        let _ = events.send(AgentEvent::ApprovalRequested(ApprovalRequest {
            step: 0,
            call_id: format!("undo_{}", self.tasks),
            tool: ToolName::WRITE_FILE.into(),
            action: ApprovalAction::Undo {
                files: plan.steps.iter().map(|s| s.diff.clone()).collect(),
            },
            allow_for_task: false,
            reply,
        }));
        let decision = tokio::select! {
            d = answer => d.unwrap_or(Decision::Decline { reason: None }),
            _ = cancel.cancelled() => Decision::Decline { reason: None },
        };
        if let Decision::Decline { .. } = decision {
            return finish(
                Vec::new(),
                Some("undo declined; nothing was reverted".into()),
            );
        }
        match self.changes.apply_undo(&self.workspace, &plan) {
            Ok(reverted) => {
                let what: Vec<String> = plan
                    .steps
                    .iter()
                    .map(|s| match s.restore {
                        Some(_) => format!("{} (restored to its earlier content)", s.path),
                        None => format!("{} (deleted; it did not exist before)", s.path),
                    })
                    .collect();
                protocol::record_feedback(
                    &mut self.history,
                    &format!(
                        "The user reverted your changes to: {}. Read these files again before editing them.",
                        what.join(", ")
                    ),
                );
                finish(reverted, None);
            }
            Err(e) => finish(Vec::new(), Some(e)),
        }
    }
}

/// Short SHA-256 of the diffs' unified text (12 hex digits).
pub fn diff_hash(diffs: &[FileDiff]) -> String {
    let mut hasher = Sha256::new();
    for d in diffs {
        hasher.update(d.to_unified().as_bytes());
    }
    let digest = hasher.finalize();
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}
