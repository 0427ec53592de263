//! The tools the model may call: their JSON schemas (`schema`), argument
//! parsing into typed calls, and the uniform `{success, ...}` result shape.
//! The tools themselves live in `files` (with `list`), `search`, `edit` and
//! `test_runner`; confinement in `workspace`, the deny list in `deny`, the
//! stale-write guard in `guard`, credential hiding in `redact`, secrets kept
//! out of every output in `scrub`.

pub mod deny;
pub mod edit;
pub mod file_index;
pub mod files;
pub mod guard;
mod list;
mod output;
pub mod patch;
pub mod patch_apply;
pub mod patch_select;
mod path;
pub mod redact;
pub mod sandbox;
mod schema;
pub mod scrub;
pub mod search;
mod search_read;
pub mod snapshot;
pub mod test_commands;
pub mod test_run;
pub mod test_runner;
pub mod test_summary;
mod text;
mod walk;
pub mod workspace;

pub use output::ToolOutput;
pub use schema::tool_schemas;
use serde::Serialize;
use serde_json::{Map, Value};
pub use test_commands::{TestCommand, TestCommands};
pub use workspace::{PathError, RelPath, Workspace};

/// Tool names as the model sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    ListFiles,
    ReadFile,
    WriteFile,
    ReplaceText,
    ApplyPatch,
    RunTests,
    SearchText,
    /// A tool of an MCP server (`mcp__<server>__<tool>`, see `crate::mcp`):
    /// never in `ALL`, named in approvals and task scopes.
    Mcp,
}

impl ToolName {
    pub const ALL: [ToolName; 7] = [
        ToolName::ListFiles,
        ToolName::ReadFile,
        ToolName::WriteFile,
        ToolName::ReplaceText,
        ToolName::ApplyPatch,
        ToolName::RunTests,
        ToolName::SearchText,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::ListFiles => "list_files",
            ToolName::ReadFile => "read_file",
            ToolName::WriteFile => "write_file",
            ToolName::ReplaceText => "replace_text",
            ToolName::ApplyPatch => "apply_patch",
            ToolName::RunTests => "run_tests",
            ToolName::SearchText => "search_text",
            ToolName::Mcp => "mcp",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name.trim())
    }

    /// Writes and test runs wait for the user's approval; reads do not.
    pub fn needs_approval(self) -> bool {
        matches!(
            self,
            ToolName::WriteFile
                | ToolName::ReplaceText
                | ToolName::ApplyPatch
                | ToolName::RunTests
                | ToolName::Mcp
        )
    }
}

/// A tool call with validated arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCall {
    ListFiles {
        path: String,
        depth: Option<u64>,
    },
    ReadFile {
        path: String,
        offset: Option<u64>,
        limit: Option<u64>,
    },
    WriteFile {
        path: String,
        content: String,
    },
    ReplaceText {
        path: String,
        old: String,
        new: String,
    },
    ApplyPatch {
        patch: String,
    },
    /// A test command by name (checked against the workspace's commands
    /// when prepared); `None`: the workspace's default command.
    RunTests {
        command: Option<String>,
    },
    SearchText(search::SearchArgs),
}

/// Largest accepted arguments text of one call.
/// Room for a file at the 1 MiB write cap, JSON-escaped.
pub const MAX_ARGUMENTS_BYTES: usize = 2 * 1024 * 1024;

impl ToolCall {
    /// Validate a call by name and raw JSON arguments. Errors are written for the model.
    pub fn parse(name: &str, arguments: &str) -> Result<ToolCall, String> {
        let tool = ToolName::parse(name).ok_or_else(|| {
            format!(
                "unknown tool {name:?}; the tools are: {}",
                ToolName::ALL.map(ToolName::as_str).join(", ")
            )
        })?;
        if arguments.len() > MAX_ARGUMENTS_BYTES {
            return Err(format!(
                "the arguments are {} bytes, over the {MAX_ARGUMENTS_BYTES}-byte limit",
                arguments.len()
            ));
        }
        let trimmed = arguments.trim();
        let value: Value = if trimmed.is_empty() {
            Value::Object(Map::new())
        } else {
            serde_json::from_str(trimmed).map_err(|e| {
                format!("the arguments of {name} are not valid JSON ({e}); send one JSON object")
            })?
        };
        let Value::Object(args) = value else {
            return Err(format!("the arguments of {name} must be a JSON object"));
        };
        let get = |key: &str, required: bool| -> Result<Option<String>, String> {
            match args.get(key) {
                None | Some(Value::Null) if required => {
                    Err(format!("{name} needs the string argument `{key}`"))
                }
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(format!(
                    "argument `{key}` of {name} must be a string, not {}",
                    json_type(other)
                )),
            }
        };
        let req = |key: &str| get(key, true).map(Option::unwrap_or_default);
        let number = |key: &str| -> Result<Option<u64>, String> {
            match args.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => n.as_u64().map(Some).ok_or_else(|| {
                    format!(
                        "argument `{key}` of {name} must be a whole number of at least 0, not {n}"
                    )
                }),
                Some(other) => Err(format!(
                    "argument `{key}` of {name} must be a number, not {}",
                    json_type(other)
                )),
            }
        };
        Ok(match tool {
            // Never parsed here: MCP calls go to `crate::mcp` by their prefix.
            ToolName::Mcp => return Err(format!("{name} is a tool of an MCP server")),
            ToolName::ListFiles => ToolCall::ListFiles {
                path: get("path", false)?.unwrap_or_else(|| ".".into()),
                depth: number("depth")?,
            },
            ToolName::ReadFile => ToolCall::ReadFile {
                path: req("path")?,
                offset: number("offset")?,
                limit: number("limit")?,
            },
            ToolName::WriteFile => ToolCall::WriteFile {
                path: req("path")?,
                content: req("content")?,
            },
            ToolName::ReplaceText => ToolCall::ReplaceText {
                path: req("path")?,
                old: req("old")?,
                new: req("new")?,
            },
            ToolName::ApplyPatch => ToolCall::ApplyPatch {
                patch: req("patch")?,
            },
            ToolName::RunTests => ToolCall::RunTests {
                command: get("command", false)?.map(|c| c.trim().to_string()),
            },
            ToolName::SearchText => ToolCall::SearchText(search::SearchArgs {
                pattern: req("pattern")?,
                path: get("path", false)?.unwrap_or_else(|| ".".into()),
                glob: get("glob", false)?,
                ignore_case: match args.get("ignore_case") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(b)) => *b,
                    Some(other) => {
                        return Err(format!(
                            "argument `ignore_case` of {name} must be true or false, not {}",
                            json_type(other)
                        ));
                    }
                },
            }),
        })
    }

    pub fn name(&self) -> ToolName {
        match self {
            ToolCall::ListFiles { .. } => ToolName::ListFiles,
            ToolCall::ReadFile { .. } => ToolName::ReadFile,
            ToolCall::WriteFile { .. } => ToolName::WriteFile,
            ToolCall::ReplaceText { .. } => ToolName::ReplaceText,
            ToolCall::ApplyPatch { .. } => ToolName::ApplyPatch,
            ToolCall::RunTests { .. } => ToolName::RunTests,
            ToolCall::SearchText(_) => ToolName::SearchText,
        }
    }

    /// The key argument for one-line displays: the path or the runner.
    pub fn target(&self) -> String {
        match self {
            ToolCall::ListFiles { path, .. }
            | ToolCall::ReadFile { path, .. }
            | ToolCall::WriteFile { path, .. }
            | ToolCall::ReplaceText { path, .. } => path.clone(),
            ToolCall::ApplyPatch { patch } => {
                let files: Vec<&str> = patch
                    .lines()
                    .filter_map(|l| l.strip_prefix("+++ ").or_else(|| l.strip_prefix("--- ")))
                    .map(|p| p.split('\t').next().unwrap_or(p).trim())
                    .filter(|p| *p != "/dev/null")
                    .map(|p| {
                        p.strip_prefix("a/")
                            .or_else(|| p.strip_prefix("b/"))
                            .unwrap_or(p)
                    })
                    .collect();
                let mut unique: Vec<&str> = Vec::new();
                for f in files {
                    if !unique.contains(&f) {
                        unique.push(f);
                    }
                }
                unique.join(", ")
            }
            ToolCall::RunTests { command } => command.clone().unwrap_or_default(),
            ToolCall::SearchText(args) => format!("{} in {}", args.pattern, args.path),
        }
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_each_tool_with_defaults() {
        assert_eq!(
            ToolCall::parse("list_files", "").unwrap(),
            ToolCall::ListFiles {
                path: ".".into(),
                depth: None
            }
        );
        assert_eq!(
            ToolCall::parse("run_tests", "{}").unwrap(),
            ToolCall::RunTests { command: None }
        );
        assert_eq!(
            ToolCall::parse("replace_text", r#"{"path":"a.py","old":"x","new":""}"#).unwrap(),
            ToolCall::ReplaceText {
                path: "a.py".into(),
                old: "x".into(),
                new: "".into()
            }
        );
    }

    #[test]
    fn bad_calls_get_errors_that_say_what_to_do() {
        let unknown = ToolCall::parse("delete_file", "{}").unwrap_err();
        assert!(
            unknown.contains("unknown tool") && unknown.contains("read_file"),
            "{unknown}"
        );
        let bad_json = ToolCall::parse("read_file", "{\"path\":").unwrap_err();
        assert!(bad_json.contains("not valid JSON"), "{bad_json}");
        let wrong_type = ToolCall::parse("read_file", r#"{"path": 3}"#).unwrap_err();
        assert!(
            wrong_type.contains("must be a string, not a number"),
            "{wrong_type}"
        );
        let missing = ToolCall::parse("write_file", r#"{"path": "a.py"}"#).unwrap_err();
        assert!(missing.contains("`content`"), "{missing}");
        let not_object = ToolCall::parse("read_file", "[1]").unwrap_err();
        assert!(not_object.contains("JSON object"), "{not_object}");
        let runner = ToolCall::parse("run_tests", r#"{"command": 3}"#).unwrap_err();
        assert!(runner.contains("must be a string"), "{runner}");
        let huge = format!(
            r#"{{"path":"a.py","content":"{}"}}"#,
            "x".repeat(MAX_ARGUMENTS_BYTES)
        );
        assert!(
            ToolCall::parse("write_file", &huge)
                .unwrap_err()
                .contains("limit")
        );
    }

    #[test]
    fn schemas_name_all_the_tools_with_their_arguments() {
        let schemas = tool_schemas(&TestCommands::default());
        let names: Vec<_> = schemas
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "list_files",
                "read_file",
                "write_file",
                "replace_text",
                "apply_patch",
                "run_tests",
                "search_text"
            ]
        );
        assert_eq!(
            schemas[4]["function"]["parameters"]["required"],
            json!(["patch"])
        );
        assert_eq!(
            schemas[3]["function"]["parameters"]["required"],
            json!(["path", "old", "new"])
        );
    }

    #[test]
    fn a_patch_call_targets_its_files() {
        let call = ToolCall::parse(
            "apply_patch",
            &json!({"patch": "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/y.py\n@@ -0,0 +1 @@\n+c\n"}).to_string(),
        )
        .unwrap();
        assert_eq!(call.name(), ToolName::ApplyPatch);
        assert_eq!(call.target(), "x.py, y.py");
        assert!(ToolName::ApplyPatch.needs_approval());
    }
}
