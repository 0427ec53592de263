//! Carrying out one step the model proposed: the same path for every tool,
//! built-in or MCP (`execute`, `mcp_call`), its approval (`approve`, the task's
//! `scopes` and `task_scopes`), approving less or other than proposed
//! (`revise`), and an approved test run with what it wrote (`run_output`).
//!
//! What must stay true: nothing is written and no test runs before the step is
//! approved (by the person, a grant for the task, or a staged task's stage); a
//! rejection goes back to the model with its reason.

pub(super) mod approve;
pub(super) mod execute;
pub(super) mod mcp_call;
pub(super) mod revise;
pub(super) mod run_output;
pub mod scopes;
pub(super) mod task_scopes;
