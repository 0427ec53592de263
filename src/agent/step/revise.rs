//! Approving less or other than proposed: only some hunks of an edit, or the
//! user's own edited version. Either way the result is prepared again through
//! the ordinary write path (confinement, limits, stale-write guard), and the
//! model is told exactly what was written.

use crate::diff;
use crate::tools::ToolOutput;
use crate::tools::Workspace;
use crate::tools::edits::edit;
use crate::tools::edits::edit::PreparedEdit;
use crate::tools::edits::patch_apply::PreparedPatch;
use crate::tools::edits::patch_select;
use serde_json::{Value, json};

/// Most characters of the resulting file sent back with a partial edit.
const MAX_CONTENT_BACK: usize = 20_000;

/// How the written edit differs from the model's proposal.
#[derive(Debug, Clone, PartialEq)]
pub enum Revision {
    /// Only some hunks were applied; these were rejected (quoted).
    Hunks { rejected: Vec<Value> },
    /// The user edited the proposal; this is the diff that was written.
    Edited { final_diff: String },
    /// Only some hunks of a patch were applied: these were rejected (quoted,
    /// with their file), and these files were left untouched.
    PatchHunks {
        rejected: Vec<Value>,
        untouched: Vec<String>,
    },
}

/// Why a revision cannot be written.
#[derive(Debug, Clone, PartialEq)]
pub enum Refused {
    /// Nothing would be written (every hunk rejected, or no change left).
    AllRejected,
    Failed(String),
}

/// Keep only the accepted hunks. `None` revision when all were accepted.
pub fn only_hunks(
    ws: &Workspace,
    edit: PreparedEdit,
    accepted: &[usize],
) -> Result<(PreparedEdit, Option<Revision>), Refused> {
    let count = edit.diff.hunks.len();
    let mask: Vec<bool> = (0..count).map(|i| accepted.contains(&i)).collect();
    if !mask.iter().any(|&a| a) {
        return Err(Refused::AllRejected);
    }
    if mask.iter().all(|&a| a) {
        return Ok((edit, None));
    }
    let old = edit.old.as_deref().unwrap_or("");
    let mut partial = diff::apply_hunks(&to_lf(old), &to_lf(&edit.new), &mask);
    if old.contains("\r\n") {
        partial = partial.replace('\n', "\r\n");
    }
    let rejected = edit
        .diff
        .hunks
        .iter()
        .zip(&mask)
        .filter(|(_, accepted)| !**accepted)
        .map(|(hunk, _)| {
            let lines: Vec<String> = hunk.lines.iter().map(|l| l.unified()).collect();
            json!({"hunk": hunk.header(), "lines": lines.join("\n")})
        })
        .collect();
    let revised = edit::prepare_write(ws, &edit.path.display(), &partial)
        .map_err(|e| Refused::Failed(e.0))?;
    Ok((revised, Some(Revision::Hunks { rejected })))
}

/// Keep only the accepted hunks of each file of a patch (`files` as the
/// front end chose them; a file not named is left untouched). `None`
/// revision when every hunk was accepted.
pub fn only_patch_hunks(
    patch: PreparedPatch,
    files: &[crate::agent::contract::FileHunks],
) -> Result<(PreparedPatch, Option<Revision>), Refused> {
    let chosen = |path: &str| {
        files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.accepted.clone())
            .unwrap_or_default()
    };
    let selected = patch_select::select_hunks(&patch, chosen)
        .map_err(|e| Refused::Failed(format!("the patch was not applied: {}", e.0)))?
        .ok_or(Refused::AllRejected)?;
    if selected.rejected.is_empty() {
        return Ok((patch, None));
    }
    let revision = Revision::PatchHunks {
        rejected: selected.rejected,
        untouched: selected.untouched,
    };
    Ok((selected.patch, Some(revision)))
}

/// Write the user's version instead of the proposal.
pub fn user_edited(
    ws: &Workspace,
    edit: &PreparedEdit,
    content: &str,
) -> Result<(PreparedEdit, Revision), Refused> {
    let revised =
        edit::prepare_write(ws, &edit.path.display(), content).map_err(|e| Refused::Failed(e.0))?;
    if revised.diff.is_empty() {
        return Err(Refused::AllRejected);
    }
    let final_diff = revised.diff.to_unified();
    Ok((revised, Revision::Edited { final_diff }))
}

impl Revision {
    /// Add what the model must know to a successful write's result.
    pub fn describe(&self, output: &mut ToolOutput, edit: &PreparedEdit) {
        match self {
            Revision::Hunks { rejected } => {
                output.body["rejected_hunks"] = json!(rejected);
                output.body["note"] = json!(
                    "The user applied only some hunks of your edit; the rejected hunks (quoted) were not written. The file now holds exactly `content`."
                );
                if edit.new.chars().count() <= MAX_CONTENT_BACK {
                    output.body["content"] = json!(edit.new);
                } else {
                    output.body["content_note"] =
                        json!("the file is large; call read_file to see its current content");
                }
                output.summary = format!("{} (some hunks rejected)", output.summary);
            }
            Revision::Edited { final_diff } => {
                output.body["user_modified"] = json!(true);
                output.body["final_diff"] = json!(final_diff);
                output.body["note"] = json!(
                    "The user modified your proposal before accepting it; `final_diff` is what was written. Read the file before editing it again."
                );
                output.summary = format!("{} (edited by the user)", output.summary);
            }
            Revision::PatchHunks { .. } => self.describe_patch(output),
        }
    }

    /// Add what the model must know to a partly applied patch's result.
    pub fn describe_patch(&self, output: &mut ToolOutput) {
        let Revision::PatchHunks {
            rejected,
            untouched,
        } = self
        else {
            return;
        };
        output.body["rejected_hunks"] = json!(rejected);
        if !untouched.is_empty() {
            output.body["untouched_files"] = json!(untouched);
        }
        output.body["note"] = json!(
            "The user applied only some hunks of your patch; the rejected hunks (quoted, with their file) were not written, and the files in `untouched_files` were not changed at all. Read the files before patching them again."
        );
        output.summary = format!("{} (some hunks rejected)", output.summary);
    }
}

fn to_lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}
