//! Text files as the tools see them: which files count (a suffix allowlist,
//! never `.env`), the size limit, reading as UTF-8, and line endings (CRLF
//! files are handled with `\n` and written back with `\r\n`). Both the
//! read tools (`files`) and the edits (`edit`) build on this; it depends on
//! neither.

use super::workspace::{PathError, RelPath, Workspace};
use std::borrow::Cow;

/// Largest file `read_file` returns and `write_file` writes.
pub const MAX_FILE_BYTES: u64 = 100_000;
/// File suffixes the model may read and write.
pub const ALLOWED_SUFFIXES: [&str; 12] = [
    ".py", ".json", ".toml", ".yaml", ".yml", ".md", ".txt", ".html", ".css", ".js", ".ts", ".rs",
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

/// Current UTF-8 content, `None` when the file does not exist.
pub(super) fn read_text(ws: &Workspace, rel: &RelPath) -> Result<Option<String>, PathError> {
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

/// Whether every line break of `text` is `\r\n` (and there is at least one).
pub fn is_crlf(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    crlf > 0 && crlf == text.matches('\n').count()
}

/// `\r\n` line breaks turned into `\n`.
pub fn to_lf(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

pub(super) fn to_crlf(lf_text: &str) -> String {
    lf_text.replace('\n', "\r\n")
}
