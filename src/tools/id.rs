//! Tool identities as they cross every boundary: `ToolName`, the name of a
//! built-in tool (each tool's folder defines its own constant), and `ToolId`,
//! what a call, an approval, a scope or a TUI row names: a built-in tool, a
//! tool of an MCP server, or a name the model made up. `ToolSelector` is what
//! configuration names when it forbids task-wide approvals.
//!
//! What must stay true: a `ToolId` serializes as the model's name
//! (`write_file`, `mcp__<server>__<tool>`) and parses back to itself; nothing
//! outside this module builds or splits the MCP name format.

use serde::{Serialize, Serializer};
use std::fmt;

/// The prefix of every MCP tool name (`mcp__<server>__<tool>`).
pub const MCP_PREFIX: &str = "mcp__";

/// The name of a built-in tool, as the model sees it. Built only by the
/// tools' own folders (as constants) and by `ToolName::parse` (in
/// `builtin`) through the registry, so every `ToolName` is a registered tool's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolName(&'static str);

impl ToolName {
    /// A tool's name constant (for a tool's own folder, or a test's sample tool).
    pub const fn new(name: &'static str) -> ToolName {
        ToolName(name)
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
