//! How a call of the model becomes a tool's work: the registry every tool
//! (built-in or MCP) is registered in once (`registry`, `builtin`), the uniform
//! result (`output`), and reading the paths and patterns in a call's arguments
//! (`argument_paths`, `argument_patterns`).
//!
//! What must stay true: front ends learn a call's shape from the registry,
//! never by testing a tool's name.

pub(super) mod argument_paths;
pub(super) mod argument_patterns;
pub(super) mod builtin;
pub(super) mod output;
pub mod registry;
