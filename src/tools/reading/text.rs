//! Text files as the tools see them: any regular file whose content is
//! UTF-8 without NUL bytes, whatever its name (decided by content, never by
//! suffix), unless the deny list refuses it; the size limits; and line
//! endings (CRLF files are handled with `\n` and written back with `\r\n`).
//! Both the read tools (`files`) and the edits (`edit`) build on this; it
//! depends on neither.

use crate::tools::workspace::{PathError, RelPath, Workspace};
use std::borrow::Cow;

/// Largest file `write_file`, `replace_text` and `apply_patch` write (1 MiB).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Most bytes `read_file` returns without a range (256 KiB).
pub const MAX_READ_BYTES: usize = 256 * 1024;
/// Largest file `read_file` and `search_text` look into at all (16 MiB).
pub const MAX_SCAN_BYTES: u64 = 16 * 1024 * 1024;

/// Refuse a path the deny list names (the file's real path is checked
/// again when it is opened).
pub fn check_allowed(ws: &Workspace, rel: &RelPath) -> Result<(), PathError> {
    ws.deny().check(rel)
}

/// `bytes` as text, or why they are not: a NUL byte or invalid UTF-8.
pub fn decode_text(rel: &RelPath, bytes: Vec<u8>) -> Result<String, PathError> {
    if let Some(at) = memchr::memchr(0, &bytes) {
        return Err(PathError(format!(
            "{} is a binary file (it has a NUL byte at offset {at}); only text files can be read or edited",
            rel.display()
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        PathError(format!(
            "{} is not UTF-8 text (invalid byte at offset {}); only text files can be read or edited",
            rel.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Refuse new content that is not text (JSON strings are UTF-8, but may hold NUL).
pub fn check_content(rel: &RelPath, content: &str) -> Result<(), PathError> {
    if content.contains('\0') {
        return Err(PathError(format!(
            "the new content of {} has a NUL byte; only text files can be written",
            rel.display()
        )));
    }
    Ok(())
}

/// Current text content, `None` when the file does not exist.
pub(in crate::tools) fn read_text(
    ws: &Workspace,
    rel: &RelPath,
) -> Result<Option<String>, PathError> {
    let Some(bytes) = ws.read_bytes(rel, MAX_FILE_BYTES)? else {
        return Ok(None);
    };
    decode_text(rel, bytes).map(Some)
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

pub(in crate::tools) fn to_crlf(lf_text: &str) -> String {
    lf_text.replace('\n', "\r\n")
}
