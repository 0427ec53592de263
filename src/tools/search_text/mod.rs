//! `search_text {pattern, path?, glob?, ignore_case?}`: matching lines of
//! the workspace's text files (searched by `tools::reading::search`). A read: planned
//! is done.

use super::TestCommands;
use super::calls::registry::{Action, Args, Cut, Plan, Reader, Refused, Tool, ToolContext};
use super::calls::registry::{object_schema, string_property};
use super::{ToolId, ToolName, reading::search};
use serde_json::{Value, json};

pub struct SearchText;

impl Tool for SearchText {
    fn id(&self) -> ToolId {
        ToolName::SEARCH_TEXT.into()
    }

    fn description(&self, _: &TestCommands) -> String {
        "Search the text files under a folder for a regular expression (Rust regex syntax), skipping what list_files skips. Returns at most 200 matching lines as {path, line, text} (text cut at 300 characters), sorted by path and line, with the total count.".into()
    }

    fn parameters(&self, _: &TestCommands) -> Value {
        object_schema(
            json!({
                "pattern": string_property("Regular expression (Rust regex syntax), matched per line"),
                "path": string_property("Folder (or file) relative to the workspace root; default \".\""),
                "glob": string_property("Only files matching this glob: `*.rs` matches file names, a glob with `/` (`src/**/*.ts`) paths from the workspace root"),
                "ignore_case": {"type": "boolean", "description": "Match without regard to case; default false"},
            }),
            &["pattern"],
        )
    }

    fn plan(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Plan, Refused> {
        let read = Reader::new(ToolName::SEARCH_TEXT, args);
        let refused = |e| Refused::new("", e);
        let args = search::SearchArgs {
            pattern: read.string("pattern").map_err(refused)?,
            path: read
                .optional_string("path")
                .map_err(refused)?
                .unwrap_or_else(|| ".".into()),
            glob: read.optional_string("glob").map_err(refused)?,
            ignore_case: read.flag("ignore_case").map_err(refused)?,
        };
        let output = search::search_text(ctx.workspace, &args);
        Ok(Plan {
            target: format!("{} in {}", args.pattern, args.path),
            action: Action::Read(output),
        })
    }

    fn cut(&self) -> Option<Cut> {
        Some(Cut {
            field: "matches",
            how: "narrow the pattern, the path or the glob to see the rest",
        })
    }
}
