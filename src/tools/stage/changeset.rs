//! A stage's changeset: what applying it would do to the workspace, file
//! by file, as a patch the approval shows and its hunk choices cut; the
//! files changed on both sides (conflicts) and those that cannot be shown
//! as text, named apart and never written; and the same changes as a
//! patch file that `git apply` takes.
//!
//! What must stay true: a file is offered only if the workspace still holds
//! exactly the stage's base of it; a conflict is never written, whatever is
//! chosen; applying writes each file atomically through the workspace
//! capability, and only if it is still what the offer was computed from.

use super::{Stage, Staged, hash};
use crate::diff::FileDiff;
use crate::tools::edits::edit::{PreparedEdit, to_lf};
use crate::tools::edits::patch_apply::{PreparedDelete, PreparedPatch};
use crate::tools::layer::keep;
use crate::tools::reading::snapshot::RunChange;
use crate::tools::workspace::Workspace;

/// Largest file a changeset reads from either side.
const READ_LIMIT: u64 = 16 * 1024 * 1024;

/// What applying a stage would do.
#[derive(Debug, Default)]
pub struct Changeset {
    /// The offered changes (created and changed files, deletions).
    pub patch: PreparedPatch,
    /// Files changed in the workspace since the stage first touched them.
    pub conflicts: Vec<String>,
    /// Files that are not text (or too large) on either side: left in the stage.
    pub not_text: Vec<String>,
    /// The staged entries, for the patch file.
    staged: Vec<Staged>,
}

impl Changeset {
    /// Compute the changeset of `stage` against the real workspace `ws`
    /// (one without the stage).
    pub fn compute(stage: &Stage, ws: &Workspace) -> std::io::Result<Changeset> {
        let mut out = Changeset::default();
        for entry in stage.entries()? {
            let Ok(rel) = Workspace::check(&entry.path) else {
                out.not_text.push(entry.path.clone());
                continue;
            };
            let current = match ws.read_bytes(&rel, READ_LIMIT) {
                Ok(current) => current,
                Err(_) => {
                    out.conflicts.push(entry.path.clone());
                    continue;
                }
            };
            if current.as_deref().map(hash) != entry.base {
                out.conflicts.push(entry.path.clone());
                continue;
            }
            let text = |b: &[u8]| {
                std::str::from_utf8(b)
                    .ok()
                    .filter(|t| !t.contains('\0'))
                    .map(str::to_string)
            };
            let old = match current.as_deref().map(text) {
                Some(None) => {
                    out.not_text.push(entry.path.clone());
                    continue;
                }
                Some(Some(old)) => Some(old),
                None => None,
            };
            match &entry.content {
                None => {
                    let Some(old) = old else { continue };
                    let diff = FileDiff::compute(&entry.path, Some(&to_lf(&old)), "");
                    out.patch.deletes.push(PreparedDelete {
                        path: rel,
                        old,
                        diff,
                    });
                }
                Some(bytes) => {
                    let Some(new) = text(bytes) else {
                        out.not_text.push(entry.path.clone());
                        continue;
                    };
                    if old.as_deref() == Some(new.as_str()) {
                        continue;
                    }
                    let shown = old.as_deref().map(to_lf);
                    let diff = FileDiff::compute(&entry.path, shown.as_deref(), &to_lf(&new));
                    out.patch.edits.push(PreparedEdit {
                        path: rel,
                        old,
                        new,
                        diff,
                    });
                }
            }
            out.staged.push(entry);
        }
        Ok(out)
    }

    /// Nothing would change.
    pub fn is_empty(&self) -> bool {
        self.patch.edits.is_empty() && self.patch.deletes.is_empty()
    }

    /// The offered changes as a patch in `git diff`'s form, which
    /// `git apply` (and `patch -p1`) accept on the workspace as it is.
    pub fn patch_text(&self) -> String {
        let mut out = String::new();
        for edit in &self.patch.edits {
            let path = edit.path.display();
            let mode = self
                .staged
                .iter()
                .find(|s| s.path == path)
                .map_or(0o644, |s| if s.mode & 0o111 != 0 { 0o755 } else { 0o644 });
            out.push_str(&format!("diff --git a/{path} b/{path}\n"));
            let (from, old) = match &edit.old {
                Some(old) => (format!("a/{path}"), old.as_str()),
                None => {
                    out.push_str(&format!("new file mode 100{mode:o}\n"));
                    ("/dev/null".to_string(), "")
                }
            };
            out.push_str(&unified(old, &edit.new, &from, &format!("b/{path}")));
        }
        for delete in &self.patch.deletes {
            let path = delete.path.display();
            out.push_str(&format!(
                "diff --git a/{path} b/{path}\ndeleted file mode 100644\n"
            ));
            out.push_str(&unified(&delete.old, "", &format!("a/{path}"), "/dev/null"));
        }
        out
    }
}

/// The unified diff of `old` → `new` with these header names, with every
/// byte kept (line ends included) and the "no newline" marks git writes.
fn unified(old: &str, new: &str, from: &str, to: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut text = diff
        .unified_diff()
        .context_radius(3)
        .missing_newline_hint(true)
        .header(from, to)
        .to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Write the chosen part of a changeset into the workspace `ws` (without
/// the stage). Returns the changes written and the files not written, with why.
pub fn apply(ws: &Workspace, chosen: &PreparedPatch) -> (Vec<RunChange>, Vec<(String, String)>) {
    keep::apply_unless_changed(
        ws,
        chosen,
        "changed in the workspace while the changeset was reviewed; the user's version is kept",
    )
}
