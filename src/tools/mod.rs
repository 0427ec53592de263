//! The tools the model may call. Each built-in tool is one folder
//! (`list_files/`, `read_file/`, `write_file/`, `replace_text/`,
//! `apply_patch/`, `run_tests/`, `search_text/`) holding its parsing, schema,
//! plan and result policy, registered once in `calls::registry`;
//! identities are in `tool_id`, the uniform `{success, ...}` result in
//! `calls::output`. The machinery the tools share is grouped by what it
//! serves: `calls` (registry, arguments), `workspace` (confinement, the
//! deny list, the stale-write guard), `reading` (files, listing, search,
//! snapshots), `edits` (edits and patches), `testing` (test commands, the
//! runner, summaries), `sandbox` (what a test run may do), `layer` (what a
//! run wrote, the one door into the workspace) and `stage` (staged tasks);
//! credential hiding in `redact`, secrets kept out of every output in
//! `scrub`.

// The tools, one folder each.
pub mod apply_patch;
pub mod list_files;
pub mod read_file;
pub mod replace_text;
pub mod run_tests;
pub mod search_text;
pub mod write_file;

// What they share.
pub mod calls;
pub mod edits;
pub mod layer;
pub mod reading;
pub mod sandbox;
pub mod stage;
pub mod testing;
pub mod workspace;

pub use crate::text::{redact, scrub};

pub use crate::tool_id::{MCP_PREFIX, ToolId, ToolName, ToolSelector, mcp_name, split_mcp_name};
pub use calls::builtin::builtin;
pub use calls::output::ToolOutput;
pub use calls::registry::{Registry, Tool};
pub use testing::test_commands::{TestCommand, TestCommands};
pub use workspace::{PathError, RelPath, Workspace};

/// Largest accepted arguments text of one call.
/// Room for a file at the 1 MiB write cap, JSON-escaped.
pub const MAX_ARGUMENTS_BYTES: usize = 2 * 1024 * 1024;

/// The OpenAI `tools` array of the built-in tools; `run_tests` lists the
/// workspace's own test commands (an `enum` of their names).
pub fn tool_schemas(tests: &TestCommands) -> serde_json::Value {
    calls::builtin::builtin().schemas(tests)
}
