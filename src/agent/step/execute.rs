//! Carrying out one tool call, the same way for every tool, built-in or
//! MCP: find the tool in the registry, let it plan the call (no side effect
//! but reading), propose it, ask for approval by the plan's shape
//! (`approve`), carry it out, record what it changed, report the result.
//! Every call ends with exactly one `ToolFinished`.
//!
//! What must stay true: nothing is written, run or sent before the user's
//! approval (or a task-wide one); whatever an approved action changed in the
//! workspace counts as a change of the task, whoever made it, also when an
//! MCP server's write lands after its call was compared.

use crate::agent::contract::{AgentEvent, CallKind, CallStatus};
use crate::agent::session::{Session, Task};
use crate::agent::step::approve::{Approved, Prepared};
use crate::diff::FileDiff;
use crate::tools::calls::registry::{self, Action, FileChange, Plan, Refused, Tool, ToolContext};
use crate::tools::edits::edit;
use crate::tools::reading::snapshot::{RunChange, Snapshot};
use crate::tools::{ToolId, ToolOutput, edits::patch_apply, scrub};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// How long an MCP call's writes are waited for before the workspace is
/// compared: a write it set off in the background lands a moment later.
const MCP_SETTLE: Duration = Duration::from_millis(150);

impl Session {
    /// One tool call: plan, propose, ask, run, report.
    pub(in crate::agent) async fn execute(
        &mut self,
        t: &mut Task<'_>,
        call_id: &str,
        name: &str,
        arguments: &str,
    ) -> ToolOutput {
        let id = self.registry.identify(name);
        let shown_args = serde_json::from_str::<Value>(arguments)
            .unwrap_or_else(|_| Value::String(arguments.to_string()));
        let proposed = |kind: CallKind, target: String, diff: Option<FileDiff>, needs: bool| {
            AgentEvent::ToolCallProposed {
                step: t.step,
                call_id: call_id.to_string(),
                tool: id.clone(),
                kind,
                target,
                arguments: shown_args.clone(),
                diff,
                needs_approval: needs,
            }
        };
        let planned = match self.tool_for(&id) {
            Some(tool) => self.plan(tool.as_ref(), name, arguments),
            None => Err(Refused::new("", self.unknown_tool(&id))),
        };
        let plan = match planned {
            Ok(plan) => plan,
            Err(Refused { target, problem }) => {
                t.emit(proposed(CallKind::Other, target, None, false));
                let output = ToolOutput::error(problem);
                return self.finish(t, call_id, id, CallStatus::Failed, output);
            }
        };
        let prepared = match plan.action {
            Action::Read(output) => {
                t.emit(proposed(CallKind::Read, plan.target, None, false));
                self.running(t, call_id, false);
                let status = status_of(&output);
                return self.finish(t, call_id, id, status, output);
            }
            Action::Files(FileChange::Edit(edit)) => {
                t.emit(proposed(
                    CallKind::Edit,
                    plan.target,
                    Some(edit.diff.clone()),
                    true,
                ));
                if edit.diff.is_empty() {
                    let output = ToolOutput::ok(
                        "no change",
                        serde_json::json!({"path": edit.path.display(), "note": "the file already has exactly this content; nothing was written"}),
                    );
                    return self.finish(t, call_id, id, CallStatus::Ok, output);
                }
                Prepared::Edit(edit)
            }
            Action::Files(FileChange::Patch(patch)) => {
                t.emit(proposed(CallKind::Edit, plan.target, None, true));
                Prepared::Patch(patch)
            }
            Action::Tests(command) => {
                t.emit(proposed(CallKind::Execute, plan.target, None, true));
                Prepared::Tests(command)
            }
            Action::External(call) => {
                t.emit(proposed(
                    CallKind::External,
                    plan.target,
                    None,
                    !call.read_only,
                ));
                // The deny list holds for every tool: a denied path of the
                // workspace never reaches a server, read-only or not.
                if let Some(problem) = self.workspace.denied_argument(&call.arguments) {
                    let problem = format!("{id} was not sent to the server: {problem}");
                    let output = ToolOutput::error(problem);
                    return self.finish(t, call_id, id, CallStatus::Failed, output);
                }
                Prepared::External(call)
            }
        };
        let approved = match self.approve(t, call_id, &id, prepared).await {
            Ok(approved) => approved,
            Err(not) => {
                let (status, output) = *not;
                return self.finish(t, call_id, id, status, output);
            }
        };
        self.running(t, call_id, approved.auto);
        let output = self.carry_out(t, call_id, &id, approved).await;
        let status = status_of(&output);
        self.finish(t, call_id, id, status, output)
    }

    /// The registered tool, or the unit of an MCP server's tool running now.
    fn tool_for(&self, id: &ToolId) -> Option<Arc<dyn Tool>> {
        if let Some(tool) = self.registry.lookup(&id.to_string()) {
            return Some(tool.clone());
        }
        match id {
            ToolId::Mcp { .. } => self.mcp_tool(id),
            _ => None,
        }
    }

    fn plan(&self, tool: &dyn Tool, name: &str, arguments: &str) -> Result<Plan, Refused> {
        let args = registry::parse_arguments(name, arguments).map_err(|e| Refused::new("", e))?;
        let ctx = ToolContext {
            workspace: &self.workspace,
            tests: &self.test_commands,
        };
        tool.plan(&args, &ctx)
    }

    /// Why a name is not a tool that can be called now.
    fn unknown_tool(&self, id: &ToolId) -> String {
        match id {
            ToolId::Mcp { .. } => self.unknown_mcp_tool(id),
            _ => format!(
                "unknown tool {:?}; the tools are: {}",
                id.to_string(),
                self.registry
                    .names()
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// Run an approved action and record what it changed.
    async fn carry_out(
        &mut self,
        t: &mut Task<'_>,
        call_id: &str,
        tool: &ToolId,
        approved: Approved,
    ) -> ToolOutput {
        self.late_mcp_writes(t);
        match approved.prepared {
            Prepared::Edit(edit) => {
                let mut output = edit::apply_edit(&self.workspace, &edit);
                if output.success {
                    t.changed();
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
                    t.changed();
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
            Prepared::Tests(runner) => self.run_tests(t, call_id, tool, runner).await,
            Prepared::External(call) => {
                // What the server did to the workspace is compared like a test
                // run's, also for a tool configured read-only: a server that
                // writes anyway is seen.
                let before = Snapshot::take_after(&self.workspace, self.snapshot.as_ref());
                let output = self.call_mcp(t, &call).await;
                // A write the call set off in the background may land a
                // moment after its answer; later ones, see `late_mcp_writes`.
                tokio::time::sleep(MCP_SETTLE).await;
                t.mcp_server = Some(call.server.clone());
                let after = Snapshot::take_after(&self.workspace, Some(&before));
                let changed = before.changes_to(&after);
                self.snapshot = Some(after);
                self.record_changes(t, &changed, ChangedBy::Mcp(&call.server));
                output
            }
        }
    }

    /// Writes an MCP server made after its call was compared (work the call
    /// set off in the background): once the task has called a server, the
    /// workspace is compared again before each action and before an answer
    /// is accepted. A change the task's own log explains (an edit made since)
    /// is not one; the others are the server's, re-arm the gate and go on
    /// the receipt.
    pub(in crate::agent) fn late_mcp_writes(&mut self, t: &mut Task<'_>) {
        let (Some(server), Some(previous)) = (t.mcp_server.clone(), self.snapshot.as_ref()) else {
            return;
        };
        let now = Snapshot::take_after(&self.workspace, Some(previous));
        let logged: HashMap<String, Option<String>> = (self.changes.task_contents(self.tasks))
            .into_iter()
            .map(|(path, _, after)| (path, after))
            .collect();
        let late: Vec<RunChange> = (previous.changes_to(&now).into_iter())
            .filter_map(|mut change| match logged.get(&change.path) {
                // The task's own edit, or one whose text cannot be compared.
                Some(after) if !change.contents_known || *after == change.after => None,
                Some(after) => {
                    change.before = after.clone();
                    Some(change)
                }
                None => Some(change),
            })
            .collect();
        self.snapshot = Some(now);
        self.record_changes(t, &late, ChangedBy::Mcp(&server));
    }

    /// Files a test run or an MCP server created, changed or deleted are
    /// changes of the task like any edit: they re-arm the gate, go into
    /// `/diff` and `/undo` (where their text is known), and the receipt says
    /// who made them.
    pub(in crate::agent) fn record_changes(
        &mut self,
        t: &mut Task<'_>,
        changed: &[RunChange],
        by: ChangedBy<'_>,
    ) {
        if changed.is_empty() {
            return;
        }
        match by {
            // A test run's verdict on the gate comes with its result.
            ChangedBy::Tests => t.changed_since_tests = true,
            ChangedBy::Mcp(_) => t.changed(),
        }
        for c in changed {
            if c.contents_known {
                let (before, after) = (c.before.as_deref(), c.after.as_deref());
                self.changes.record(self.tasks, &c.path, before, after);
            }
            match by {
                ChangedBy::Tests => {
                    t.changed_by_tests.retain(|seen| seen.path != c.path);
                    t.changed_by_tests.push(c.clone());
                }
                ChangedBy::Mcp(server) => {
                    t.made_by.insert(c.path.clone(), format!("mcp {server}"));
                }
            }
        }
    }

    pub(in crate::agent) fn running(&self, t: &Task<'_>, call_id: &str, auto_approved: bool) {
        t.emit(AgentEvent::ToolRunning {
            step: t.step,
            call_id: call_id.to_string(),
            auto_approved,
        });
    }

    pub(in crate::agent) fn finish(
        &self,
        t: &Task<'_>,
        call_id: &str,
        tool: ToolId,
        status: CallStatus,
        mut output: ToolOutput,
    ) -> ToolOutput {
        // The one way out of a tool call, to the front end and to the model:
        // test output, a file or a server's answer may hold the key.
        scrub::json(&mut output.body);
        scrub::string(&mut output.summary);
        if let Some(coloured) = &mut output.coloured {
            scrub::string(coloured);
        }
        t.emit(AgentEvent::ToolFinished {
            step: t.step,
            call_id: call_id.to_string(),
            tool,
            status,
            summary: output.summary.clone(),
            result: output.body.clone(),
            coloured_output: output.coloured.clone(),
        });
        output
    }
}

/// Who changed files outside stepwise's own edits.
#[derive(Clone, Copy)]
pub(in crate::agent) enum ChangedBy<'a> {
    Tests,
    Mcp(&'a str),
}

fn status_of(output: &ToolOutput) -> CallStatus {
    if output.success {
        CallStatus::Ok
    } else {
        CallStatus::Failed
    }
}
