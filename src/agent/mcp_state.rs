//! The session's MCP state: the servers (`crate::mcp::Hub`) and the MCP
//! tools the user approved for the running task, by full name. Kept apart
//! from `mcp_call` so the session can own it without importing the calls.
//! The approvals are cleared with the task's other scopes.

use crate::mcp::Hub;
use std::collections::BTreeSet;

/// The session's MCP servers and the MCP tools approved for the running task.
#[derive(Clone, Default)]
pub(super) struct McpState {
    pub(super) hub: Hub,
    /// Full tool names approved for the rest of the task.
    pub(super) approved: BTreeSet<String>,
}

impl McpState {
    pub(super) fn new(hub: Hub) -> McpState {
        McpState {
            hub,
            approved: BTreeSet::new(),
        }
    }
}
