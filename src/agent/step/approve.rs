//! The approval path of a prepared call, the same for every tool: apply
//! pending revocations, then either a task-wide approval of that tool (by its
//! `ToolId`, an MCP tool's included) covers it or the user is asked, with the
//! plan's approval shape (file changes, a command, an external call); the decision
//! is turned into the action to carry out (maybe only some hunks of an edit
//! or of each file of a patch, or the user's own version) or into a declined
//! result. A patch's deletions are always asked one by one, and a patch is covered by a task-wide approval
//! only when every file of it may be. An interrupt declines, never approves.

use crate::agent::contract::{AgentEvent, ApprovalAction, ApprovalRequest, CallStatus, Decision};
use crate::agent::session::{Session, Task};
use crate::agent::step::revise::{self, Revision};
use crate::tools::TestCommand;
use crate::tools::calls::registry::ExternalCall;
use crate::tools::edits::edit::PreparedEdit;
use crate::tools::edits::patch_apply::PreparedPatch;
use crate::tools::sandbox;
use crate::tools::{ToolId, ToolOutput};
use tokio::sync::oneshot;

/// What the prepare stage produced for a valid call that needs approval.
pub(in crate::agent) enum Prepared {
    Edit(PreparedEdit),
    Patch(PreparedPatch),
    Tests(TestCommand),
    External(ExternalCall),
}

/// An action the user (or a task-wide approval) allowed.
pub(in crate::agent) struct Approved {
    pub(in crate::agent) prepared: Prepared,
    /// True when an earlier "approve for task" covered it.
    pub(in crate::agent) auto: bool,
    /// How the user changed the proposal, to tell the model.
    pub(in crate::agent) revision: Option<Revision>,
}

/// Why a call was not carried out: its status and result (boxed: a result
/// is large next to what an approval carries).
type NotApproved = Box<(CallStatus, ToolOutput)>;

impl Session {
    pub(in crate::agent) async fn approve(
        &mut self,
        t: &Task<'_>,
        call_id: &str,
        tool: &ToolId,
        prepared: Prepared,
    ) -> Result<Approved, NotApproved> {
        // A read-only external call needs no approval (configured so).
        if let Prepared::External(call) = &prepared
            && call.read_only
        {
            return Ok(Approved {
                prepared,
                auto: false,
                revision: None,
            });
        }
        // In a stage, writes and test runs stay in the stage: no prompt. No
        // other program may write past it.
        if self.staged {
            if let Prepared::External(_) = &prepared {
                let output = ToolOutput::error(crate::agent::staged::NO_WRITES_PAST_THE_STAGE);
                return Err(Box::new((CallStatus::Failed, output)));
            }
            return Ok(Approved {
                prepared,
                auto: true,
                revision: None,
            });
        }
        // A revoke sent while the last call ran applies to this one.
        self.apply_revocations(t.events);
        let policy = &self.settings.scope_policy;
        let allow_for_task = match &prepared {
            Prepared::Edit(edit) => policy.allows(tool, Some(&edit.path.display())),
            // Every file of a patch must be one a task-wide approval may cover.
            Prepared::Patch(patch) => patch
                .diffs()
                .iter()
                .all(|d| policy.allows(tool, Some(&d.path))),
            Prepared::Tests(_) | Prepared::External(_) => policy.allows(tool, None),
        };
        let approved = if allow_for_task && self.approvals.covers(tool) {
            Approved {
                prepared,
                auto: true,
                revision: None,
            }
        } else {
            let action = approval_action(&prepared, &self.settings.sandbox);
            let decision = self.ask(t, call_id, tool, action, allow_for_task).await;
            self.decide(t, tool, decision, prepared, allow_for_task)?
        };
        if let Prepared::Patch(patch) = &approved.prepared {
            self.confirm_deletes(t, call_id, tool, patch).await?;
        }
        Ok(approved)
    }

    /// Turn the user's decision into the action to carry out.
    fn decide(
        &mut self,
        t: &Task<'_>,
        tool: &ToolId,
        decision: Decision,
        prepared: Prepared,
        allow_for_task: bool,
    ) -> Result<Approved, NotApproved> {
        let declined = |reason: Option<&str>| {
            let output = declined_output(tool, reason, t.cancel.is_cancelled());
            Box::new((CallStatus::Declined, output))
        };
        let failed = |problem: String| Box::new((CallStatus::Failed, ToolOutput::error(problem)));
        let (prepared, revision) = match (decision, prepared) {
            (Decision::Decline { reason }, _) => return Err(declined(reason.as_deref())),
            (Decision::ApproveToolForTask, p) => {
                if allow_for_task && self.approvals.grant(tool.clone()) {
                    self.report_scopes(t.events);
                }
                (p, None)
            }
            (Decision::ApproveHunks { accepted }, Prepared::Edit(edit)) => {
                match revise::only_hunks(&self.workspace, edit, &accepted) {
                    Ok((edit, rev)) => (Prepared::Edit(edit), rev),
                    Err(revise::Refused::AllRejected) => {
                        return Err(declined(Some("the user rejected every hunk of it")));
                    }
                    Err(revise::Refused::Failed(problem)) => return Err(failed(problem)),
                }
            }
            (Decision::ApproveEdited { content }, Prepared::Edit(edit)) => {
                match revise::user_edited(&self.workspace, &edit, &content) {
                    Ok((edit, rev)) => (Prepared::Edit(edit), Some(rev)),
                    Err(revise::Refused::AllRejected) => {
                        let reason = "the user's edited version leaves the file unchanged";
                        return Err(declined(Some(reason)));
                    }
                    Err(revise::Refused::Failed(problem)) => return Err(failed(problem)),
                }
            }
            (Decision::ApprovePatchHunks { files }, Prepared::Patch(patch)) => {
                match revise::only_patch_hunks(patch, &files) {
                    Ok((patch, rev)) => (Prepared::Patch(patch), rev),
                    Err(revise::Refused::AllRejected) => {
                        return Err(declined(Some("the user rejected every hunk of it")));
                    }
                    Err(revise::Refused::Failed(problem)) => return Err(failed(problem)),
                }
            }
            (Decision::ApprovePatchHunks { .. }, Prepared::Edit(_)) => {
                return Err(declined(Some(
                    "hunk choices for a patch do not fit this edit",
                )));
            }
            (
                Decision::ApproveHunks { .. } | Decision::ApproveEdited { .. },
                Prepared::Patch(_),
            ) => {
                return Err(declined(Some("an edit's hunk choices do not fit a patch")));
            }
            // Hunks and edits mean nothing for a command or an external call.
            (_, p) => (p, None),
        };
        Ok(Approved {
            prepared,
            auto: false,
            revision,
        })
    }

    /// Deleting a file always needs its own explicit approval.
    async fn confirm_deletes(
        &self,
        t: &Task<'_>,
        call_id: &str,
        tool: &ToolId,
        patch: &PreparedPatch,
    ) -> Result<(), NotApproved> {
        for delete in &patch.deletes {
            let action = ApprovalAction::Delete {
                path: delete.path.display(),
                diff: delete.diff.clone(),
            };
            if let Decision::Decline { reason } = self.ask(t, call_id, tool, action, false).await {
                let why = format!(
                    "the user declined deleting {}{}; the patch was not applied",
                    delete.path.display(),
                    reason.map(|r| format!(" ({r})")).unwrap_or_default()
                );
                let output = declined_output(tool, Some(&why), t.cancel.is_cancelled());
                return Err(Box::new((CallStatus::Declined, output)));
            }
        }
        Ok(())
    }

    /// Send an approval request and wait; a dropped reply or an interrupt declines.
    pub(in crate::agent) async fn ask(
        &self,
        t: &Task<'_>,
        call_id: &str,
        tool: &ToolId,
        action: ApprovalAction,
        allow_for_task: bool,
    ) -> Decision {
        let (reply, answer) = oneshot::channel();
        t.emit(AgentEvent::ApprovalRequested(ApprovalRequest {
            step: t.step,
            call_id: call_id.to_string(),
            tool: tool.clone(),
            action,
            allow_for_task,
            reply,
        }));
        tokio::select! {
            decision = answer => decision.unwrap_or(Decision::Decline { reason: None }),
            _ = t.cancel.cancelled() => Decision::Decline { reason: None },
        }
    }
}

/// What the user is asked to approve.
fn approval_action(prepared: &Prepared, sandbox: &sandbox::Policy) -> ApprovalAction {
    match prepared {
        Prepared::Edit(edit) => ApprovalAction::Edit {
            path: edit.path.display(),
            diff: edit.diff.clone(),
            proposed: edit.new.clone(),
            original: edit.old.clone(),
        },
        Prepared::Patch(patch) => ApprovalAction::Patch {
            files: patch.diffs(),
        },
        Prepared::Tests(command) => ApprovalAction::RunTests {
            command: command.argv.clone(),
            sandbox: sandbox::state(sandbox).label(),
        },
        Prepared::External(call) => ApprovalAction::McpCall {
            server: call.server.clone(),
            tool: call.tool.clone(),
            arguments: serde_json::to_string_pretty(&call.arguments).unwrap_or_default(),
        },
    }
}

/// The result of a call the user declined (or interrupted): typed as a
/// decline unless it was an interrupt, so the model side need not read text.
/// What stands before the user's reason in a declined call's result (a
/// restored session reads the reason back after it).
pub(in crate::agent) const USER_REASON: &str = " The user's reason: ";

fn declined_output(tool: &ToolId, reason: Option<&str>, interrupted: bool) -> ToolOutput {
    if interrupted {
        return ToolOutput::error(format!(
            "The {tool} call was not carried out: the user interrupted the task. Nothing was changed."
        ));
    }
    let mut message = match tool {
        ToolId::Mcp { .. } => {
            format!("The user declined this {tool} call; it was not sent to the server.")
        }
        _ => format!("The user declined this {tool} call. Nothing was changed."),
    };
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => message.push_str(&format!("{USER_REASON}{r}")),
        None => message.push_str(
            " Do not repeat it unchanged; reconsider the approach or explain in a final answer.",
        ),
    }
    ToolOutput::declined(message)
}
