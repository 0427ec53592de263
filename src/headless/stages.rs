//! `stepwise stage`: the workspace's stages outside a task. A stage left by
//! a task (cut off, or whose changeset was not applied) can be listed,
//! printed as a patch, applied or discarded here.
//!
//! What must stay true: `apply` writes only a changeset whose task's tests
//! passed (the receipt kept with the stage says so), never a conflict, each
//! file atomically; `discard` never touches the workspace.

use super::{EXIT_ANSWERED, EXIT_NOT_ANSWERED, EXIT_USAGE, fail, out};
use crate::config::Config;
use crate::config::flags::StageCommand;
use crate::present::one_line;
use crate::tools::Workspace;
use crate::tools::stage::changeset::{self, Changeset};
use crate::tools::stage::{Stage, Store};

/// Run one `stepwise stage` command; returns the exit code.
pub fn run(config: &Config, what: &StageCommand) -> i32 {
    match act(config, what) {
        Ok(code) => code,
        Err(e) => {
            fail(&e);
            EXIT_USAGE
        }
    }
}

fn act(config: &Config, what: &StageCommand) -> Result<i32, String> {
    let root = &config.workspace;
    let store = Store::user().map_err(|e| e.to_string())?;
    let open = |id: &str| Stage::open(&store, root, id).map_err(|e| e.to_string());
    let workspace = || {
        Workspace::open(root)
            .map_err(|e| format!("cannot open workspace {}: {e}", root.display()))?
            .with_deny_paths(&config.deny_paths)
    };
    match what {
        StageCommand::List => {
            let stages = Stage::list(&store, root).map_err(|e| e.to_string())?;
            if stages.is_empty() {
                out("no stages in this workspace");
            }
            for s in stages {
                let files = if s.files == 1 { "file" } else { "files" };
                out(&format!(
                    "{}  {}  {} {files}  {}",
                    s.id,
                    s.state,
                    s.files,
                    one_line(&s.task)
                ));
            }
            Ok(EXIT_ANSWERED)
        }
        StageCommand::Show { name } => {
            let stage = open(name)?;
            let set = Changeset::compute(&stage, &workspace()?).map_err(|e| e.to_string())?;
            out(set.patch_text().trim_end());
            for path in &set.conflicts {
                fail(&format!(
                    "{path}: changed in the workspace since the stage took it (a conflict)"
                ));
            }
            Ok(EXIT_ANSWERED)
        }
        StageCommand::Apply { name } => {
            let stage = open(name)?;
            let passed = stage.meta()["receipt"]["tests"]["passed"] == serde_json::json!(true);
            if !passed {
                fail(&format!(
                    "the stage {} has no passing test run after its last change; finish its task with `stepwise exec --stage` first",
                    stage.id()
                ));
                return Ok(EXIT_NOT_ANSWERED);
            }
            let ws = workspace()?;
            let set = Changeset::compute(&stage, &ws).map_err(|e| e.to_string())?;
            let (written, refused) = changeset::apply(&ws, &set.patch);
            for change in &written {
                out(&format!("written: {}", one_line(&change.path)));
                let _ = stage.forget(std::path::Path::new(&change.path));
            }
            for (path, why) in &refused {
                fail(&format!("not written: {path} ({why})"));
            }
            for path in &set.conflicts {
                fail(&format!(
                    "not written: {path} (changed in the workspace since the stage took it; it stays in the stage)"
                ));
            }
            let left = !set.conflicts.is_empty() || !refused.is_empty() || !set.not_text.is_empty();
            if left {
                return Ok(EXIT_NOT_ANSWERED);
            }
            let group = stage.meta()["group"].as_str().map(str::to_string);
            stage.discard().map_err(|e| e.to_string())?;
            // One attempt of a comparison applied: the others go.
            if let Some(group) = group {
                let all = Stage::list(&store, root).map_err(|e| e.to_string())?;
                for other in all
                    .into_iter()
                    .filter(|s| s.group.as_deref() == Some(&group))
                {
                    if let Ok(stage) = Stage::open(&store, root, &other.id) {
                        let _ = stage.discard();
                        out(&format!("discarded the other attempt {}", other.id));
                    }
                }
            }
            Ok(EXIT_ANSWERED)
        }
        StageCommand::Discard { name } => {
            let stage = open(name)?;
            let id = stage.id().to_string();
            stage.discard().map_err(|e| e.to_string())?;
            out(&format!("discarded the stage {id}"));
            Ok(EXIT_ANSWERED)
        }
    }
}
