//! The file tools: `list_files`, `read_file`, and edits (`write_file`,
//! `replace_text`) split into a side-effect-free *prepare* step that computes
//! the new content and its diff, and an *apply* step run only after approval.

use super::ToolOutput;
use super::workspace::{PathError, RelPath, Workspace};
use crate::diff::FileDiff;
use serde_json::json;

/// Largest file `read_file` returns and `write_file` writes.
pub const MAX_FILE_BYTES: u64 = 100_000;
/// Most entries `list_files` returns.
pub const MAX_LIST_ENTRIES: usize = 200;
/// Folders never listed nor walked into.
pub const SKIPPED_DIRS: [&str; 7] = [
    ".git",
    ".idea",
    ".vscode",
    "__pycache__",
    ".pytest_cache",
    "node_modules",
    "target",
];
/// File suffixes the model may read and write.
pub const ALLOWED_SUFFIXES: [&str; 11] = [
    ".py", ".json", ".toml", ".yaml", ".yml", ".md", ".txt", ".html", ".css", ".js", ".ts",
];

/// Suffix allowlist, and never `.env` files whatever their suffix.
pub fn check_text_file(rel: &RelPath) -> Result<(), PathError> {
    let name = rel.file_name().unwrap_or("");
    if name.starts_with(".env") {
        return Err(PathError(format!(
            "{} may hold secrets; .env files are never readable or writable",
            rel.display()
        )));
    }
    let lower = name.to_ascii_lowercase();
    if !ALLOWED_SUFFIXES.iter().any(|s| lower.ends_with(s)) {
        return Err(PathError(format!(
            "{} is not an allowed text file; allowed suffixes: {}",
            rel.display(),
            ALLOWED_SUFFIXES.join(" ")
        )));
    }
    Ok(())
}

pub fn list_files(ws: &Workspace, path: &str) -> ToolOutput {
    match list(ws, path) {
        Ok(out) => out,
        Err(e) => ToolOutput::error(e.0),
    }
}

fn list(ws: &Workspace, path: &str) -> Result<ToolOutput, PathError> {
    let rel = Workspace::check(path)?;
    match ws.metadata(&rel)? {
        None => {
            return Err(PathError(format!(
                "{} does not exist; use list_files with path \".\" to see the workspace",
                rel.display()
            )));
        }
        Some(m) if !m.is_dir() => {
            return Err(PathError(format!(
                "{} is a file, not a folder; use read_file to read it",
                rel.display()
            )));
        }
        Some(_) => {}
    }
    // The folder was opened through the capability above, so it lies inside the
    // root; the walk never follows symlinks.
    let start = ws.root().join(rel.as_path());
    let walker = ignore::WalkBuilder::new(&start)
        .hidden(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| {
            !(e.file_type().is_some_and(|t| t.is_dir())
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| SKIPPED_DIRS.contains(&n)))
        })
        .build();
    let mut files = Vec::new();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if let Ok(relative) = entry.path().strip_prefix(ws.root()) {
            files.push(relative.to_string_lossy().into_owned());
        }
    }
    files.sort();
    let total = files.len();
    let truncated = total > MAX_LIST_ENTRIES;
    files.truncate(MAX_LIST_ENTRIES);
    let summary = if truncated {
        format!("{MAX_LIST_ENTRIES} of {total} files")
    } else if total == 1 {
        "1 file".into()
    } else {
        format!("{total} files")
    };
    let mut payload = json!({"path": rel.display(), "files": files, "truncated": truncated});
    if truncated {
        payload["note"] = json!(format!(
            "showing the first {MAX_LIST_ENTRIES} of {total} files; list a subfolder to see more"
        ));
    }
    Ok(ToolOutput::ok(summary, payload))
}

pub fn read_file(ws: &Workspace, path: &str) -> ToolOutput {
    let result = (|| {
        let rel = Workspace::check(path)?;
        check_text_file(&rel)?;
        let text = read_text(ws, &rel)?.ok_or_else(|| {
            PathError(format!(
                "{} does not exist; use list_files to see what exists",
                rel.display()
            ))
        })?;
        let lines = text.lines().count();
        Ok::<_, PathError>(ToolOutput::ok(
            format!("{lines} lines"),
            json!({"path": rel.display(), "content": text}),
        ))
    })();
    result.unwrap_or_else(|e| ToolOutput::error(e.0))
}

/// Current UTF-8 content, `None` when the file does not exist.
fn read_text(ws: &Workspace, rel: &RelPath) -> Result<Option<String>, PathError> {
    let Some(bytes) = ws.read_bytes(rel, MAX_FILE_BYTES)? else {
        return Ok(None);
    };
    String::from_utf8(bytes).map(Some).map_err(|_| {
        PathError(format!(
            "{} is not UTF-8 text; only text files can be read or edited",
            rel.display()
        ))
    })
}

/// An edit computed but not yet written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedEdit {
    pub path: RelPath,
    /// Current content; `None` when the file will be created.
    pub old: Option<String>,
    pub new: String,
    pub diff: FileDiff,
}

pub fn prepare_write(ws: &Workspace, path: &str, content: &str) -> Result<PreparedEdit, PathError> {
    let rel = Workspace::check(path)?;
    check_text_file(&rel)?;
    if content.len() as u64 > MAX_FILE_BYTES {
        return Err(PathError(format!(
            "the content is {} bytes, over the {MAX_FILE_BYTES}-byte limit",
            content.len()
        )));
    }
    let old = read_text(ws, &rel)?;
    Ok(edit(rel, old, content.to_string()))
}

pub fn prepare_replace(
    ws: &Workspace,
    path: &str,
    old_text: &str,
    new_text: &str,
) -> Result<PreparedEdit, PathError> {
    let rel = Workspace::check(path)?;
    check_text_file(&rel)?;
    let current = read_text(ws, &rel)?.ok_or_else(|| {
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
    let count = current.matches(old_text).count();
    match count {
        0 => Err(PathError(format!(
            "`old` was found 0 times in {}; read the file again and copy the exact text, including whitespace",
            rel.display()
        ))),
        1 => {
            let updated = current.replacen(old_text, new_text, 1);
            if updated.len() as u64 > MAX_FILE_BYTES {
                return Err(PathError(format!(
                    "the result would be {} bytes, over the {MAX_FILE_BYTES}-byte limit",
                    updated.len()
                )));
            }
            Ok(edit(rel, Some(current), updated))
        }
        n => Err(PathError(format!(
            "`old` was found {n} times in {}; it must match exactly once, so include more surrounding context",
            rel.display()
        ))),
    }
}

fn edit(path: RelPath, old: Option<String>, new: String) -> PreparedEdit {
    let diff = FileDiff::compute(&path.display(), old.as_deref(), &new);
    PreparedEdit {
        path,
        old,
        new,
        diff,
    }
}

/// Write an approved edit.
pub fn apply_edit(ws: &Workspace, edit: &PreparedEdit) -> ToolOutput {
    match ws.write_atomic(&edit.path, edit.new.as_bytes()) {
        Ok(()) => ToolOutput::ok(
            edit.diff.stat(),
            json!({
                "path": edit.path.display(),
                "created": edit.old.is_none(),
                "added_lines": edit.diff.added,
                "removed_lines": edit.diff.removed,
            }),
        ),
        Err(e) => ToolOutput::error(format!("writing failed, nothing changed: {}", e.0)),
    }
}
