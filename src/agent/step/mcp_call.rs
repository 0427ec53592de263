//! MCP tools (`mcp__<server>__<tool>`) as tools of the registry: the
//! session's side of `crate::mcp`. The servers start with the session; each
//! request offers the tools of the servers running then; a call is a
//! [`McpTool`] unit whose plan is an external call, so it goes the one way
//! every call goes (`execute`): the deny list on its arguments, approval by
//! its `ToolId` (unless configured read-only), task-wide scopes and revoke,
//! the workspace compared before and after, the result scrubbed. Server
//! state changes go out as `McpServer` events.
//!
//! What must stay true: nothing a server does ends the task or the session;
//! an interrupt abandons a running call; the arguments shown for approval
//! are exactly those sent.

use crate::agent::contract::{AgentEvent, EventSender};
use crate::agent::session::{Session, Task};
use crate::mcp::{CallOutcome, Hub, ToolInfo, names};
use crate::tools::calls::registry::{Action, Args, ExternalCall, Plan, Refused, Tool, ToolContext};
use crate::tools::{TestCommands, ToolId, ToolOutput};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Longest wait for servers still starting before a request goes without their tools.
const START_WAIT: Duration = Duration::from_secs(30);

/// One tool of a running MCP server, as a unit of the registry.
pub(in crate::agent) struct McpTool(pub(in crate::agent) ToolInfo);

impl Tool for McpTool {
    fn id(&self) -> ToolId {
        ToolId::mcp(&self.0.server, &self.0.name)
    }

    fn description(&self, _: &TestCommands) -> String {
        self.0.description.clone()
    }

    fn parameters(&self, _: &TestCommands) -> Value {
        self.0.schema.clone()
    }

    fn plan(&self, args: &Args, _: &ToolContext<'_>) -> Result<Plan, Refused> {
        Ok(Plan {
            target: format!("{} on {}", self.0.name, self.0.server),
            action: Action::External(ExternalCall {
                server: self.0.server.clone(),
                tool: self.0.name.clone(),
                arguments: args.clone(),
                read_only: self.0.read_only,
            }),
        })
    }
}

impl Session {
    /// The session's MCP servers (for a front end's `/mcp` and live reports).
    pub fn mcp_hub(&self) -> Hub {
        self.mcp.clone()
    }

    /// Send the server changes not yet reported.
    pub(in crate::agent) fn report_mcp(&self, events: &EventSender) {
        for report in self.mcp.take_reports() {
            let _ = events.send(AgentEvent::McpServer(report));
        }
    }

    /// The `tools` of the next request: the registered tools and those of
    /// the running MCP servers (servers still starting are waited for, briefly).
    pub(in crate::agent) async fn offered_tools(&self, t: &Task<'_>) -> Option<Value> {
        let builtin = self.tools.as_ref()?;
        if self.mcp.is_empty() {
            return Some(builtin.clone());
        }
        self.mcp.start();
        tokio::select! {
            _ = self.mcp.wait_started(START_WAIT) => {}
            _ = t.cancel.cancelled() => {}
        }
        let offered = self.mcp.offered();
        self.report_mcp(t.events);
        let mut all = builtin.as_array().cloned().unwrap_or_default();
        all.extend(offered.iter().map(names::ToolInfo::to_schema));
        Some(Value::Array(all))
    }

    /// The unit of an MCP tool a server runs now.
    pub(in crate::agent) fn mcp_tool(&self, id: &ToolId) -> Option<Arc<dyn Tool>> {
        let info = self.mcp.tool(&id.to_string())?;
        Some(Arc::new(McpTool(info)))
    }

    /// Send an approved (or read-only) call; an interrupt abandons it.
    pub(in crate::agent) async fn call_mcp(&self, t: &Task<'_>, call: &ExternalCall) -> ToolOutput {
        let id = ToolId::mcp(&call.server, &call.tool);
        let Some(info) = self.mcp.tool(&id.to_string()) else {
            return ToolOutput::error(self.unknown_mcp_tool(&id));
        };
        let outcome = tokio::select! {
            outcome = self.mcp.call(&info, call.arguments.clone()) => outcome,
            _ = t.cancel.cancelled() => CallOutcome::Failed(format!(
                "the call of {id} was abandoned: the user interrupted the task"
            )),
        };
        self.report_mcp(t.events);
        output_of(&id, outcome)
    }

    /// Why an MCP name is not a tool that can be called now.
    pub(in crate::agent) fn unknown_mcp_tool(&self, id: &ToolId) -> String {
        let server = id.server().unwrap_or("");
        let known = self.mcp.reports().into_iter().find(|r| r.server == server);
        match known {
            Some(r) if r.state == crate::mcp::ServerState::Running => format!(
                "unknown tool {:?}: the MCP server {server} offers {}",
                id.to_string(),
                r.tools.join(", ")
            ),
            Some(r) => format!(
                "the MCP server {server} is {}, so {id} cannot be called; use the other tools",
                r.state.as_str()
            ),
            None => format!(
                "unknown tool {:?}: there is no MCP server {server:?}",
                id.to_string()
            ),
        }
    }
}

/// A call's outcome as the model gets it: `isError` and failures are errors.
fn output_of(id: &ToolId, outcome: CallOutcome) -> ToolOutput {
    match outcome {
        CallOutcome::Answered(answer) if answer.is_error => ToolOutput::error(format!(
            "the MCP tool {id} reported an error: {}",
            answer.text
        )),
        CallOutcome::Answered(answer) => {
            let summary = format!("{} bytes", answer.text.len());
            ToolOutput::ok(summary, json!({"result": answer.text}))
        }
        CallOutcome::Failed(problem) => ToolOutput::error(problem),
    }
}
