//! A tool as named in an event: one of the known tools, or the raw name the
//! model used when it asked for a tool that does not exist (the event is kept
//! so the front end can show the refused call). Serializes as the plain name,
//! so `exec --json` prints the same strings as the model sent.

use crate::tools::ToolName;
use serde::{Serialize, Serializer};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ToolRef {
    Known(ToolName),
    /// A name the model used that is not one of the tools (kept as sent).
    Unknown(String),
}

impl ToolRef {
    /// The known tool of that name, else the raw name.
    pub fn from_name(name: &str) -> ToolRef {
        match ToolName::parse(name) {
            Some(tool) => ToolRef::Known(tool),
            None => ToolRef::Unknown(name.to_string()),
        }
    }

    pub fn known(&self) -> Option<ToolName> {
        match self {
            ToolRef::Known(tool) => Some(*tool),
            ToolRef::Unknown(_) => None,
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            ToolRef::Known(tool) => tool.as_str(),
            ToolRef::Unknown(name) => name,
        }
    }
}

impl From<ToolName> for ToolRef {
    fn from(tool: ToolName) -> Self {
        ToolRef::Known(tool)
    }
}

impl From<&str> for ToolRef {
    fn from(name: &str) -> Self {
        ToolRef::from_name(name)
    }
}

impl From<String> for ToolRef {
    fn from(name: String) -> Self {
        ToolRef::from_name(&name)
    }
}

impl PartialEq<str> for ToolRef {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ToolRef {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for ToolRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ToolRef {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown_names_serialize_as_sent() {
        let known = ToolRef::from_name("write_file");
        assert_eq!(known.known(), Some(ToolName::WriteFile));
        assert_eq!(serde_json::to_string(&known).unwrap(), "\"write_file\"");
        let unknown = ToolRef::from_name("delete_file");
        assert_eq!(unknown, ToolRef::Unknown("delete_file".into()));
        assert_eq!(unknown.known(), None);
        assert_eq!(serde_json::to_string(&unknown).unwrap(), "\"delete_file\"");
        assert_eq!(unknown, "delete_file");
    }
}
