//! What a server's `tools/list` answer becomes before the model sees it: a
//! checked tool name (`mcp__<server>__<tool>`), an object schema of bounded
//! size, and a one-paragraph description without control characters.
//!
//! What must stay true: every offered name matches `[A-Za-z0-9_-]{1,64}`
//! (what the model APIs accept); a tool whose name or schema breaks the rules
//! is left out with a note, never passed on; at most `MAX_TOOLS` tools of one
//! server are offered.

use crate::config::mcp::valid_name;
use crate::text::sanitize::one_line;
use serde_json::{Map, Value, json};

/// Longest full tool name the model APIs accept.
pub const MAX_TOOL_NAME: usize = 64;
/// Most tools offered from one server.
pub const MAX_TOOLS: usize = 64;
/// Largest schema (serialized) passed on; a larger one is left out.
pub const MAX_SCHEMA_BYTES: usize = 16 * 1024;
/// Longest description passed on, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The prefix of every MCP tool name (the format is `tools::id`'s).
use crate::tools::{MCP_PREFIX as PREFIX, mcp_name};

/// One tool of a server, as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// `mcp__<server>__<tool>`.
    pub full_name: String,
    pub server: String,
    /// Its name on the server.
    pub name: String,
    pub description: String,
    /// An object schema.
    pub schema: Value,
    /// Configured as needing no approval.
    pub read_only: bool,
}

impl ToolInfo {
    /// The tool in the OpenAI `tools` format.
    pub fn to_schema(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.full_name,
                "description": self.description,
                "parameters": self.schema,
            }
        })
    }
}

/// The tools of a `tools/list` answer (its `tools` array as JSON), and a
/// note for each one left out.
pub fn offered_tools(
    server: &str,
    read_only: &[String],
    tools: &[Value],
) -> (Vec<ToolInfo>, Vec<String>) {
    let mut offered: Vec<ToolInfo> = Vec::new();
    let mut notes = Vec::new();
    for tool in tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            notes.push("a tool without a name was left out".to_string());
            continue;
        };
        let full_name = mcp_name(server, name);
        // A leading `_` would make `mcp__a___b` ambiguous (server `a`, tool `_b`).
        if !valid_name(name, MAX_TOOL_NAME)
            || name.starts_with('_')
            || full_name.len() > MAX_TOOL_NAME
        {
            notes.push(format!(
                "tool {} was left out: its name is not 1 to {} letters, digits, `-` or `_`",
                one_line(&truncate(name, 80)),
                MAX_TOOL_NAME - PREFIX.len() - server.len() - 2
            ));
            continue;
        }
        if offered.iter().any(|t| t.name == name) {
            notes.push(format!("tool {name} was listed twice; the first is kept"));
            continue;
        }
        if offered.len() == MAX_TOOLS {
            notes.push(format!("only the first {MAX_TOOLS} tools are offered"));
            break;
        }
        let schema = match tool.get("inputSchema") {
            Some(Value::Object(obj)) => Value::Object(obj.clone()),
            _ => json!({"type": "object"}),
        };
        let size = serde_json::to_string(&schema).map_or(usize::MAX, |s| s.len());
        if size > MAX_SCHEMA_BYTES {
            notes.push(format!(
                "tool {name} was left out: its schema is {size} bytes, over the {MAX_SCHEMA_BYTES}-byte limit"
            ));
            continue;
        }
        let description = tool
            .get("description")
            .and_then(Value::as_str)
            .map(clean_description)
            .unwrap_or_default();
        offered.push(ToolInfo {
            full_name,
            server: server.to_string(),
            name: name.to_string(),
            description,
            schema: object_schema(schema),
            read_only: read_only.iter().any(|r| r == name),
        });
    }
    (offered, notes)
}

/// A schema the model APIs accept: an object with `type: "object"`.
fn object_schema(schema: Value) -> Value {
    match schema {
        Value::Object(mut obj) => {
            if obj.get("type").and_then(Value::as_str) != Some("object") {
                obj.insert("type".into(), Value::String("object".into()));
            }
            Value::Object(obj)
        }
        _ => Value::Object(Map::from_iter([("type".into(), json!("object"))])),
    }
}

/// One paragraph: whitespace runs become one space, controls show visibly, capped.
fn clean_description(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    truncate(&one_line(&words.join(" ")), MAX_DESCRIPTION_CHARS)
}

fn truncate(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_schemas_and_descriptions_are_checked() {
        let big = json!({"type": "object", "description": "x".repeat(MAX_SCHEMA_BYTES)});
        let tools = [
            json!({"name": "echo", "description": "Echo\n\u{1b}[31mtext\u{7}", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}),
            json!({"name": "bad name", "inputSchema": {}}),
            json!({"name": "list", "inputSchema": [1, 2]}),
            json!({"name": "huge", "inputSchema": big}),
            json!({"name": "echo"}),
            json!({"description": "nameless"}),
            json!({"name": "_b", "inputSchema": {}}),
        ];
        let (offered, notes) = offered_tools("t", &["list".to_string()], &tools);
        let names: Vec<&str> = offered.iter().map(|t| t.full_name.as_str()).collect();
        assert_eq!(names, ["mcp__t__echo", "mcp__t__list"]);
        assert_eq!(offered[1].schema, json!({"type": "object"}));
        assert!(offered[1].read_only && !offered[0].read_only);
        assert!(
            !offered[0].description.chars().any(|c| c.is_control()),
            "{:?}",
            offered[0].description
        );
        assert!(offered[0].description.starts_with("Echo "));
        assert_eq!(notes.len(), 5, "{notes:?}");
        let many: Vec<Value> = (0..MAX_TOOLS + 5)
            .map(|i| json!({"name": format!("t{i}")}))
            .collect();
        assert_eq!(offered_tools("s", &[], &many).0.len(), MAX_TOOLS);
    }
}
