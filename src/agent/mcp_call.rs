//! Calls of MCP tools (`mcp__<server>__<tool>`): the session's side of
//! `crate::mcp`. The servers start with the session; each request offers the
//! tools of the servers running then; a call is proposed, waits for approval
//! like a write (unless configured read-only, or approved for the task by its
//! full name), runs with the server's timeout, and ends with one
//! `ToolFinished`. Server state changes go out as `McpServer` events.
//!
//! What must stay true: nothing a server does ends the task or the session;
//! an interrupt abandons a running call; the arguments shown for approval
//! are exactly those sent.

use super::contract::{AgentEvent, ApprovalAction, CallStatus, Decision, EventSender, ToolRef};
use super::session::{Session, Task};
use crate::mcp::{CallOutcome, Hub, names};
use crate::tools::{MAX_ARGUMENTS_BYTES, ToolName, ToolOutput};
use serde_json::{Map, Value, json};
use std::time::Duration;

/// Longest wait for servers still starting before a request goes without their tools.
const START_WAIT: Duration = Duration::from_secs(30);

impl Session {
    /// The session's MCP servers (for a front end's `/mcp` and live reports).
    pub fn mcp_hub(&self) -> Hub {
        self.mcp.hub.clone()
    }

    /// Send the server changes not yet reported.
    pub(super) fn report_mcp(&self, events: &EventSender) {
        for report in self.mcp.hub.take_reports() {
            let _ = events.send(AgentEvent::McpServer(report));
        }
    }

    /// The `tools` of the next request: the built-in tools and those of the
    /// running MCP servers (servers still starting are waited for, briefly).
    pub(super) async fn offered_tools(&self, t: &Task<'_>) -> Option<Value> {
        let builtin = self.tools.as_ref()?;
        if self.mcp.hub.is_empty() {
            return Some(builtin.clone());
        }
        self.mcp.hub.start();
        tokio::select! {
            _ = self.mcp.hub.wait_started(START_WAIT) => {}
            _ = t.cancel.cancelled() => {}
        }
        let offered = self.mcp.hub.offered();
        self.report_mcp(t.events);
        let mut all = builtin.as_array().cloned().unwrap_or_default();
        all.extend(offered.iter().map(names::ToolInfo::to_schema));
        Some(Value::Array(all))
    }

    /// One call of an MCP tool: propose, maybe ask, call, report.
    pub(super) async fn execute_mcp(
        &mut self,
        t: &mut Task<'_>,
        call_id: &str,
        name: &str,
        arguments: &str,
    ) -> ToolOutput {
        let tool_ref = ToolRef::from_name(name);
        let parsed = parse_arguments(name, arguments);
        let shown = match &parsed {
            Ok(args) => Value::Object(args.clone()),
            Err(_) => Value::String(arguments.to_string()),
        };
        let tool = self.mcp.hub.tool(name);
        let needs_approval = tool.as_ref().is_some_and(|t| !t.read_only);
        t.emit(AgentEvent::ToolCallProposed {
            step: t.step,
            call_id: call_id.to_string(),
            tool: tool_ref.clone(),
            target: tool
                .as_ref()
                .map(|t| format!("{} on {}", t.name, t.server))
                .unwrap_or_default(),
            arguments: shown,
            diff: None,
            needs_approval,
        });
        let (tool, args) = match (tool, parsed) {
            (None, _) => {
                let problem = self.unknown_mcp_tool(name);
                return self.finish(
                    t,
                    call_id,
                    tool_ref,
                    CallStatus::Failed,
                    ToolOutput::error(problem),
                );
            }
            (Some(_), Err(problem)) => {
                return self.finish(
                    t,
                    call_id,
                    tool_ref,
                    CallStatus::Failed,
                    ToolOutput::error(problem),
                );
            }
            (Some(tool), Ok(args)) => (tool, args),
        };
        let mut auto = false;
        if needs_approval {
            match self.approve_mcp(t, call_id, &tool, &args).await {
                Ok(covered) => auto = covered,
                Err(output) => {
                    return self.finish(t, call_id, tool_ref, CallStatus::Declined, output);
                }
            }
        }
        self.running(t, call_id, auto);
        let outcome = tokio::select! {
            outcome = self.mcp.hub.call(&tool, args) => outcome,
            _ = t.cancel.cancelled() => CallOutcome::Failed(format!(
                "the call of {name} was abandoned: the user interrupted the task"
            )),
        };
        self.report_mcp(t.events);
        let output = output_of(name, outcome);
        let status = if output.success {
            CallStatus::Ok
        } else {
            CallStatus::Failed
        };
        self.finish(t, call_id, tool_ref, status, output)
    }

    /// Ask the user (unless the task's approvals cover the tool). `Ok(true)`:
    /// covered by an earlier "approve for task"; `Err`: the declined result.
    async fn approve_mcp(
        &mut self,
        t: &Task<'_>,
        call_id: &str,
        tool: &names::ToolInfo,
        args: &Map<String, Value>,
    ) -> Result<bool, ToolOutput> {
        // A revoke sent while the last call ran applies to this one.
        self.apply_revocations(t.events);
        let allow_for_task = self.settings.scope_policy.allows(ToolName::Mcp, None);
        if allow_for_task && self.mcp.approved.contains(&tool.full_name) {
            return Ok(true);
        }
        let arguments = serde_json::to_string_pretty(args).unwrap_or_default();
        let action = ApprovalAction::McpCall {
            server: tool.server.clone(),
            tool: tool.name.clone(),
            arguments,
        };
        match self
            .ask(t, call_id, ToolName::Mcp, action, allow_for_task)
            .await
        {
            Decision::Decline { reason } => {
                Err(declined(&tool.full_name, reason, t.cancel.is_cancelled()))
            }
            Decision::ApproveToolForTask => {
                if allow_for_task {
                    self.mcp.approved.insert(tool.full_name.clone());
                    // `mcp` in the reported set: front ends show it, and revoking it
                    // takes back every MCP tool approved for the task.
                    if self.approvals.grant(ToolName::Mcp) {
                        self.report_scopes(t.events);
                    }
                }
                Ok(false)
            }
            _ => Ok(false),
        }
    }

    /// Why a name with the MCP prefix is not a tool that can be called now.
    fn unknown_mcp_tool(&self, name: &str) -> String {
        let server = names::split_full_name(name).map(|(s, _)| s).unwrap_or("");
        let known = self
            .mcp
            .hub
            .reports()
            .into_iter()
            .find(|r| r.server == server);
        match known {
            Some(r) if r.state == crate::mcp::ServerState::Running => format!(
                "unknown tool {name:?}: the MCP server {server} offers {}",
                r.tools.join(", ")
            ),
            Some(r) => format!(
                "the MCP server {server} is {}, so {name} cannot be called; use the other tools",
                r.state.as_str()
            ),
            None => format!("unknown tool {name:?}: there is no MCP server {server:?}"),
        }
    }
}

/// A call's outcome as the model gets it: `isError` and failures are errors.
fn output_of(name: &str, outcome: CallOutcome) -> ToolOutput {
    match outcome {
        CallOutcome::Answered(answer) if answer.is_error => ToolOutput::error(format!(
            "the MCP tool {name} reported an error: {}",
            answer.text
        )),
        CallOutcome::Answered(answer) => {
            let summary = format!("{} bytes", answer.text.len());
            ToolOutput::ok(summary, json!({"result": answer.text}))
        }
        CallOutcome::Failed(problem) => ToolOutput::error(problem),
    }
}

/// The arguments as a JSON object (empty text: no arguments).
fn parse_arguments(name: &str, arguments: &str) -> Result<Map<String, Value>, String> {
    if arguments.len() > MAX_ARGUMENTS_BYTES {
        return Err(format!(
            "the arguments are {} bytes, over the {MAX_ARGUMENTS_BYTES}-byte limit",
            arguments.len()
        ));
    }
    let trimmed = arguments.trim();
    if trimmed.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Object(args)) => Ok(args),
        Ok(_) => Err(format!("the arguments of {name} must be a JSON object")),
        Err(e) => Err(format!(
            "the arguments of {name} are not valid JSON ({e}); send one JSON object"
        )),
    }
}

fn declined(name: &str, reason: Option<String>, interrupted: bool) -> ToolOutput {
    if interrupted {
        return ToolOutput::error(format!(
            "The {name} call was not carried out: the user interrupted the task."
        ));
    }
    let mut message = format!("The user declined this {name} call; it was not sent to the server.");
    match reason.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => message.push_str(&format!(" The user's reason: {r}")),
        None => message.push_str(
            " Do not repeat it unchanged; reconsider the approach or explain in a final answer.",
        ),
    }
    ToolOutput::declined(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_must_be_one_object() {
        assert_eq!(parse_arguments("m", "  ").unwrap(), Map::new());
        assert!(
            parse_arguments("m", "[1]")
                .unwrap_err()
                .contains("JSON object")
        );
        assert!(
            parse_arguments("m", "{")
                .unwrap_err()
                .contains("not valid JSON")
        );
        assert_eq!(parse_arguments("m", r#"{"a":1}"#).unwrap()["a"], json!(1));
    }
}
