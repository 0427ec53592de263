//! Reading the workspace for the tools: files (`files`, `file_index`), walking
//! and listing it by its ignore rules (`walk`, `ignore_rules`, `list`),
//! searching it (`search`, `search_read`), text helpers (`text`) and the
//! snapshot a run or an MCP call is compared with (`snapshot`).
//!
//! What must stay true: nothing here writes to the workspace: writes are
//! `edits`' (approved edits) and `layer`'s (what a test run wrote, as kept).

pub mod file_index;
pub mod files;
pub(super) mod ignore_rules;
pub(super) mod list;
pub mod search;
pub(super) mod search_read;
pub mod snapshot;
pub(super) mod text;
pub(super) mod walk;
