//! The file tools: `list_files` and `read_file` (whole files up to 256 KiB or
//! line ranges of files up to 16 MiB; it records which lines the model saw
//! for the stale-write guard, shows CRLF files with `\n`, and redacts
//! credentials, judging them on the whole file so a range never splits a key
//! block into parts that no longer look like one); the edits live in
//! [`crate::tools::edits::edit`].

use crate::tools::ToolOutput;
use crate::tools::reading::text::{
    MAX_READ_BYTES, MAX_SCAN_BYTES, check_allowed, decode_text, is_crlf, to_lf,
};
use crate::tools::redact::{MARKER, redact, redact_range};
use crate::tools::workspace::{PathError, RelPath, Workspace};
use serde_json::json;

pub use crate::tools::reading::text::{MAX_FILE_BYTES, MAX_READ_BYTES as READ_CAP_BYTES};

pub use crate::tools::reading::list::{MAX_LIST_ENTRIES, list_files, list_files_depth};
pub use crate::tools::reading::walk::SKIPPED_DIRS;

/// Lines `read_file` returns by default when given a range, and at most.
pub const DEFAULT_READ_LINES: usize = 2_000;
pub const MAX_READ_LINES: usize = 5_000;

/// `read_file {path, offset?, limit?}`: the file's exact text (LF line
/// breaks, credentials redacted), all of it up to [`MAX_READ_BYTES`] or the
/// lines asked for, with where it starts and ends.
pub fn read_file_range(
    ws: &Workspace,
    path: &str,
    offset: Option<u64>,
    limit: Option<u64>,
) -> ToolOutput {
    read(ws, path, offset, limit).unwrap_or_else(|e| ToolOutput::error(e.0))
}

/// `read_file {path}`: without a range.
pub fn read_file(ws: &Workspace, path: &str) -> ToolOutput {
    read_file_range(ws, path, None, None)
}

fn read(
    ws: &Workspace,
    path: &str,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<ToolOutput, PathError> {
    let rel = Workspace::check(path)?;
    check_allowed(ws, &rel)?;
    let Some(text) = read_text_scanned(ws, &rel)? else {
        ws.guard().forget(&rel);
        return Err(PathError(format!(
            "{} does not exist; use list_files to see what exists",
            rel.display()
        )));
    };
    let crlf = is_crlf(&text);
    let view = to_lf(&text);
    let starts = line_starts(&view);
    let total = starts.len();
    let window = choose_lines(&rel, &view, &starts, offset, limit)?;
    let (start, end) = (window.start, window.end);
    if window.whole_lines_seen() {
        ws.guard()
            .remember_lines(&rel, text.as_bytes(), start..=end, total);
    } else if end > start {
        ws.guard()
            .remember_lines(&rel, text.as_bytes(), start..=end - 1, total);
    }
    let hidden = redact(&view).hidden;
    let (content, redacted) = redact_range(&view, &hidden, window.bytes.clone());
    let truncated = end < total || window.cut_line;
    let mut summary = if total == 0 {
        "0 lines".to_string()
    } else if start == 1 && !truncated {
        format!("{total} lines")
    } else {
        format!("lines {start}-{end} of {total}")
    };
    let mut payload = json!({
        "path": rel.display(),
        "content": content,
        "start_line": start,
        "end_line": end,
        "total_lines": total,
        "truncated": truncated,
    });
    if window.cut_line {
        payload["note"] = json!(format!(
            "line {end} is longer than {MAX_READ_BYTES} bytes and is shown cut; the file cannot be edited there"
        ));
    } else if end < total {
        payload["note"] = json!(format!(
            "showing lines {start}-{end} of {total}; call read_file with offset {} (and limit up to {MAX_READ_LINES}) to read on",
            end + 1
        ));
    }
    if crlf {
        payload["line_endings"] = json!(
            "CRLF; shown here with \\n, which you should use too: edits keep the file's CRLF line endings"
        );
    }
    if redacted > 0 {
        summary.push_str(&format!(", {redacted} redacted"));
        payload["redacted"] = json!(format!(
            "{redacted} value(s) that look like credentials are shown as {MARKER}; \
             they cannot be read, and edits may not touch them"
        ));
    }
    Ok(ToolOutput::ok(summary, payload))
}

/// The whole text of a file up to [`MAX_SCAN_BYTES`]; `None` when it does not exist.
fn read_text_scanned(ws: &Workspace, rel: &RelPath) -> Result<Option<String>, PathError> {
    match ws.read_bytes(rel, MAX_SCAN_BYTES)? {
        None => Ok(None),
        Some(bytes) => decode_text(rel, bytes).map(Some),
    }
}

/// Byte offset of the start of each line (a final line without `\n` counts).
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    if text.is_empty() {
        return starts;
    }
    starts.push(0);
    starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    if starts.last() == Some(&text.len()) {
        starts.pop();
    }
    starts
}

/// Which lines (1-based, inclusive) and bytes a read shows.
struct Window {
    start: usize,
    end: usize,
    bytes: std::ops::Range<usize>,
    /// A single line longer than the byte cap, shown in part.
    cut_line: bool,
}

impl Window {
    fn whole_lines_seen(&self) -> bool {
        !self.cut_line
    }
}

fn choose_lines(
    rel: &RelPath,
    text: &str,
    starts: &[usize],
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<Window, PathError> {
    let total = starts.len();
    let line_end = |line: usize| starts.get(line).copied().unwrap_or(text.len());
    let start = match offset {
        None => 1,
        Some(0) => {
            return Err(PathError(
                "offset is the 1-based first line to read; 0 is not a line".into(),
            ));
        }
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
    };
    if start > total.max(1) {
        return Err(PathError(format!(
            "offset {start} is past the end of {}, which has {total} lines",
            rel.display()
        )));
    }
    let count = match limit {
        None if offset.is_none() => total,
        None => DEFAULT_READ_LINES,
        Some(n @ 1..=5_000) => n as usize,
        Some(n) => {
            return Err(PathError(format!(
                "limit {n} is out of range; read 1 to {MAX_READ_LINES} lines at a time"
            )));
        }
    };
    if total == 0 {
        return Ok(Window {
            start: 1,
            end: 0,
            bytes: 0..0,
            cut_line: false,
        });
    }
    let from = starts[start - 1];
    let mut end = (start - 1 + count).min(total);
    // Keep within the byte cap: the last whole line that fits, or one line cut.
    if line_end(end) - from > MAX_READ_BYTES {
        let fits = starts[start..end].partition_point(|&s| s - from <= MAX_READ_BYTES);
        end = start - 1 + fits;
        if end < start {
            let mut cut = from + MAX_READ_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            return Ok(Window {
                start,
                end: start,
                bytes: from..cut,
                cut_line: true,
            });
        }
    }
    Ok(Window {
        start,
        end,
        bytes: from..line_end(end),
        cut_line: false,
    })
}
