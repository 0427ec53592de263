//! Staged tasks: the session works in a stage (`tools::stage`), a
//! copy-on-write layer over the workspace that its file tools read through
//! and write into and its test runs see above the project. Writes and test
//! runs need no prompt there, because nothing leaves the stage; once the
//! model's answer passed the gate, its whole changeset is one review
//! ([`ApprovalAction::ApplyStage`]), and only what that review chose is
//! written into the workspace.
//!
//! What must stay true: while a stage is open, no tool writes the project
//! itself (a call of another program that could, an MCP tool not configured
//! read-only, is refused); a changeset is offered only after an answer met
//! the gate; a conflict is never written; a declined review keeps the stage
//! whole, and an applied one removes it unless files were left in it.

use super::contract::{AgentEvent, ApprovalAction, Decision, EventSender, Receipt};
use super::session::{Session, Task};
use crate::tool_id::ToolName;
use crate::tools::stage::changeset::{self, Changeset};
use crate::tools::stage::{Stage, Store};
use crate::tools::{ToolId, sandbox};
use std::sync::Arc;

/// Why another program's tool may not run in a staged task.
pub(super) const NO_WRITES_PAST_THE_STAGE: &str = "a staged task lets no other program change the workspace: this tool of an MCP server could write past the stage (only tools configured read-only run in a staged task)";

impl Session {
    /// Work in a stage from now on: the workspace's newest stage if one is
    /// left (a task cut off, a changeset not applied), else a new one.
    /// Returns what to tell the user.
    pub fn enter_stage(&mut self, task: &str) -> Result<String, String> {
        let store = match self.store.clone() {
            Some(store) => store,
            None => Store::user().map_err(|e| format!("cannot keep a stage: {e}"))?,
        };
        self.enter_stage_in(store, task)
    }

    /// [`enter_stage`](Self::enter_stage) with the stages kept in `store`.
    pub fn enter_stage_in(&mut self, store: Store, task: &str) -> Result<String, String> {
        let root = self.workspace.root().to_path_buf();
        if !sandbox::layered(&root, &self.settings.sandbox) {
            return Err(format!(
                "a staged task needs the sandbox's workspace layer, so that test runs see the stage; this machine's sandbox has none ({}). Run without --stage to approve each step instead",
                self.sandbox_state()
            ));
        }
        let left =
            Stage::newest(&store, &root).map_err(|e| format!("cannot open the stage: {e}"))?;
        let (stage, message) = match left {
            Some(stage) => {
                let files = stage.entries().map_or(0, |e| e.len());
                let message = format!(
                    "Staged: this task goes on in the stage {} left earlier ({files} files staged); `stepwise stage discard {}` drops it.",
                    stage.id(),
                    stage.id()
                );
                (stage, message)
            }
            None => {
                let stage = Stage::create(&store, &root, task)
                    .map_err(|e| format!("cannot make a stage: {e}"))?;
                let message = format!(
                    "Staged: this task works in the stage {}. Nothing is written into the workspace until you review its changeset, after its tests pass.",
                    stage.id()
                );
                (stage, message)
            }
        };
        self.store = Some(store);
        self.use_stage(Arc::new(stage));
        Ok(message)
    }

    /// Work in a new stage of its own, as one attempt of the comparison
    /// `group` (see `headless::compare`).
    pub fn enter_attempt_stage(
        &mut self,
        store: Store,
        task: &str,
        group: &str,
    ) -> Result<String, String> {
        let root = self.workspace.root().to_path_buf();
        if !sandbox::layered(&root, &self.settings.sandbox) {
            return Err(format!(
                "comparing models needs the sandbox's workspace layer, so that each attempt's test runs see its own stage; this machine's sandbox has none ({})",
                self.sandbox_state()
            ));
        }
        let stage = Stage::create_in_group(&store, &root, task, Some(group))
            .map_err(|e| format!("cannot make a stage: {e}"))?;
        let id = stage.id().to_string();
        self.store = Some(store);
        self.use_stage(Arc::new(stage));
        Ok(id)
    }

    fn use_stage(&mut self, stage: Arc<Stage>) {
        self.settings.sandbox.stage = Some(stage.upper_path());
        self.workspace.set_stage(Some(stage));
        self.staged = true;
    }

    /// The open stage's name, in a staged session.
    pub fn stage_name(&self) -> Option<String> {
        self.workspace.stage().map(|s| s.id().to_string())
    }

    /// `/stage`: work in a stage from the next task on, or step by step
    /// again. Leaving keeps the stage on disk: `/stage` again (or
    /// `exec --stage`) goes on in it.
    pub fn set_staged(&mut self, on: bool, events: &EventSender) {
        let event = match (on, self.staged) {
            (true, true) | (false, false) => AgentEvent::StageChanged {
                stage: self.stage_name(),
                message: match on {
                    true => "Tasks already work in a stage.".into(),
                    false => "Tasks already go step by step.".into(),
                },
            },
            (true, false) => match self.enter_stage("") {
                Ok(message) => AgentEvent::StageChanged {
                    stage: self.stage_name(),
                    message,
                },
                Err(message) => AgentEvent::Error { message },
            },
            (false, true) => {
                let kept = self.stage_name();
                self.leave_stage();
                self.staged = false;
                let message = match kept {
                    Some(id) => format!(
                        "Step by step again: each write and test run is asked. The stage {id} is kept (`/stage` goes on in it, `stepwise stage` lists it)."
                    ),
                    None => "Step by step again: each write and test run is asked.".into(),
                };
                AgentEvent::StageChanged {
                    stage: None,
                    message,
                }
            }
        };
        let _ = events.send(event);
    }

    /// Whether this session works in a stage.
    pub fn is_staged(&self) -> bool {
        self.staged
    }

    /// Before a task: a staged session whose stage was applied gets a new one.
    pub(super) fn stage_for_task(&mut self, task: &str) -> Result<(), String> {
        if !self.staged || self.workspace.stage().is_some() {
            return Ok(());
        }
        self.enter_stage(task).map(|_| ())
    }

    /// After an answer met the gate in a stage: record the receipt with the
    /// stage, offer its changeset, and write what the review chose.
    pub(super) async fn review_stage(&mut self, t: &mut Task<'_>, receipt: &Receipt) {
        let Some(stage) = self.workspace.stage().cloned() else {
            return;
        };
        let passed = receipt.tests.as_ref().is_some_and(|r| r.passed);
        let state = if passed { "passed" } else { "answered" };
        let _ = stage.set_state(state, serde_json::to_value(receipt).ok());
        let real = match self.workspace.unstaged() {
            Ok(real) => real,
            Err(e) => {
                t.emit(AgentEvent::Error {
                    message: format!("cannot open the workspace to apply the stage: {e}"),
                });
                return;
            }
        };
        let set = match Changeset::compute(&stage, &real) {
            Ok(set) => set,
            Err(e) => {
                t.emit(AgentEvent::Error {
                    message: format!("cannot read the stage {}: {e}", stage.id()),
                });
                return;
            }
        };
        let mut left: Vec<String> = set
            .conflicts
            .iter()
            .map(|p| format!("{p} (changed in the workspace since the stage took it)"))
            .chain(set.not_text.iter().map(|p| format!("{p} (not text)")))
            .collect();
        let (written, kept) = if set.is_empty() {
            (Vec::new(), !left.is_empty())
        } else {
            let action = ApprovalAction::ApplyStage {
                stage: stage.id().to_string(),
                files: set.patch.diffs(),
                conflicts: set.conflicts.clone(),
                patch: set.patch_text(),
            };
            // Writing the changeset is a write of files, as `/undo`'s is.
            let tool: ToolId = ToolName::WRITE_FILE.into();
            let call_id = format!("stage_{}", self.tasks);
            let decision = self.ask(t, &call_id, &tool, action, false).await;
            apply_chosen(&set, &real, decision, &mut left)
        };
        let id = stage.id().to_string();
        if kept {
            // What was written leaves the stage; the rest stays in it.
            for path in &written {
                let _ = stage.forget(std::path::Path::new(path));
            }
        } else {
            self.leave_stage();
            if let Ok(stage) = Arc::try_unwrap(stage) {
                let _ = stage.discard();
            }
        }
        t.emit(AgentEvent::StageReviewed {
            stage: id,
            written,
            not_written: left,
            kept,
        });
    }

    /// Leave the stage (it was applied or discarded): the workspace is the
    /// project's own again until the next staged task makes a new one.
    fn leave_stage(&mut self) {
        self.workspace.set_stage(None);
        self.settings.sandbox.stage = None;
    }
}

/// Write the chosen part of the changeset. Returns the files written
/// and whether the stage is kept.
fn apply_chosen(
    set: &Changeset,
    real: &crate::tools::Workspace,
    decision: Decision,
    left: &mut Vec<String>,
) -> (Vec<String>, bool) {
    let chosen = match decision {
        Decision::Approve | Decision::ApproveToolForTask => Some(set.patch.clone()),
        Decision::ApprovePatchHunks { files } => {
            super::step::revise::only_patch_hunks(set.patch.clone(), &files)
                .ok()
                .map(|(p, _)| p)
        }
        Decision::Decline { .. }
        | Decision::ApproveHunks { .. }
        | Decision::ApproveEdited { .. } => {
            left.extend(
                set.patch
                    .diffs()
                    .iter()
                    .map(|d| format!("{} (declined)", d.path)),
            );
            return (Vec::new(), true);
        }
    };
    let Some(chosen) = chosen else {
        left.extend(
            set.patch
                .diffs()
                .iter()
                .map(|d| format!("{} (no hunk chosen)", d.path)),
        );
        return (Vec::new(), true);
    };
    let (changes, refused) = changeset::apply(real, &chosen);
    let written: Vec<String> = changes.iter().map(|c| c.path.clone()).collect();
    for diff in set.patch.diffs() {
        let chosen_file = chosen.diffs().iter().any(|d| d.path == diff.path);
        if !chosen_file {
            left.push(format!("{} (not chosen)", diff.path));
        }
    }
    left.extend(refused.into_iter().map(|(p, why)| format!("{p} ({why})")));
    let kept = !left.is_empty();
    (written, kept)
}
