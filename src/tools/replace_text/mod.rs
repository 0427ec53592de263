//! `replace_text {path, old, new}`: replace the one occurrence of `old`
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

pub struct ReplaceText;

impl Tool for ReplaceText {
    fn id(&self) -> ToolId {
        ToolName::REPLACE_TEXT.into()
    }

    fn description(&self, _: &TestCommands) -> String {
        "Replace exactly one occurrence of `old` with `new` in a file. `old` must match the file exactly once; include surrounding lines to make it unique. Read the file first; refused if it changed since your last read. Needs the user's approval.".into()
    }

    fn parameters(&self, _: &TestCommands) -> Value {
        object_schema(
            json!({
                "path": string_property("File path relative to the workspace root"),
                "old": string_property("Exact text to replace; must occur exactly once"),
                "new": string_property("Replacement text"),
            }),
            &["path", "old", "new"],
        )
    }

    fn plan(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Plan, Refused> {
        let read = Reader::new(ToolName::REPLACE_TEXT, args);
        let refused = |e| Refused::new("", e);
        let path = read.string("path").map_err(refused)?;
        let old = read.string("old").map_err(refused)?;
        let new = read.string("new").map_err(refused)?;
        let edit = edit::prepare_replace(ctx.workspace, &path, &old, &new)
            .map_err(|e| Refused::new(path.clone(), e.0))?;
        Ok(Plan {
            target: path,
            action: Action::Files(FileChange::Edit(edit)),
        })
    }

    fn live_preview(&self) -> LivePreview {
        LivePreview::ReplaceText
    }

    fn context_role(&self) -> ContextRole {
        ContextRole::EditsFile
    }
}
