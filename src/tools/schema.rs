//! What the model is told about each tool: its description and the JSON
//! schema of its arguments, and the OpenAI `tools` array built from them.
//! What must stay true: every schema matches what `ToolCall::parse` accepts.

use super::ToolName;
use super::test_commands::TestCommands;
use serde_json::{Value, json};

impl ToolName {
    pub(super) fn description(self) -> &'static str {
        match self {
            ToolName::ListFiles => {
                "Overview of a folder of the workspace, breadth first, in at most 200 entries (relative paths, sorted; hidden, cache and .gitignored folders skipped). A folder that does not fit is one entry with its file count, like `src/components/ (1,234 files)`: list it to see inside."
            }
            ToolName::ReadFile => {
                "Read a text file of the workspace: its exact text (no line numbers), with start_line, end_line, total_lines and truncated. Without offset/limit the whole file up to 256 KiB; for more, give `offset` (1-based first line) and `limit` (lines, default 2000, at most 5000). Environment, key and credential files are never readable."
            }
            ToolName::WriteFile => {
                "Create a file or replace its whole content. Needs the user's approval. An existing file must be read first, and is refused if it changed since your last read."
            }
            ToolName::ReplaceText => {
                "Replace exactly one occurrence of `old` with `new` in a file. `old` must match the file exactly once; include surrounding lines to make it unique. Read the file first; refused if it changed since your last read. Needs the user's approval."
            }
            ToolName::ApplyPatch => {
                "Apply a standard unified diff (`--- a/PATH`, `+++ b/PATH`, `@@ -a,b +c,d @@` hunks with ' ', '-', '+' lines), possibly for several files; `--- /dev/null` creates a file, `+++ /dev/null` deletes one (asked separately). Context and removed lines must match the file exactly. All files are applied or none. Read every file first. Needs the user's approval."
            }
            // The workspace's own commands are described by `TestCommands`.
            ToolName::RunTests => {
                "Run the project's tests in the workspace root with one of its test commands. Needs the user's approval."
            }
            ToolName::Mcp => "A tool of an MCP server (each is offered under its own name).",
            ToolName::SearchText => {
                "Search the text files under a folder for a regular expression (Rust regex syntax), skipping what list_files skips. Returns at most 200 matching lines as {path, line, text} (text cut at 300 characters), sorted by path and line, with the total count."
            }
        }
    }

    pub(super) fn parameters(self) -> Value {
        let string = |d: &str| json!({"type": "string", "description": d});
        let (props, required): (Value, &[&str]) = match self {
            ToolName::ListFiles => (
                json!({
                    "path": string("Folder relative to the workspace root; default \".\""),
                    "depth": {"type": "integer", "minimum": 1, "description": "Folder levels to show at most; default: as many as fit"},
                }),
                &[],
            ),
            ToolName::ReadFile => (
                json!({
                    "path": string("File path relative to the workspace root"),
                    "offset": {"type": "integer", "minimum": 1, "description": "1-based first line to read"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "Number of lines to read; default 2000 when offset is given"},
                }),
                &["path"],
            ),
            ToolName::WriteFile => (
                json!({"path": string("File path relative to the workspace root"), "content": string("The complete new content of the file")}),
                &["path", "content"],
            ),
            ToolName::ReplaceText => (
                json!({
                    "path": string("File path relative to the workspace root"),
                    "old": string("Exact text to replace; must occur exactly once"),
                    "new": string("Replacement text"),
                }),
                &["path", "old", "new"],
            ),
            ToolName::ApplyPatch => (
                json!({"patch": string("The unified diff text")}),
                &["patch"],
            ),
            ToolName::RunTests => (json!({"command": string("Test command name")}), &[]),
            ToolName::Mcp => (json!({}), &[]),
            ToolName::SearchText => (
                json!({
                    "pattern": string("Regular expression (Rust regex syntax), matched per line"),
                    "path": string("Folder (or file) relative to the workspace root; default \".\""),
                    "glob": string("Only files matching this glob: `*.rs` matches file names, a glob with `/` (`src/**/*.ts`) paths from the workspace root"),
                    "ignore_case": {"type": "boolean", "description": "Match without regard to case; default false"},
                }),
                &["pattern"],
            ),
        };
        json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
    }
}

/// The OpenAI `tools` array describing every tool; `run_tests` lists the
/// workspace's own test commands (an `enum` of their names).
pub fn tool_schemas(tests: &TestCommands) -> Value {
    Value::Array(
        ToolName::ALL
            .into_iter()
            .map(|t| {
                let (description, parameters) = match t {
                    ToolName::RunTests => (tests.description(), tests.parameters()),
                    _ => (t.description().to_string(), t.parameters()),
                };
                json!({
                    "type": "function",
                    "function": {"name": t.as_str(), "description": description, "parameters": parameters}
                })
            })
            .collect(),
    )
}
