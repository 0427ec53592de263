//! Carrying out one tool call: validate the arguments, prepare the edit and
//! its diff without side effects, ask for approval (`approve`), run it,
//! report the result. Every call ends with exactly one `ToolFinished`.

use super::approve::{Approved, Prepared};
use super::contract::{AgentEvent, CallStatus, TestReceipt, ToolRef};
use super::session::{Session, Task};
use crate::diff::FileDiff;
use crate::tools::files;
use crate::tools::patch_apply;
use crate::tools::search;
use crate::tools::snapshot::{RunChange, Snapshot};
use crate::tools::test_runner;
use crate::tools::{ToolCall, ToolOutput, scrub};
use serde_json::Value;

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
        let proposed = |tool: ToolRef, target: String, diff: Option<FileDiff>, needs: bool| {
            AgentEvent::ToolCallProposed {
                step: t.step,
                call_id: call_id.to_string(),
                tool,
                target,
                arguments: shown_args.clone(),
                diff,
                needs_approval: needs,
            }
        };
        if crate::mcp::split_full_name(name).is_some() {
            return self.execute_mcp(t, call_id, name, arguments).await;
        }
        let call = match ToolCall::parse(name, arguments) {
            Ok(call) => call,
            Err(problem) => {
                let tool = ToolRef::from_name(name);
                t.emit(proposed(tool.clone(), String::new(), None, false));
                let output = ToolOutput::error(problem);
                return self.finish(t, call_id, tool, CallStatus::Failed, output);
            }
        };
        let tool = call.name();
        // Reads need neither preparation nor approval.
        if !tool.needs_approval() {
            t.emit(proposed(tool.into(), call.target(), None, false));
            self.running(t, call_id, false);
            let output = match &call {
                ToolCall::ListFiles { path, depth } => {
                    files::list_files_depth(&self.workspace, path, *depth)
                }
                ToolCall::ReadFile {
                    path,
                    offset,
                    limit,
                } => files::read_file_range(&self.workspace, path, *offset, *limit),
                ToolCall::SearchText(args) => search::search_text(&self.workspace, args),
                _ => ToolOutput::error(format!("{} is not a read", tool.as_str())),
            };
            let status = status_of(&output);
            return self.finish(t, call_id, tool.into(), status, output);
        }
        let prepared = self.prepare(&call);
        let diff = match &prepared {
            Ok(Prepared::Edit(edit)) => Some(edit.diff.clone()),
            _ => None,
        };
        t.emit(proposed(
            tool.into(),
            call.target(),
            diff,
            tool.needs_approval(),
        ));
        let prepared = match prepared {
            Ok(p) => p,
            Err(problem) => {
                let output = ToolOutput::error(problem);
                return self.finish(t, call_id, tool.into(), CallStatus::Failed, output);
            }
        };
        if let Prepared::Edit(edit) = &prepared
            && edit.diff.is_empty()
        {
            let output = ToolOutput::ok(
                "no change",
                serde_json::json!({"path": edit.path.display(), "note": "the file already has exactly this content; nothing was written"}),
            );
            return self.finish(t, call_id, tool.into(), CallStatus::Ok, output);
        }
        let approved = match self.approve(t, call_id, tool, prepared).await {
            Ok(approved) => approved,
            Err((status, output)) => return self.finish(t, call_id, tool.into(), status, output),
        };
        self.running(t, call_id, approved.auto);
        let output = self.carry_out(t, approved).await;
        let status = status_of(&output);
        self.finish(t, call_id, tool.into(), status, output)
    }

    fn prepare(&self, call: &ToolCall) -> Result<Prepared, String> {
        let ws = &self.workspace;
        match call {
            ToolCall::ListFiles { .. } | ToolCall::ReadFile { .. } | ToolCall::SearchText(_) => {
                Err(format!("{} needs no preparation", call.name().as_str()))
            }
            ToolCall::WriteFile { path, content } => files::prepare_write(ws, path, content)
                .map(Prepared::Edit)
                .map_err(|e| e.0),
            ToolCall::ReplaceText { path, old, new } => files::prepare_replace(ws, path, old, new)
                .map(Prepared::Edit)
                .map_err(|e| e.0),
            ToolCall::ApplyPatch { patch } => patch_apply::prepare_patch(ws, patch)
                .map(Prepared::Patch)
                .map_err(|e| e.0),
            ToolCall::RunTests { command } => {
                let tests = &self.test_commands;
                let found = match command {
                    Some(name) => tests.get(name),
                    None => tests.default_command(),
                };
                found
                    .cloned()
                    .map(Prepared::Tests)
                    .ok_or_else(|| tests.unknown(command.as_deref().unwrap_or("")))
            }
        }
    }

    /// Run an approved action and record what it changed.
    async fn carry_out(&mut self, t: &mut Task<'_>, approved: Approved) -> ToolOutput {
        match approved.prepared {
            Prepared::Edit(edit) => {
                let mut output = files::apply_edit(&self.workspace, &edit);
                if output.success {
                    t.changed_since_tests = true;
                    let path = edit.path.display();
                    self.changes
                        .record(self.tasks, &path, edit.old.as_deref(), Some(&edit.new));
                    if let Some(revision) = &approved.revision {
                        revision.describe(&mut output, &edit);
                    }
                }
                output
            }
            Prepared::Patch(patch) => {
                let mut output = patch_apply::apply_patch(&self.workspace, &patch);
                if output.success {
                    if let Some(revision) = &approved.revision {
                        revision.describe_patch(&mut output);
                    }
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
            Prepared::Tests(runner) => {
                let before = Snapshot::take_after(&self.workspace, self.snapshot.as_ref());
                let root = self.workspace.root();
                let plants_before = crate::tools::sandbox::plants::find(root, false);
                let timeout = self.settings.test_timeout;
                let policy = &self.settings.sandbox;
                let result = test_runner::run_with(root, &runner, timeout, t.cancel, policy).await;
                // Whatever the run did to the files counts, even when it failed.
                let after = Snapshot::take_after(&self.workspace, Some(&before));
                let changed = before.changes_to(&after);
                let planted = plants_before
                    .planted_since(&crate::tools::sandbox::plants::find(root, false), root);
                self.snapshot = Some(after);
                self.record_run_changes(t, &changed);
                match result {
                    Ok(mut run) => {
                        if run.passed && changed.is_empty() && planted.is_empty() {
                            t.changed_since_tests = false;
                        }
                        if let Some(note) = crate::tools::sandbox::plants::note(&planted) {
                            run.notes.insert(0, note);
                        }
                        run.changed_files = changed;
                        t.last_tests = Some(TestReceipt::from(&run));
                        run.to_output()
                    }
                    Err(problem) => ToolOutput::error(problem),
                }
            }
        }
    }

    /// Files a test run created, changed or deleted are changes of the task:
    /// for the gate, the receipt, and (where their text is known) `/diff` and `/undo`.
    fn record_run_changes(&mut self, t: &mut Task<'_>, changed: &[RunChange]) {
        if changed.is_empty() {
            return;
        }
        t.changed_since_tests = true;
        for c in changed {
            if c.contents_known {
                let (before, after) = (c.before.as_deref(), c.after.as_deref());
                self.changes.record(self.tasks, &c.path, before, after);
            }
            t.changed_by_tests.retain(|seen| seen.path != c.path);
            t.changed_by_tests.push(c.clone());
        }
    }

    pub(super) fn running(&self, t: &Task<'_>, call_id: &str, auto_approved: bool) {
        t.emit(AgentEvent::ToolRunning {
            step: t.step,
            call_id: call_id.to_string(),
            auto_approved,
        });
    }

    pub(super) fn finish(
        &self,
        t: &Task<'_>,
        call_id: &str,
        tool: ToolRef,
        status: CallStatus,
        mut output: ToolOutput,
    ) -> ToolOutput {
        // The one way out of a tool call, to the front end and to the model:
        // test output or a file may hold the key.
        scrub::json(&mut output.body);
        scrub::string(&mut output.summary);
        t.emit(AgentEvent::ToolFinished {
            step: t.step,
            call_id: call_id.to_string(),
            tool,
            status,
            summary: output.summary.clone(),
            result: output.body.clone(),
        });
        output
    }
}

fn status_of(output: &ToolOutput) -> CallStatus {
    if output.success {
        CallStatus::Ok
    } else {
        CallStatus::Failed
    }
}
