//! The file tools: `list_files` and `read_file` (which records what the model
//! saw for the stale-write guard, shows CRLF files with `\n`, and redacts
//! credentials); the edits live in [`super::edit`] and are re-exported here.

use super::ToolOutput;
use super::redact::{MARKER, redact};
use super::text::{is_crlf, read_text, to_lf};
use super::workspace::{PRIVATE_DIR, PathError, Workspace};
use serde_json::json;

pub use super::edit::{PreparedEdit, apply_edit, prepare_replace, prepare_write};
pub use super::text::{ALLOWED_SUFFIXES, MAX_FILE_BYTES, check_text_file};

/// Most entries `list_files` returns.
pub const MAX_LIST_ENTRIES: usize = 200;
/// Folders never listed nor walked into.
pub const SKIPPED_DIRS: [&str; 8] = [
    PRIVATE_DIR,
    ".git",
    ".idea",
    ".vscode",
    "__pycache__",
    ".pytest_cache",
    "node_modules",
    "target",
];

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
    // The folder was opened through the capability, so its real path lies
    // inside the root (and outside `.stepwise/`); the walk never follows symlinks.
    let start = ws.real_dir(&rel)?;
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
        let Some(text) = read_text(ws, &rel)? else {
            ws.guard().forget(&rel);
            return Err(PathError(format!(
                "{} does not exist; use list_files to see what exists",
                rel.display()
            )));
        };
        ws.guard().remember(&rel, text.as_bytes());
        let crlf = is_crlf(&text);
        let shown = redact(&to_lf(&text));
        let lines = shown.text.lines().count();
        let mut summary = format!("{lines} lines");
        let mut payload = json!({"path": rel.display(), "content": shown.text});
        if crlf {
            payload["line_endings"] = json!(
                "CRLF; shown here with \\n, which you should use too: edits keep the file's CRLF line endings"
            );
        }
        if !shown.hidden.is_empty() {
            let n = shown.hidden.len();
            summary.push_str(&format!(", {n} redacted"));
            payload["redacted"] = json!(format!(
                "{n} value(s) that look like credentials are shown as {MARKER}; \
                 they cannot be read, and edits may not touch them"
            ));
        }
        Ok::<_, PathError>(ToolOutput::ok(summary, payload))
    })();
    result.unwrap_or_else(|e| ToolOutput::error(e.0))
}
