//! `read_file {path, offset?, limit?}`: a file's exact text, whole or a line
//! range (the reading, redaction and guard records are `tools::reading::files`). A
//! read: planned is done.

use super::TestCommands;
use super::calls::registry::{
    Action, Args, ContextRole, Cut, Plan, Reader, Refused, Tool, ToolContext,
};
use super::calls::registry::{object_schema, string_property};
use super::{ToolId, ToolName, reading::files};
use serde_json::{Value, json};

pub struct ReadFile;

impl Tool for ReadFile {
    fn id(&self) -> ToolId {
        ToolName::READ_FILE.into()
    }

    fn description(&self, _: &TestCommands) -> String {
        "Read a text file of the workspace: its exact text (no line numbers), with start_line, end_line, total_lines and truncated. Without offset/limit the whole file up to 256 KiB; for more, give `offset` (1-based first line) and `limit` (lines, default 2000, at most 5000). Environment, key and credential files are never readable.".into()
    }

    fn parameters(&self, _: &TestCommands) -> Value {
        object_schema(
            json!({
                "path": string_property("File path relative to the workspace root"),
                "offset": {"type": "integer", "minimum": 1, "description": "1-based first line to read"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "Number of lines to read; default 2000 when offset is given"},
            }),
            &["path"],
        )
    }

    fn plan(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Plan, Refused> {
        let read = Reader::new(ToolName::READ_FILE, args);
        let refused = |e| Refused::new("", e);
        let path = read.string("path").map_err(refused)?;
        let offset = read.number("offset").map_err(refused)?;
        let limit = read.number("limit").map_err(refused)?;
        let output = files::read_file_range(ctx.workspace, &path, offset, limit);
        Ok(Plan {
            target: path,
            action: Action::Read(output),
        })
    }

    fn cut(&self) -> Option<Cut> {
        Some(Cut {
            field: "content",
            how: "the rest of the file was left out; read on with read_file giving `offset` (the first line not shown) and a smaller `limit`, and edit with replace_text (rewriting it whole with write_file would drop the rest)",
        })
    }

    fn context_role(&self) -> ContextRole {
        ContextRole::ReadsFile
    }
}
