//! Edits (`write_file`, `replace_text`), split into a side-effect-free
//! *prepare* step that computes the new content and its diff, and an *apply*
//! step run only after approval. Both steps ask the stale-write guard: prepare
//! so the user is never asked to approve a doomed write, apply because the
//! file may change while the approval prompt is open. CRLF files are matched
//! with `\n` and written back with CRLF; a `replace_text` keeps the presence
//! or absence of the final newline. No edit may touch a redacted value. A
//! file read only in part is edited only inside the lines that were read
//! (see [`crate::tools::workspace::guard`]).

use crate::diff::FileDiff;
use crate::tools::ToolOutput;
use crate::tools::reading::text::{
    MAX_FILE_BYTES, check_allowed, check_content, read_text, to_crlf,
};
pub use crate::tools::reading::text::{is_crlf, to_lf};
use crate::tools::redact::{MARKER, redact, touches};
use crate::tools::workspace::{PathError, RelPath, Workspace};
use serde_json::json;
use std::borrow::Cow;

/// An edit computed but not yet written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedEdit {
    pub path: RelPath,
    /// Current content on disk; `None` when the file will be created.
    pub old: Option<String>,
    /// The content that will be written, line endings included.
    pub new: String,
    /// The change as shown for approval (line endings aside).
    pub diff: FileDiff,
}

/// The current content of a file the model is about to edit, after the guard
/// agreed it is what the model last saw.
fn current_for_edit(ws: &Workspace, rel: &RelPath) -> Result<Option<String>, PathError> {
    let current = read_text(ws, rel)?;
    ws.guard()
        .check(rel, current.as_deref().map(str::as_bytes))?;
    Ok(current)
}

/// The 1-based lines of `text` that the bytes `start..end` lie on. Counted
/// on bytes: `end - 1` may fall inside a multi-byte character.
pub(in crate::tools) fn lines_of(
    text: &str,
    start: usize,
    end: usize,
) -> std::ops::RangeInclusive<usize> {
    let bytes = text.as_bytes();
    let newlines = |upto: usize| {
        let upto = upto.min(bytes.len());
        bytes[..upto].iter().filter(|&&b| b == b'\n').count()
    };
    let first = newlines(start) + 1;
    let last = newlines(end.max(start + 1) - 1) + 1;
    first..=last.max(first)
}

pub fn prepare_write(ws: &Workspace, path: &str, content: &str) -> Result<PreparedEdit, PathError> {
    let rel = Workspace::check(path)?;
    check_allowed(ws, &rel)?;
    check_content(&rel, content)?;
    check_size(content.len(), "the content")?;
    let old = current_for_edit(ws, &rel)?;
    ws.guard()
        .check_whole(&rel, old.as_deref().map(str::as_bytes))?;
    let mut new = content.to_string();
    if let Some(current) = &old {
        let visible = redact(&to_lf(current));
        if !visible.hidden.is_empty() {
            return Err(PathError(format!(
                "{} holds {} value(s) hidden from you as credentials, which write_file would lose; \
                 change the visible parts with replace_text instead",
                rel.display(),
                visible.hidden.len()
            )));
        }
        if is_crlf(current) {
            new = to_crlf(&to_lf(content));
            check_size(new.len(), "the content with CRLF line endings")?;
        }
    }
    check_markers(old.as_deref().unwrap_or(""), &new)?;
    Ok(edit(rel, old, new))
}

pub fn prepare_replace(
    ws: &Workspace,
    path: &str,
    old_text: &str,
    new_text: &str,
) -> Result<PreparedEdit, PathError> {
    let rel = Workspace::check(path)?;
    check_allowed(ws, &rel)?;
    let current = current_for_edit(ws, &rel)?.ok_or_else(|| {
        PathError(format!(
            "{} does not exist; use write_file to create it",
            rel.display()
        ))
    })?;
    if old_text.is_empty() {
        return Err(PathError(
            "`old` is empty; give the exact text to replace, with enough surrounding lines to be unique".into(),
        ));
    }
    // A CRLF file is edited in its `\n` form, as read_file showed it.
    let crlf = is_crlf(&current);
    let (view, old_text, new_text) = if crlf {
        (to_lf(&current), to_lf(old_text), to_lf(new_text))
    } else {
        (
            Cow::Borrowed(current.as_str()),
            Cow::Borrowed(old_text),
            Cow::Borrowed(new_text),
        )
    };
    let found: Vec<usize> = view.match_indices(&*old_text).map(|(i, _)| i).collect();
    let at = match found[..] {
        [at] => at,
        [] if old_text.contains(MARKER) => {
            return Err(PathError(format!(
                "`old` contains {MARKER}, which stands for a value hidden from you in {}; \
                 such values cannot be matched or edited. Choose `old` from lines without it",
                rel.display()
            )));
        }
        [] => {
            return Err(PathError(format!(
                "`old` was found 0 times in {}; read the file again and copy the exact text, including whitespace",
                rel.display()
            )));
        }
        _ => {
            return Err(PathError(format!(
                "`old` was found {} times in {}; it must match exactly once, so include more surrounding context",
                found.len(),
                rel.display()
            )));
        }
    };
    let end = at + old_text.len();
    ws.guard()
        .check_lines(&rel, current.as_bytes(), lines_of(&view, at, end))?;
    // Touching a hidden value at either end would change it too (`KEY=` -> `KEY=x`).
    if touches(&redact(&view).hidden, &(at..end)) {
        return Err(PathError(format!(
            "`old` touches a value of {} hidden from you as a credential; it cannot be edited \
             through the tools. Choose `old` from other lines",
            rel.display()
        )));
    }
    let mut updated = format!("{}{}{}", &view[..at], new_text, &view[end..]);
    // The file keeps its final newline, or its lack of one.
    if view.ends_with('\n') && !updated.is_empty() && !updated.ends_with('\n') {
        updated.push('\n');
    } else if !view.ends_with('\n') && updated.ends_with('\n') {
        updated.pop();
    }
    check_markers(&view, &updated)?;
    check_content(&rel, &updated)?;
    let new = if crlf { to_crlf(&updated) } else { updated };
    check_size(new.len(), "the result")?;
    Ok(edit(rel, Some(current), new))
}

fn check_size(len: usize, what: &str) -> Result<(), PathError> {
    if len as u64 > MAX_FILE_BYTES {
        return Err(PathError(format!(
            "{what} would be {len} bytes, over the {MAX_FILE_BYTES}-byte limit"
        )));
    }
    Ok(())
}

/// Redaction placeholders are never written into a file as if they were content.
fn check_markers(before: &str, after: &str) -> Result<(), PathError> {
    if after.matches(MARKER).count() > before.matches(MARKER).count() {
        return Err(PathError(format!(
            "the new content contains {MARKER}, a placeholder for a value hidden from you; \
             write real content, and leave lines with hidden values as they are"
        )));
    }
    Ok(())
}

fn edit(path: RelPath, old: Option<String>, new: String) -> PreparedEdit {
    let shown_old = old.as_deref().map(to_lf);
    let diff = FileDiff::compute(&path.display(), shown_old.as_deref(), &to_lf(&new));
    PreparedEdit {
        path,
        old,
        new,
        diff,
    }
}

/// Write an approved edit, if the file still holds what the edit was computed
/// from and what the model last saw. (A change in the instant between this
/// check and the rename cannot be detected without locks editors don't take.)
pub fn apply_edit(ws: &Workspace, edit: &PreparedEdit) -> ToolOutput {
    let path = edit.path.display();
    let current = match ws.read_bytes(&edit.path, MAX_FILE_BYTES) {
        Ok(current) => current,
        Err(e) => return ToolOutput::error(format!("writing failed, nothing changed: {}", e.0)),
    };
    if current.as_deref() != edit.old.as_deref().map(str::as_bytes) {
        return ToolOutput::error(format!(
            "{path} changed on disk while this edit waited for approval (someone edited it); \
             nothing was written, and their edit is kept. Call read_file on {path} again and redo your edit"
        ));
    }
    if let Err(e) = ws.guard().check(&edit.path, current.as_deref()) {
        return ToolOutput::error(e.0);
    }
    match ws.write_atomic(&edit.path, edit.new.as_bytes()) {
        Ok(()) => {
            ws.guard()
                .remember_written(&edit.path, edit.old.as_deref(), &edit.new);
            ToolOutput::ok(
                edit.diff.stat(),
                json!({
                    "path": path,
                    "created": edit.old.is_none(),
                    "added_lines": edit.diff.added,
                    "removed_lines": edit.diff.removed,
                }),
            )
        }
        Err(e) => ToolOutput::error(format!("writing failed, nothing changed: {}", e.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_a_span_ending_in_a_multi_byte_character() {
        let text = "a\ncafé\nz\n";
        let start = text.find("café").unwrap();
        let end = start + "café".len();
        assert_eq!(lines_of(text, start, end), 2..=2);
        let emoji = "x\n🙂";
        assert_eq!(lines_of(emoji, 2, emoji.len()), 2..=2);
    }
}
