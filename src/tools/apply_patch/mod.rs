//! `apply_patch {patch}`: a unified diff over one or more files (parsed,
//! located and applied by `tools::edits::patch` and `tools::edits::patch_apply`). Planned
//! as a file change the user approves; deletions are asked one by one.

use super::TestCommands;
use super::calls::registry::{Action, Args, FileChange, LivePreview, Plan, Reader, Refused, Tool};
use super::calls::registry::{ToolContext, object_schema, string_property};
use super::{ToolId, ToolName, edits::patch_apply};
use serde_json::{Value, json};

pub struct ApplyPatch;

impl Tool for ApplyPatch {
    fn id(&self) -> ToolId {
        ToolName::APPLY_PATCH.into()
    }

    fn description(&self, _: &TestCommands) -> String {
        "Apply a standard unified diff (`--- a/PATH`, `+++ b/PATH`, `@@ -a,b +c,d @@` hunks with ' ', '-', '+' lines), possibly for several files; `--- /dev/null` creates a file, `+++ /dev/null` deletes one (asked separately). Context and removed lines must match the file exactly. All files are applied or none. Read every file first. Needs the user's approval.".into()
    }

    fn parameters(&self, _: &TestCommands) -> Value {
        object_schema(
            json!({"patch": string_property("The unified diff text")}),
            &["patch"],
        )
    }

    fn plan(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Plan, Refused> {
        let patch = Reader::new(ToolName::APPLY_PATCH, args)
            .string("patch")
            .map_err(|e| Refused::new("", e))?;
        let target = patch_targets(&patch);
        match patch_apply::prepare_patch(ctx.workspace, &patch) {
            Ok(prepared) => Ok(Plan {
                target,
                action: Action::Files(FileChange::Patch(prepared)),
            }),
            Err(e) => Err(Refused::new(target, e.0)),
        }
    }

    fn live_preview(&self) -> LivePreview {
        LivePreview::Patch
    }
}

/// The files a patch names, once each, for one-line displays.
pub fn patch_targets(patch: &str) -> String {
    let mut unique: Vec<&str> = Vec::new();
    let files = patch
        .lines()
        .filter_map(|l| l.strip_prefix("+++ ").or_else(|| l.strip_prefix("--- ")))
        .map(|p| p.split('\t').next().unwrap_or(p).trim())
        .filter(|p| *p != "/dev/null")
        .map(|p| {
            p.strip_prefix("a/")
                .or_else(|| p.strip_prefix("b/"))
                .unwrap_or(p)
        });
    for f in files {
        if !unique.contains(&f) {
            unique.push(f);
        }
    }
    unique.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_call_targets_its_files() {
        let patch = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/y.py\n@@ -0,0 +1 @@\n+c\n";
        assert_eq!(patch_targets(patch), "x.py, y.py");
    }
}
