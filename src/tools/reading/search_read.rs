//! How `search_text`'s first pass reads one file: into a buffer each
//! thread reuses, through the handle of the file's folder, to its end or to
//! the first block that holds a NUL byte, counting the lines that match.
//!
//! What must stay true: whether a file is a regular file with one name is
//! known before anything but "text, no match" is reported, so a multiply
//! linked file always reads as text without a match, whatever it holds.

use crate::tools::reading::text::MAX_SCAN_BYTES;
use crate::tools::workspace::{ScanCheck, Workspace};
use cap_std::fs::{Dir, File};
use regex::Regex;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Bytes read at a time; a NUL byte in one stops the read (the file is binary).
const BLOCK: usize = 64 * 1024;

/// What one thread keeps from file to file: its read buffer, and the
/// folder it opened last (a walk finds the files of one folder together).
#[derive(Default)]
pub struct Reader {
    buffer: Vec<u8>,
    /// The folder (relative to the root) and its handle, if it opened.
    folder: Option<(PathBuf, Option<Dir>)>,
}

/// What the first pass makes of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Looked {
    /// A text file, with this many matching lines.
    Searched(usize),
    /// Binary, not UTF-8, too big, unreadable or not a regular file.
    Skipped,
}

impl Reader {
    /// Read a file the walk found (`relative` to the root) into the buffer
    /// and count its matching lines: it is read to the end (a short read
    /// is the end of a regular file, so a small file costs one read), or
    /// to the first block that holds a NUL byte.
    ///
    /// Whether it is a regular file with one name is asked only where the
    /// answer matters: before a second block is read (a big file) and
    /// before anything but "text, no match" is reported. So a multiply
    /// linked file always reads as text without a match, whatever it holds.
    pub fn count(&mut self, ws: &Workspace, relative: &Path, regex: &Regex) -> Looked {
        let Some(mut file) = self.open(ws, relative) else {
            return Looked::Skipped;
        };
        let mut checked = None;
        let mut filled = 0;
        loop {
            if self.buffer.len() < filled + BLOCK {
                self.buffer.resize(filled + BLOCK, 0);
            }
            let n = match file.read(&mut self.buffer[filled..filled + BLOCK]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return unless_linked(&file, checked, Looked::Skipped),
            };
            if memchr::memchr(0, &self.buffer[filled..filled + n]).is_some() {
                return unless_linked(&file, checked, Looked::Skipped);
            }
            filled += n;
            if n < BLOCK {
                break;
            }
            if checked.is_none() {
                let what = Workspace::scan_check(&file);
                match what {
                    ScanCheck::Single(size) if size <= MAX_SCAN_BYTES => {}
                    ScanCheck::Linked => return Looked::Searched(0),
                    _ => return Looked::Skipped,
                }
                checked = Some(what);
            }
            if filled as u64 > MAX_SCAN_BYTES {
                return Looked::Skipped;
            }
        }
        match std::str::from_utf8(&self.buffer[..filled]) {
            Ok(text) => match count_lines(regex, text) {
                0 => Looked::Searched(0),
                n => unless_linked(&file, checked, Looked::Searched(n)),
            },
            Err(_) => unless_linked(&file, checked, Looked::Skipped),
        }
    }

    /// Open the file through the handle of its folder, kept for the next
    /// file of the same folder.
    fn open(&mut self, ws: &Workspace, relative: &Path) -> Option<File> {
        let parent = relative.parent().unwrap_or(Path::new(""));
        let name = Path::new(relative.file_name()?);
        if self.folder.as_ref().is_none_or(|(p, _)| p != parent) {
            self.folder = Some((parent.to_path_buf(), ws.open_folder_for_scan(parent)));
        }
        let folder = self.folder.as_ref().and_then(|(_, dir)| dir.as_ref())?;
        Workspace::open_for_scan(folder, name)
    }
}

/// `outcome`, for a regular file with one name; a multiply linked file
/// reads as text without a match (the same whatever it holds), anything
/// else as skipped.
fn unless_linked(file: &File, checked: Option<ScanCheck>, outcome: Looked) -> Looked {
    match checked.unwrap_or_else(|| Workspace::scan_check(file)) {
        ScanCheck::Single(_) => outcome,
        ScanCheck::Linked => Looked::Searched(0),
        ScanCheck::Other => Looked::Skipped,
    }
}

/// How many lines of `text` hold a match.
pub fn count_lines(regex: &Regex, text: &str) -> usize {
    let mut count = 0;
    let mut at = 0;
    while at <= text.len() {
        let Some(m) = regex.find_at(text, at) else {
            break;
        };
        count += 1;
        // Go on from the next line: one count per line.
        match memchr::memchr(b'\n', &text.as_bytes()[m.start()..]) {
            Some(nl) => at = m.start() + nl + 1,
            None => break,
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::RegexBuilder;

    #[test]
    fn counts_matching_lines_not_matches() {
        let re = Regex::new("a").unwrap();
        assert_eq!(count_lines(&re, "aaa\nb\na"), 2);
        assert_eq!(count_lines(&re, ""), 0);
        let re = RegexBuilder::new("^$").multi_line(true).build().unwrap();
        assert_eq!(
            count_lines(&re, "x\n\ny\n"),
            2,
            "the empty line and the end"
        );
    }
}
