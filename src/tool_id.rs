//! Tool identities as they cross every boundary: `ToolName`, the name of a
//! built-in tool (one constant each, listed in `ToolName::BUILTIN`), and `ToolId`,
//! what a call, an approval, a scope or a TUI row names: a built-in tool, a
//! tool of an MCP server, or a name the model made up. `ToolSelector` is what
//! configuration names when it forbids task-wide approvals.
//!
//! What must stay true: a `ToolId` serializes as the model's name
//! (`write_file`, `mcp__<server>__<tool>`) and parses back to itself; nothing
//! outside this module builds or splits the MCP name format; the built-in
//! registry (`tools::calls::builtin`) registers exactly `ToolName::BUILTIN`, in
//! that order (its tests check). This module imports nothing of stepwise,
//! so the configuration can name tools without depending on them.

use serde::{Serialize, Serializer};
use std::fmt;

/// The prefix of every MCP tool name (`mcp__<server>__<tool>`).
pub const MCP_PREFIX: &str = "mcp__";

/// The name of a built-in tool, as the model sees it. Built only by the
/// constants below (and a test's sample tool), so every `ToolName` that
/// parses is a registered tool's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolName(&'static str);

impl ToolName {
    pub const LIST_FILES: ToolName = ToolName::new("list_files");
    pub const READ_FILE: ToolName = ToolName::new("read_file");
    pub const WRITE_FILE: ToolName = ToolName::new("write_file");
    pub const REPLACE_TEXT: ToolName = ToolName::new("replace_text");
    pub const APPLY_PATCH: ToolName = ToolName::new("apply_patch");
    pub const RUN_TESTS: ToolName = ToolName::new("run_tests");
    pub const SEARCH_TEXT: ToolName = ToolName::new("search_text");

    /// The built-in tools, in the order the model is told of them.
    pub const BUILTIN: [ToolName; 7] = [
        ToolName::LIST_FILES,
        ToolName::READ_FILE,
        ToolName::WRITE_FILE,
        ToolName::REPLACE_TEXT,
        ToolName::APPLY_PATCH,
        ToolName::RUN_TESTS,
        ToolName::SEARCH_TEXT,
    ];

    /// A tool's name constant (for the list above, or a test's sample tool).
    pub const fn new(name: &'static str) -> ToolName {
        ToolName(name)
    }

    /// The built-in tool of that name.
    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::named(name.trim())
    }

    /// The built-in tool of exactly that name.
    fn named(name: &str) -> Option<ToolName> {
        ToolName::BUILTIN.into_iter().find(|t| t.0 == name)
    }

    /// Every built-in tool, in the order the model is told of them.
    pub fn all() -> Vec<ToolName> {
        ToolName::BUILTIN.to_vec()
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl Serialize for ToolName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// What a call names: a built-in tool, a tool of an MCP server, or a name
/// the model used that is neither (kept so the refused call can be shown).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ToolId {
    Builtin(ToolName),
    Mcp { server: String, tool: String },
    Unknown(String),
}

impl ToolId {
    /// The identity of a name the model (or a transcript) used.
    pub fn parse(name: &str) -> ToolId {
        match ToolName::named(name) {
            Some(tool) => ToolId::Builtin(tool),
            None => ToolId::external(name),
        }
    }

    /// The identity of a name that is no registered tool's: an MCP tool's
    /// if it has that shape, else unknown (`ToolId::parse`, in `builtin`,
    /// knows the built-in tools).
    pub fn external(name: &str) -> ToolId {
        match split_mcp_name(name) {
            Some((server, tool)) => ToolId::mcp(server, tool),
            None => ToolId::Unknown(name.to_string()),
        }
    }

    pub fn mcp(server: &str, tool: &str) -> ToolId {
        ToolId::Mcp {
            server: server.to_string(),
            tool: tool.to_string(),
        }
    }

    /// The built-in tool, if it is one.
    pub fn builtin(&self) -> Option<ToolName> {
        match self {
            ToolId::Builtin(tool) => Some(*tool),
            _ => None,
        }
    }

    /// The MCP server, if it is a server's tool.
    pub fn server(&self) -> Option<&str> {
        match self {
            ToolId::Mcp { server, .. } => Some(server),
            _ => None,
        }
    }
}

/// `mcp__<server>__<tool>`.
pub fn mcp_name(server: &str, tool: &str) -> String {
    format!("{MCP_PREFIX}{server}__{tool}")
}

/// The server and tool of a full MCP name, if it has that shape.
pub fn split_mcp_name(full: &str) -> Option<(&str, &str)> {
    let (server, tool) = full.strip_prefix(MCP_PREFIX)?.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

impl fmt::Display for ToolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolId::Builtin(tool) => f.write_str(tool.as_str()),
            ToolId::Mcp { server, tool } => write!(f, "{MCP_PREFIX}{server}__{tool}"),
            ToolId::Unknown(name) => f.write_str(name),
        }
    }
}

impl Serialize for ToolId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl From<ToolName> for ToolId {
    fn from(tool: ToolName) -> Self {
        ToolId::Builtin(tool)
    }
}

impl PartialEq<str> for ToolId {
    fn eq(&self, other: &str) -> bool {
        match self {
            ToolId::Builtin(tool) => tool.as_str() == other,
            ToolId::Unknown(name) => name == other,
            ToolId::Mcp { server, tool } => {
                split_mcp_name(other) == Some((server.as_str(), tool.as_str()))
            }
        }
    }
}

impl PartialEq<&str> for ToolId {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

impl PartialEq<ToolName> for ToolId {
    fn eq(&self, other: &ToolName) -> bool {
        self.builtin() == Some(*other)
    }
}

/// What configuration may name in `no_auto_approve`: one tool, or every
/// MCP tool (`mcp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSelector {
    Tool(ToolId),
    AnyMcp,
}

impl ToolSelector {
    pub fn matches(&self, id: &ToolId) -> bool {
        match self {
            ToolSelector::Tool(tool) => tool == id,
            ToolSelector::AnyMcp => matches!(id, ToolId::Mcp { .. }),
        }
    }
}

impl fmt::Display for ToolSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolSelector::Tool(tool) => tool.fmt(f),
            ToolSelector::AnyMcp => f.write_str("mcp"),
        }
    }
}

impl From<ToolName> for ToolSelector {
    fn from(tool: ToolName) -> Self {
        ToolSelector::Tool(tool.into())
    }
}

impl From<&str> for ToolId {
    fn from(name: &str) -> Self {
        ToolId::parse(name)
    }
}

impl ToolSelector {
    /// A configured name: a built-in tool, `mcp`, or `mcp__<server>__<tool>`.
    pub fn parse(name: &str) -> Result<ToolSelector, String> {
        let name = name.trim();
        if name == "mcp" {
            return Ok(ToolSelector::AnyMcp);
        }
        match ToolId::parse(name) {
            ToolId::Unknown(_) => Err(format!(
                "unknown tool {name:?}; the tools are: {}, mcp (every MCP tool) and mcp__SERVER__TOOL",
                ToolName::all()
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            id => Ok(ToolSelector::Tool(id)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_names_need_a_server_and_a_tool() {
        assert_eq!(split_mcp_name("mcp__t__echo"), Some(("t", "echo")));
        assert_eq!(split_mcp_name("mcp__t__a__b"), Some(("t", "a__b")));
        assert_eq!(split_mcp_name("mcp____echo"), None);
        assert_eq!(split_mcp_name("mcp__t__"), None);
        assert_eq!(split_mcp_name("read_file"), None);
        assert_eq!(ToolId::external("mcp__t"), ToolId::Unknown("mcp__t".into()));
        assert_eq!(ToolId::external("mcp__t__echo"), ToolId::mcp("t", "echo"));
        assert_eq!(mcp_name("t", "echo"), "mcp__t__echo");
    }
}
