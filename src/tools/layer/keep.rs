//! What of a run's layer is offered, and writing what the user kept: the
//! offered entries become a patch (created and changed files as edits, the
//! run's deletions as deletes) that the approval shows and its hunk choices
//! cut like any patch; [`apply`] then writes each file through the
//! workspace capability, atomically.
//!
//! What must stay true: a file is written (or deleted) only if the
//! workspace still holds exactly what the offer was computed from (the user
//! may have changed it meanwhile: then it is named, never overwritten);
//! nothing the rules did not offer is ever written; a kept file is written
//! without its executable bit.

use super::rules::{Context, Verdict, Why};
use super::{Entry, Written};
use crate::diff::FileDiff;
use crate::tools::edits::edit::{PreparedEdit, to_lf};
use crate::tools::edits::patch_apply::{PreparedDelete, PreparedPatch};
use crate::tools::reading::snapshot::{RunChange, Touch};
use crate::tools::workspace::{RelPath, Workspace};

/// Most files one run's offer may hold: a run that wrote more (a flood)
/// has none of them kept, and says so.
pub const MAX_OFFERED: usize = 1000;

/// A run's layer, sorted by the rules.
#[derive(Debug, Default)]
pub struct Sorted {
    /// Files that only hold data: kept by a plain approval.
    pub data: PreparedPatch,
    /// Files that change what runs: kept only when chosen one by one.
    pub code: PreparedPatch,
    /// What was thrown away and named, with the reason.
    pub discarded: Vec<(String, Why)>,
}

impl Sorted {
    /// Nothing to offer and nothing to name.
    pub fn is_empty(&self) -> bool {
        self.data.diffs().is_empty() && self.code.diffs().is_empty() && self.discarded.is_empty()
    }
}

/// Sort the layer's `entries` by the rules of `ctx`, reading the
/// workspace's side of each offered file.
pub fn sort(ws: &Workspace, ctx: &Context<'_>, entries: &[Entry]) -> Sorted {
    let mut sorted = Sorted::default();
    for entry in entries {
        let code = match ctx.verdict(entry) {
            Verdict::Drop => continue,
            Verdict::Discard(why) => {
                sorted.discarded.push((entry.shown(), why));
                continue;
            }
            Verdict::Offer { code } => code,
        };
        let Some(path) = entry.utf8().and_then(|p| Workspace::check(p).ok()) else {
            sorted
                .discarded
                .push((entry.shown(), Why::OutsideWorkspace));
            continue;
        };
        // The workspace's side: text, or the offer cannot be shown.
        let old = match ws.read_bytes(&path, super::READ_LIMIT) {
            Ok(None) => None,
            Ok(Some(bytes)) => match String::from_utf8(bytes) {
                Ok(text) if !text.contains('\0') => Some(text),
                _ => {
                    sorted
                        .discarded
                        .push((entry.shown(), Why::WorkspaceNotText));
                    continue;
                }
            },
            Err(_) => {
                sorted
                    .discarded
                    .push((entry.shown(), Why::WorkspaceUnreadable));
                continue;
            }
        };
        let into = match code {
            true => &mut sorted.code,
            false => &mut sorted.data,
        };
        match &entry.written {
            Written::Deleted => {
                let Some(old) = old else { continue };
                let diff = FileDiff::compute(&path.display(), Some(&to_lf(&old)), "");
                into.deletes.push(PreparedDelete { path, old, diff });
            }
            Written::File {
                bytes: Some(bytes), ..
            } => {
                // The rules offer only text.
                let Ok(new) = String::from_utf8(bytes.clone()) else {
                    continue;
                };
                let shown_old = old.as_deref().map(to_lf);
                let diff = FileDiff::compute(&path.display(), shown_old.as_deref(), &to_lf(&new));
                into.edits.push(PreparedEdit {
                    path,
                    old,
                    new,
                    diff,
                });
            }
            _ => {}
        }
    }
    let offered = sorted.data.diffs().len() + sorted.code.diffs().len();
    if offered > MAX_OFFERED {
        // A flood: nothing of it is kept. Its code is named file by file,
        // the rest counted.
        let why = Why::Flood;
        for diff in std::mem::take(&mut sorted.code).diffs() {
            sorted.discarded.push((diff.path, why));
        }
        let data = std::mem::take(&mut sorted.data).diffs().len();
        if data > 0 {
            sorted.discarded.push((format!("{data} other files"), why));
        }
    }
    sorted
}

/// Write what the user kept of an offer. Returns the changes written and
/// the files not written, with why.
pub fn apply(ws: &Workspace, patch: &PreparedPatch) -> (Vec<RunChange>, Vec<(String, String)>) {
    apply_unless_changed(
        ws,
        patch,
        "changed in the workspace while the run went on; the user's version is kept",
    )
}

/// [`apply`], saying `stale` of a file the workspace no longer holds as the
/// offer found it (which is then not written).
pub fn apply_unless_changed(
    ws: &Workspace,
    patch: &PreparedPatch,
    stale: &str,
) -> (Vec<RunChange>, Vec<(String, String)>) {
    let mut kept = Vec::new();
    let mut refused = Vec::new();
    let current = |path: &RelPath| ws.read_bytes(path, super::READ_LIMIT).ok().flatten();
    for edit in &patch.edits {
        if current(&edit.path).as_deref() != edit.old.as_deref().map(str::as_bytes) {
            refused.push((edit.path.display(), stale.to_string()));
            continue;
        }
        match ws.write_atomic(&edit.path, edit.new.as_bytes()) {
            Ok(()) => {
                ws.guard()
                    .remember_written(&edit.path, edit.old.as_deref(), &edit.new);
                kept.push(RunChange {
                    path: edit.path.display(),
                    change: match edit.old {
                        Some(_) => Touch::Changed,
                        None => Touch::Created,
                    },
                    before: edit.old.clone(),
                    after: Some(edit.new.clone()),
                    contents_known: true,
                });
            }
            Err(e) => refused.push((edit.path.display(), e.0)),
        }
    }
    for delete in &patch.deletes {
        if current(&delete.path).as_deref() != Some(delete.old.as_bytes()) {
            refused.push((delete.path.display(), stale.to_string()));
            continue;
        }
        match ws.remove_file(&delete.path) {
            Ok(()) => {
                ws.guard().forget(&delete.path);
                kept.push(RunChange {
                    path: delete.path.display(),
                    change: Touch::Deleted,
                    before: Some(delete.old.clone()),
                    after: None,
                    contents_known: true,
                });
            }
            Err(e) => refused.push((delete.path.display(), e.0)),
        }
    }
    (kept, refused)
}
