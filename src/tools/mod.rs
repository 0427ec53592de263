//! The tools the model may call. Each built-in tool is one folder
//! (`list_files/`, `read_file/`, `write_file/`, `replace_text/`,
//! `apply_patch/`, `run_tests/`, `search_text/`) holding its parsing, schema,
//! plan and result policy, registered once in `registry`; identities are in
//! `id`, the uniform `{success, ...}` result in `output`. The shared
//! machinery the tools use stays here: reading and listing in `files` (with
//! `list`), `search`, edits in `edit`, patches in `patch` and `patch_apply`,
//! the test runner and sandbox; confinement in `workspace`, the deny list in
//! `deny`, the stale-write guard in `guard`, credential hiding in `redact`,
//! secrets kept out of every output in `scrub`.

pub mod ansi;
pub mod apply_patch;
mod argument_paths;
mod argument_patterns;
mod builtin;
pub mod deny;
pub mod edit;
pub mod file_index;
pub mod files;
pub mod guard;
mod ignore_rules;
pub mod layer;
mod list;
pub mod list_files;
mod output;
pub mod patch;
pub mod patch_apply;
pub mod patch_select;
mod path;
pub mod read_file;
pub use crate::text::redact;
pub mod registry;
pub mod replace_text;
pub mod run_tests;
pub mod sandbox;
pub use crate::text::scrub;
pub mod search;
mod search_read;
pub mod search_text;
pub mod snapshot;
pub mod stage;
mod summary_js;
mod summary_lines;
pub mod test_commands;
pub mod test_infra;
pub mod test_run;
pub mod test_runner;
pub mod test_summary;
mod text;
mod walk;
pub mod workspace;
pub mod write_file;

pub use crate::tool_id::{MCP_PREFIX, ToolId, ToolName, ToolSelector, mcp_name, split_mcp_name};
pub use builtin::builtin;
pub use output::ToolOutput;
pub use registry::{Registry, Tool};
pub use test_commands::{TestCommand, TestCommands};
pub use workspace::{PathError, RelPath, Workspace};

/// Largest accepted arguments text of one call.
/// Room for a file at the 1 MiB write cap, JSON-escaped.
pub const MAX_ARGUMENTS_BYTES: usize = 2 * 1024 * 1024;

/// The OpenAI `tools` array of the built-in tools; `run_tests` lists the
/// workspace's own test commands (an `enum` of their names).
pub fn tool_schemas(tests: &TestCommands) -> serde_json::Value {
    builtin::builtin().schemas(tests)
}
