//! Carrying out one tool call: validate the arguments, prepare the edit and
//! its diff without side effects, ask for approval, run it, report the result.

use super::events::{
    AgentEvent, ApprovalAction, ApprovalRequest, CallStatus, Decision, TestReceipt,
};
use super::revise;
use super::session::{Session, Task};
use crate::llm::scripted::DECLINED_MARKER;
use crate::tools::files::{self, PreparedEdit};
use crate::tools::patch_apply::{self, PreparedPatch};
use crate::tools::test_runner::{self, TestRunner};
use crate::tools::{ToolCall, ToolName, ToolOutput};
use serde_json::Value;
use tokio::sync::oneshot;

/// What the prepare stage produced for a valid call.
enum Prepared {
    Read,
    Edit(PreparedEdit),
    Patch(PreparedPatch),
    Tests(TestRunner),
}

impl Session {
    /// One tool call: validate, prepare, ask, run, report.
    pub(super) async fn execute(
        &mut self,
        t: &mut Task<'_>,
        call_id: &str,
        name: &str,
        arguments: &str,
    ) -> ToolOutput {
        let shown_args = serde_json::from_str::<Value>(arguments)
            .unwrap_or_else(|_| Value::String(arguments.to_string()));
        let call = match ToolCall::parse(name, arguments) {
            Ok(call) => call,
            Err(problem) => {
                t.emit(AgentEvent::ToolCallProposed {
                    step: t.step,
                    call_id: call_id.to_string(),
                    tool: name.to_string(),
                    target: String::new(),
                    arguments: shown_args,
                    diff: None,
                    needs_approval: false,
                });
                return self.finish(
                    t,
                    call_id,
                    name,
                    CallStatus::Failed,
                    ToolOutput::error(problem),
                );
            }
        };
        let tool = call.name();
        let prepared = self.prepare(&call);
        t.emit(AgentEvent::ToolCallProposed {
            step: t.step,
            call_id: call_id.to_string(),
            tool: name.to_string(),
            target: call.target(),
            arguments: shown_args,
            diff: match &prepared {
                Ok(Prepared::Edit(edit)) => Some(edit.diff.clone()),
                _ => None,
            },
            needs_approval: tool.needs_approval(),
        });
        let prepared = match prepared {
            Ok(p) => p,
            Err(problem) => {
                return self.finish(
                    t,
                    call_id,
                    name,
                    CallStatus::Failed,
                    ToolOutput::error(problem),
                );
            }
        };
        if let Prepared::Edit(edit) = &prepared
            && edit.diff.is_empty()
        {
            let output = ToolOutput::ok(
                "no change",
                serde_json::json!({"path": edit.path.display(), "note": "the file already has exactly this content; nothing was written"}),
            );
            return self.finish(t, call_id, name, CallStatus::Ok, output);
        }

        let mut prepared = prepared;
        let target = match &prepared {
            Prepared::Edit(edit) => Some(edit.path.display()),
            _ => None,
        };
        let allow_for_task = self.settings.scope_policy.allows(tool, target.as_deref());
        let mut auto_approved = false;
        let mut revision = None;
        if tool.needs_approval() {
            if allow_for_task && self.approvals.covers(tool) {
                auto_approved = true;
            } else {
                let action = match &prepared {
                    Prepared::Edit(edit) => ApprovalAction::Edit {
                        path: edit.path.display(),
                        diff: edit.diff.clone(),
                        proposed: edit.new.clone(),
                        original: edit.old.clone(),
                    },
                    Prepared::Patch(patch) => ApprovalAction::Patch {
                        files: patch.diffs(),
                    },
                    Prepared::Tests(runner) => ApprovalAction::RunTests {
                        command: runner.argv(&test_runner::resolve_python()),
                    },
                    Prepared::Read => unreachable!("reads need no approval"),
                };
                let decision = self.ask(t, call_id, tool, action, allow_for_task).await;
                let declined =
                    |reason: Option<&str>| declined_message(name, reason, t.cancel.is_cancelled());
                match (decision, prepared) {
                    (Decision::Decline { reason }, _) => {
                        let output = ToolOutput::error(declined(reason.as_deref()));
                        return self.finish(t, call_id, name, CallStatus::Declined, output);
                    }
                    (Decision::ApproveToolForTask, p) => {
                        if allow_for_task {
                            self.approvals.grant(tool);
                        }
                        prepared = p;
                    }
                    (Decision::ApproveHunks { accepted }, Prepared::Edit(edit)) => {
                        match revise::only_hunks(&self.workspace, edit, &accepted) {
                            Ok((edit, rev)) => {
                                prepared = Prepared::Edit(edit);
                                revision = rev;
                            }
                            Err(revise::Refused::AllRejected) => {
                                let reason = "the user rejected every hunk of it";
                                let output = ToolOutput::error(declined(Some(reason)));
                                return self.finish(t, call_id, name, CallStatus::Declined, output);
                            }
                            Err(revise::Refused::Failed(problem)) => {
                                let output = ToolOutput::error(problem);
                                return self.finish(t, call_id, name, CallStatus::Failed, output);
                            }
                        }
                    }
                    (Decision::ApproveEdited { content }, Prepared::Edit(edit)) => {
                        match revise::user_edited(&self.workspace, &edit, &content) {
                            Ok((edit, rev)) => {
                                prepared = Prepared::Edit(edit);
                                revision = Some(rev);
                            }
                            Err(revise::Refused::AllRejected) => {
                                let reason = "the user's edited version leaves the file unchanged";
                                let output = ToolOutput::error(declined(Some(reason)));
                                return self.finish(t, call_id, name, CallStatus::Declined, output);
                            }
                            Err(revise::Refused::Failed(problem)) => {
                                let output = ToolOutput::error(problem);
                                return self.finish(t, call_id, name, CallStatus::Failed, output);
                            }
                        }
                    }
                    (
                        Decision::ApproveHunks { .. } | Decision::ApproveEdited { .. },
                        Prepared::Patch(_),
                    ) => {
                        let reason = "a patch is approved or declined as a whole";
                        let output = ToolOutput::error(declined(Some(reason)));
                        return self.finish(t, call_id, name, CallStatus::Declined, output);
                    }
                    // Hunks and edits mean nothing for a test run.
                    (_, p) => prepared = p,
                }
            }
            // Deleting a file always needs its own explicit approval.
            if let Prepared::Patch(patch) = &prepared {
                for delete in &patch.deletes {
                    let action = ApprovalAction::Delete {
                        path: delete.path.display(),
                        diff: delete.diff.clone(),
                    };
                    if let Decision::Decline { reason } =
                        self.ask(t, call_id, tool, action, false).await
                    {
                        let why = format!(
                            "the user declined deleting {}{}; the patch was not applied",
                            delete.path.display(),
                            reason.map(|r| format!(" ({r})")).unwrap_or_default()
                        );
                        let message = declined_message(name, Some(&why), t.cancel.is_cancelled());
                        let output = ToolOutput::error(message);
                        return self.finish(t, call_id, name, CallStatus::Declined, output);
                    }
                }
            }
        }
        t.emit(AgentEvent::ToolRunning {
            step: t.step,
            call_id: call_id.to_string(),
            auto_approved,
        });
        let output = match (&call, prepared) {
            (ToolCall::ListFiles { path }, _) => files::list_files(&self.workspace, path),
            (ToolCall::ReadFile { path }, _) => files::read_file(&self.workspace, path),
            (_, Prepared::Edit(edit)) => {
                let mut output = files::apply_edit(&self.workspace, &edit);
                if output.success {
                    t.changed_since_tests = true;
                    self.changes.record(
                        self.tasks,
                        &edit.path.display(),
                        edit.old.as_deref(),
                        Some(&edit.new),
                    );
                    if let Some(revision) = &revision {
                        revision.describe(&mut output, &edit);
                    }
                }
                output
            }
            (_, Prepared::Patch(patch)) => {
                let output = patch_apply::apply_patch(&self.workspace, &patch);
                if output.success {
                    t.changed_since_tests = true;
                    for edit in &patch.edits {
                        let path = edit.path.display();
                        self.changes.record(
                            self.tasks,
                            &path,
                            edit.old.as_deref(),
                            Some(&edit.new),
                        );
                    }
                    for delete in &patch.deletes {
                        let path = delete.path.display();
                        self.changes
                            .record(self.tasks, &path, Some(&delete.old), None);
                    }
                }
                output
            }
            (_, Prepared::Tests(runner)) => {
                let output = test_runner::run_tests(
                    self.workspace.root(),
                    runner,
                    self.settings.test_timeout,
                    t.cancel,
                )
                .await;
                if output.success {
                    t.changed_since_tests = false;
                }
                if let Some(command) = output.body.get("command").and_then(|c| c.as_str()) {
                    t.last_tests = Some(TestReceipt {
                        command: command.to_string(),
                        exit_code: output.body["returncode"].as_i64().map(|c| c as i32),
                        summary: output.summary.clone(),
                    });
                }
                output
            }
            (_, Prepared::Read) => unreachable!("only reads prepare to Read"),
        };
        let status = if output.success {
            CallStatus::Ok
        } else {
            CallStatus::Failed
        };
        self.finish(t, call_id, name, status, output)
    }

    fn prepare(&self, call: &ToolCall) -> Result<Prepared, String> {
        let ws = &self.workspace;
        match call {
            ToolCall::ListFiles { .. } | ToolCall::ReadFile { .. } => Ok(Prepared::Read),
            ToolCall::WriteFile { path, content } => files::prepare_write(ws, path, content)
                .map(Prepared::Edit)
                .map_err(|e| e.0),
            ToolCall::ReplaceText { path, old, new } => files::prepare_replace(ws, path, old, new)
                .map(Prepared::Edit)
                .map_err(|e| e.0),
            ToolCall::ApplyPatch { patch } => patch_apply::prepare_patch(ws, patch)
                .map(Prepared::Patch)
                .map_err(|e| e.0),
            ToolCall::RunTests { runner } => Ok(Prepared::Tests(*runner)),
        }
    }

    /// Send an approval request and wait; a dropped reply or an interrupt declines.
    async fn ask(
        &self,
        t: &Task<'_>,
        call_id: &str,
        tool: ToolName,
        action: ApprovalAction,
        allow_for_task: bool,
    ) -> Decision {
        let (reply, answer) = oneshot::channel();
        t.emit(AgentEvent::ApprovalRequested(ApprovalRequest {
            step: t.step,
            call_id: call_id.to_string(),
            tool,
            action,
            allow_for_task,
            reply,
        }));
        tokio::select! {
            decision = answer => decision.unwrap_or(Decision::Decline { reason: None }),
            _ = t.cancel.cancelled() => Decision::Decline { reason: None },
        }
    }

    fn finish(
        &self,
        t: &Task<'_>,
        call_id: &str,
        tool: &str,
        status: CallStatus,
        output: ToolOutput,
    ) -> ToolOutput {
        t.emit(AgentEvent::ToolFinished {
            step: t.step,
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            status,
            summary: output.summary.clone(),
            result: output.body.clone(),
        });
        output
    }
}

fn declined_message(tool: &str, reason: Option<&str>, interrupted: bool) -> String {
    if interrupted {
        return format!(
            "The {tool} call was not carried out: the user interrupted the task. Nothing was changed."
        );
    }
    let mut message = format!("{DECLINED_MARKER} this {tool} call. Nothing was changed.");
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => message.push_str(&format!(" The user's reason: {r}")),
        None => message.push_str(
            " Do not repeat it unchanged; reconsider the approach or explain in a final answer.",
        ),
    }
    message
}
