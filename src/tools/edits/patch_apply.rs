//! Preparing and applying an `apply_patch` call against the workspace: every
//! file confined, allowed, read by the model (stale-write guard) and every
//! hunk matched before anything is asked; applied all-or-nothing, rolling back
//! the files already written if a later one fails. Hidden credentials are
//! guarded hunk by hunk (in `patch::apply`), so a file holding one stays
//! patchable elsewhere. A file mixing CRLF and LF keeps the endings of the
//! lines the patch does not change. What the patch said wrongly but could still be read
//! exactly (its `@@` counts, trailing whitespace) comes back as `warnings`.

use crate::diff::FileDiff;
use crate::tools::ToolOutput;
use crate::tools::edits::edit::{PreparedEdit, apply_edit, is_crlf, to_lf};
use crate::tools::edits::patch::{self, FilePatch};
use crate::tools::reading::files::MAX_FILE_BYTES;
use crate::tools::reading::text::{check_allowed, check_content, decode_text};
use crate::tools::workspace::{PathError, RelPath, Workspace};
use serde_json::json;

/// A file the patch deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedDelete {
    pub path: RelPath,
    pub old: String,
    pub diff: FileDiff,
}

/// A whole patch, checked and ready to approve.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreparedPatch {
    pub edits: Vec<PreparedEdit>,
    pub deletes: Vec<PreparedDelete>,
    /// What was read differently from what the patch said; shown to the model.
    pub warnings: Vec<String>,
}

impl PreparedPatch {
    /// All diffs, edits first, as one multi-file diff.
    pub fn diffs(&self) -> Vec<FileDiff> {
        self.edits
            .iter()
            .map(|e| e.diff.clone())
            .chain(self.deletes.iter().map(|d| d.diff.clone()))
            .collect()
    }
}

pub fn prepare_patch(ws: &Workspace, text: &str) -> Result<PreparedPatch, PathError> {
    let files =
        patch::parse(text).map_err(|e| PathError(format!("the patch cannot be read: {e}")))?;
    let mut prepared = PreparedPatch {
        edits: Vec::new(),
        deletes: Vec::new(),
        warnings: Vec::new(),
    };
    let mut seen = Vec::new();
    for file in &files {
        if let (Some(old), Some(new)) = (&file.old_path, &file.new_path)
            && old != new
        {
            return Err(PathError(format!(
                "renaming {old} to {new} is not supported; create the new file and delete the old one"
            )));
        }
        let rel = Workspace::check(file.path())?;
        check_allowed(ws, &rel)?;
        if seen.contains(&rel) {
            return Err(PathError(format!(
                "{} appears twice in the patch",
                rel.display()
            )));
        }
        seen.push(rel.clone());
        prepared.warnings.extend(file.warnings.iter().cloned());
        let current = current_text(ws, &rel)?;
        match (&file.old_path, &file.new_path, current) {
            (None, _, Some(_)) => {
                return Err(PathError(format!(
                    "{} already exists; patch it with `--- a/{0}` instead of `--- /dev/null`",
                    rel.display()
                )));
            }
            (Some(_), _, None) => {
                return Err(PathError(format!(
                    "{} does not exist; create it with `--- /dev/null`",
                    rel.display()
                )));
            }
            (None, _, None) => {
                ws.guard().check(&rel, None)?;
                let content = apply_one("", file, &mut prepared.warnings, None)?;
                prepared.edits.push(prepare_edit(rel, None, content)?);
            }
            (Some(_), Some(_), Some(current)) => {
                ws.guard().check(&rel, Some(current.as_bytes()))?;
                // A CRLF file is patched in its LF form; a file mixing both
                // as it is, its `\r`s matching as trailing whitespace.
                let crlf = is_crlf(&current);
                let base = if crlf {
                    to_lf(&current)
                } else {
                    current.as_str().into()
                };
                let seen = Some((ws, &rel, current.as_bytes()));
                let mut content = apply_one(&base, file, &mut prepared.warnings, seen)?;
                if crlf {
                    content = content.replace('\n', "\r\n");
                }
                prepared
                    .edits
                    .push(prepare_edit(rel, Some(current), content)?);
            }
            (Some(_), None, Some(current)) => {
                ws.guard().check(&rel, Some(current.as_bytes()))?;
                let seen = Some((ws, &rel, current.as_bytes()));
                let rest = apply_one(&to_lf(&current), file, &mut prepared.warnings, seen)?;
                if !rest.trim().is_empty() {
                    return Err(PathError(format!(
                        "the hunks deleting {} must remove every line of it",
                        rel.display()
                    )));
                }
                let diff = FileDiff::compute(&rel.display(), Some(&to_lf(&current)), "");
                prepared.deletes.push(PreparedDelete {
                    path: rel,
                    old: current,
                    diff,
                });
            }
        }
    }
    Ok(prepared)
}

/// The file's patched text. With `seen` (an existing file), every hunk must
/// lie inside lines the model read (an insertion: next to one).
fn apply_one(
    content: &str,
    file: &FilePatch,
    warnings: &mut Vec<String>,
    seen: Option<(&Workspace, &RelPath, &[u8])>,
) -> Result<String, PathError> {
    let applied = patch::apply_checked(content, file).map_err(PathError)?;
    if let Some((ws, rel, current)) = seen {
        for span in &applied.old_spans {
            let lines = if span.is_empty() {
                let line = span.start.max(1);
                line..=line
            } else {
                (span.start + 1)..=span.end
            };
            ws.guard().check_lines(rel, current, lines)?;
        }
    }
    warnings.extend(applied.warnings);
    Ok(applied.text)
}

/// An edit of a file whose content the guard and the hunks already checked.
pub(in crate::tools) fn prepare_edit(
    path: RelPath,
    old: Option<String>,
    new: String,
) -> Result<PreparedEdit, PathError> {
    check_content(&path, &new)?;
    if new.len() as u64 > MAX_FILE_BYTES {
        return Err(PathError(format!(
            "{} would be {} bytes, over the {MAX_FILE_BYTES}-byte limit",
            path.display(),
            new.len()
        )));
    }
    let diff = FileDiff::compute(
        &path.display(),
        old.as_deref().map(to_lf).as_deref(),
        &to_lf(&new),
    );
    Ok(PreparedEdit {
        path,
        old,
        new,
        diff,
    })
}

fn current_text(ws: &Workspace, rel: &RelPath) -> Result<Option<String>, PathError> {
    match ws.read_bytes(rel, MAX_FILE_BYTES)? {
        None => Ok(None),
        Some(bytes) => decode_text(rel, bytes).map(Some),
    }
}

/// Write an approved patch: all files or none.
pub fn apply_patch(ws: &Workspace, patch: &PreparedPatch) -> ToolOutput {
    let mut written: Vec<&PreparedEdit> = Vec::new();
    for edit in &patch.edits {
        let output = apply_edit(ws, edit);
        if !output.success {
            rollback(ws, &written, &[]);
            return ToolOutput::error(format!(
                "the patch was not applied (all or nothing; files already written were restored): {}",
                output.body["error"].as_str().unwrap_or("write failed")
            ));
        }
        written.push(edit);
    }
    let mut deleted: Vec<&PreparedDelete> = Vec::new();
    for delete in &patch.deletes {
        let still = ws.read_bytes(&delete.path, MAX_FILE_BYTES).ok().flatten();
        let result = if still.as_deref() != Some(delete.old.as_bytes()) {
            Err(PathError(format!(
                "{} changed on disk while the patch waited for approval",
                delete.path.display()
            )))
        } else {
            ws.remove_file(&delete.path)
        };
        if let Err(e) = result {
            rollback(ws, &written, &deleted);
            return ToolOutput::error(format!(
                "the patch was not applied (all or nothing; files already written were restored): {}",
                e.0
            ));
        }
        ws.guard().forget(&delete.path);
        deleted.push(delete);
    }
    let files: Vec<_> = patch
        .diffs()
        .iter()
        .map(|d| json!({"path": d.path, "added": d.added, "removed": d.removed}))
        .collect();
    let (added, removed) = patch
        .diffs()
        .iter()
        .fold((0, 0), |(a, r), d| (a + d.added, r + d.removed));
    let mut body = json!({"files": files, "deleted": patch.deletes.iter().map(|d| d.path.display()).collect::<Vec<_>>()});
    if !patch.warnings.is_empty() {
        body["warnings"] = json!(patch.warnings);
    }
    ToolOutput::ok(
        format!("{} files +{added} \u{2212}{removed}", files.len()),
        body,
    )
}

/// Put back what an unfinished patch wrote or deleted.
fn rollback(ws: &Workspace, written: &[&PreparedEdit], deleted: &[&PreparedDelete]) {
    for edit in written.iter().rev() {
        let _ = match &edit.old {
            Some(old) => ws.write_atomic(&edit.path, old.as_bytes()).map(|()| {
                ws.guard().remember(&edit.path, old.as_bytes());
            }),
            None => ws
                .remove_file(&edit.path)
                .map(|()| ws.guard().forget(&edit.path)),
        };
    }
    for delete in deleted {
        if ws.write_atomic(&delete.path, delete.old.as_bytes()).is_ok() {
            ws.guard().remember(&delete.path, delete.old.as_bytes());
        }
    }
}
