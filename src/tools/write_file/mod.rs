//! `write_file {path, content}`: create a file or replace its whole content
//! (prepared and applied by `tools::edits::edit`, through the stale-write guard).
//! Planned as a file change the user approves.

use super::TestCommands;
use super::calls::registry::{
    Action, Args, ContextRole, FileChange, LivePreview, Plan, Reader, Refused,
};
use super::calls::registry::{Tool, ToolContext, object_schema, string_property};
use super::{ToolId, ToolName};
use crate::tools::edits::edit;
use serde_json::{Value, json};

pub struct WriteFile;

impl Tool for WriteFile {
    fn id(&self) -> ToolId {
        ToolName::WRITE_FILE.into()
    }

    fn description(&self, _: &TestCommands) -> String {
        "Create a file or replace its whole content. Needs the user's approval. An existing file must be read first, and is refused if it changed since your last read.".into()
    }

    fn parameters(&self, _: &TestCommands) -> Value {
        object_schema(
            json!({"path": string_property("File path relative to the workspace root"), "content": string_property("The complete new content of the file")}),
            &["path", "content"],
        )
    }

    fn plan(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Plan, Refused> {
        let read = Reader::new(ToolName::WRITE_FILE, args);
        let path = read.string("path").map_err(|e| Refused::new("", e))?;
        let content = read.string("content").map_err(|e| Refused::new("", e))?;
        let edit = edit::prepare_write(ctx.workspace, &path, &content)
            .map_err(|e| Refused::new(path.clone(), e.0))?;
        Ok(Plan {
            target: path,
            action: Action::Files(FileChange::Edit(edit)),
        })
    }

    fn live_preview(&self) -> LivePreview {
        LivePreview::WriteFile
    }

    fn context_role(&self) -> ContextRole {
        ContextRole::EditsFile
    }
}
