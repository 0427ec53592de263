//! The tool registry: every tool the model may call is one `Tool`, a unit
//! that owns its argument parsing, its schema, its plan (what it would do,
//! computed without side effects), its result policy (which field may be cut
//! to the context budget, what its result means to compaction) and its live
//! preview kind. Built-in tools live one folder each (`tools/<name>/`) and
//! are registered by one line in [`builtin`](super::builtin); MCP tools are units the session
//! builds from its servers' lists (`agent::mcp_call`) and go through the same
//! path. The core executes plans: an approval *shape* per plan kind, never a
//! tool's name.
//!
//! What must stay true: a plan has no side effect but reading; every
//! change, command or external call is a plan the core asks approval for.

use crate::tool_id::{ToolId, ToolName};
use crate::tools::edits::edit::PreparedEdit;
use crate::tools::edits::patch_apply::PreparedPatch;
use crate::tools::testing::test_commands::{TestCommand, TestCommands};
use crate::tools::{ToolOutput, Workspace};
use serde_json::{Map, Value, json};
use std::fmt;
use std::sync::Arc;

/// What a tool may consult to describe itself and to plan a call.
pub struct ToolContext<'a> {
    pub workspace: &'a Workspace,
    pub tests: &'a TestCommands,
}

/// The arguments of a call: one JSON object.
pub type Args = Map<String, Value>;

/// What a call would do, worked out without side effects.
pub struct Plan {
    /// The key argument for one-line displays (a path, a runner, a search).
    pub target: String,
    pub action: Action,
}

impl fmt::Debug for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let action = match &self.action {
            Action::Read(_) => "read",
            Action::Files(_) => "files",
            Action::Tests(_) => "tests",
            Action::External(_) => "external",
        };
        f.debug_struct("Plan")
            .field("target", &self.target)
            .field("action", &action)
            .finish()
    }
}

/// The kinds of thing a call can do; each has one approval shape.
pub enum Action {
    /// A read: its result, ready (nothing to approve).
    Read(ToolOutput),
    /// Change files: one edit or a multi-file patch (approved as file changes).
    Files(FileChange),
    /// Run a test command in the sandbox (approved as a command).
    Tests(TestCommand),
    /// Call a tool of another program (approved as an external call, unless
    /// configured read-only).
    External(ExternalCall),
}

/// A file change ready to approve and apply.
pub enum FileChange {
    Edit(PreparedEdit),
    Patch(PreparedPatch),
}

/// A call of an MCP server's tool, as it would be sent.
#[derive(Debug, Clone)]
pub struct ExternalCall {
    pub server: String,
    /// The tool's name on the server.
    pub tool: String,
    pub arguments: Args,
    /// Configured as needing no approval (and as changing no file).
    pub read_only: bool,
}

/// Why a call cannot be planned: what it targeted (maybe empty) and the
/// problem, written for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub target: String,
    pub problem: String,
}

impl Refused {
    pub fn new(target: impl Into<String>, problem: impl Into<String>) -> Refused {
        Refused {
            target: target.into(),
            problem: problem.into(),
        }
    }
}

/// How a tool's arguments are previewed while they stream in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LivePreview {
    None,
    /// `path` and the whole new `content`.
    WriteFile,
    /// `path`, `old` and `new` text.
    ReplaceText,
    /// A unified diff in `patch`.
    Patch,
}

/// What a tool's results mean when old results are elided to save context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextRole {
    Other,
    /// Its result is the content of the file at `path`.
    ReadsFile,
    /// It rewrote the file at `path` (older reads of it are stale).
    EditsFile,
}

/// The field of a result that may be cut to fit the context, and how the
/// model asks for the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub field: &'static str,
    pub how: &'static str,
}

/// One tool.
pub trait Tool: Send + Sync {
    /// The tool's identity; the model calls it by its `to_string()`.
    fn id(&self) -> ToolId;
    /// The description the model is given.
    fn description(&self, tests: &TestCommands) -> String;
    /// The JSON schema of the arguments (an object schema).
    fn parameters(&self, tests: &TestCommands) -> Value;
    /// Parse the arguments and work out what the call would do.
    fn plan(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Plan, Refused>;
    /// The result field that may be cut to the context budget.
    fn cut(&self) -> Option<Cut> {
        None
    }
    fn live_preview(&self) -> LivePreview {
        LivePreview::None
    }
    fn context_role(&self) -> ContextRole {
        ContextRole::Other
    }
}

/// The tool in the OpenAI `tools` format.
pub fn schema_of(tool: &dyn Tool, tests: &TestCommands) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.id().to_string(),
            "description": tool.description(tests),
            "parameters": tool.parameters(tests),
        }
    })
}

/// The registered tools of a session (see `builtin` for the built-in set).
#[derive(Clone)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
}

impl Registry {
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Registry {
        Registry { tools }
    }

    /// This registry with one more tool (a tool of the same name is replaced).
    pub fn with(mut self, tool: Arc<dyn Tool>) -> Registry {
        let id = tool.id();
        self.tools.retain(|t| t.id() != id);
        self.tools.push(tool);
        self
    }

    /// The registered tool of that name.
    pub fn lookup(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.id() == name)
    }

    /// The registered built-in tool of that name.
    pub fn name_of(&self, name: &str) -> Option<ToolName> {
        self.lookup(name).and_then(|t| t.id().builtin())
    }

    /// The built-in tools registered, in order.
    pub fn names(&self) -> Vec<ToolName> {
        self.tools.iter().filter_map(|t| t.id().builtin()).collect()
    }

    /// The identity a name the model used has here: a registered tool's,
    /// else an MCP tool's or an unknown one.
    pub fn identify(&self, name: &str) -> ToolId {
        match self.lookup(name) {
            Some(tool) => tool.id(),
            None => ToolId::external(name),
        }
    }

    /// The OpenAI `tools` array describing every registered tool.
    pub fn schemas(&self, tests: &TestCommands) -> Value {
        Value::Array(
            self.tools
                .iter()
                .map(|t| schema_of(t.as_ref(), tests))
                .collect(),
        )
    }

    /// How the tool of that name is previewed while it streams.
    pub fn live_preview(&self, name: &str) -> LivePreview {
        self.lookup(name)
            .map_or(LivePreview::None, |t| t.live_preview())
    }

    pub fn context_role(&self, name: &str) -> ContextRole {
        self.lookup(name)
            .map_or(ContextRole::Other, |t| t.context_role())
    }

    pub fn cut(&self, name: &str) -> Option<Cut> {
        self.lookup(name).and_then(|t| t.cut())
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// Reading arguments, with errors written for the model.
pub struct Reader<'a> {
    tool: &'static str,
    args: &'a Args,
}

impl<'a> Reader<'a> {
    pub fn new(tool: ToolName, args: &'a Args) -> Reader<'a> {
        Reader {
            tool: tool.as_str(),
            args,
        }
    }

    /// A required string argument.
    pub fn string(&self, key: &str) -> Result<String, String> {
        self.optional_string(key)?
            .ok_or_else(|| format!("{} needs the string argument `{key}`", self.tool))
    }

    pub fn optional_string(&self, key: &str) -> Result<Option<String>, String> {
        match self.args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!(
                "argument `{key}` of {} must be a string, not {}",
                self.tool,
                json_type(other)
            )),
        }
    }

    pub fn number(&self, key: &str) -> Result<Option<u64>, String> {
        match self.args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => n.as_u64().map(Some).ok_or_else(|| {
                format!(
                    "argument `{key}` of {} must be a whole number of at least 0, not {n}",
                    self.tool
                )
            }),
            Some(other) => Err(format!(
                "argument `{key}` of {} must be a number, not {}",
                self.tool,
                json_type(other)
            )),
        }
    }

    pub fn flag(&self, key: &str) -> Result<bool, String> {
        match self.args.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(format!(
                "argument `{key}` of {} must be true or false, not {}",
                self.tool,
                json_type(other)
            )),
        }
    }
}

/// A parameters schema: these properties, these required.
pub fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// A string property with its description.
pub fn string_property(description: &str) -> Value {
    json!({"type": "string", "description": description})
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

/// The arguments text as one JSON object (empty text: no arguments).
pub fn parse_arguments(name: &str, arguments: &str) -> Result<Args, String> {
    if arguments.len() > crate::tools::MAX_ARGUMENTS_BYTES {
        return Err(format!(
            "the arguments are {} bytes, over the {}-byte limit",
            arguments.len(),
            crate::tools::MAX_ARGUMENTS_BYTES
        ));
    }
    let trimmed = arguments.trim();
    if trimmed.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Object(args)) => Ok(args),
        Ok(_) => Err(format!("the arguments of {name} must be a JSON object")),
        Err(e) => Err(format!(
            "the arguments of {name} are not valid JSON ({e}); send one JSON object"
        )),
    }
}
