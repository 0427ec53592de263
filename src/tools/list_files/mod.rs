//! `list_files {path?, depth?}`: an overview of a folder, breadth first (the
//! walk and its counts are `tools::reading::list`). A read: planned is done.

use super::TestCommands;
use super::calls::registry::{Action, object_schema, string_property};
use super::calls::registry::{Args, Cut, Plan, Reader, Refused, Tool, ToolContext};
use super::{ToolId, ToolName, reading::files};
use serde_json::{Value, json};

pub struct ListFiles;

impl Tool for ListFiles {
    fn id(&self) -> ToolId {
        ToolName::LIST_FILES.into()
    }

    fn description(&self, _: &TestCommands) -> String {
        "Overview of a folder of the workspace, breadth first, in at most 200 entries (relative paths, sorted; hidden, cache and .gitignored folders skipped). A folder that does not fit is one entry with its file count, like `src/components/ (1,234 files)`: list it to see inside.".into()
    }

    fn parameters(&self, _: &TestCommands) -> Value {
        object_schema(
            json!({
                "path": string_property("Folder relative to the workspace root; default \".\""),
                "depth": {"type": "integer", "minimum": 1, "description": "Folder levels to show at most; default: as many as fit"},
            }),
            &[],
        )
    }

    fn plan(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Plan, Refused> {
        let read = Reader::new(ToolName::LIST_FILES, args);
        let path = read
            .optional_string("path")
            .map_err(|e| Refused::new("", e))?
            .unwrap_or_else(|| ".".into());
        let depth = read.number("depth").map_err(|e| Refused::new("", e))?;
        let output = files::list_files_depth(ctx.workspace, &path, depth);
        Ok(Plan {
            target: path,
            action: Action::Read(output),
        })
    }

    fn cut(&self) -> Option<Cut> {
        Some(Cut {
            field: "files",
            how: "list a subfolder (a narrower request) to see the rest",
        })
    }
}
