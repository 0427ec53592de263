//! The workspaces stepwise has run tests in, one canonical path a line in
//! stepwise's state folder (hidden from every run itself), so that each run
//! covers the other workspaces' `.stepwise/` folders (their transcripts):
//! `HOME`'s allow-list hides the projects inside `HOME`, this list the
//! ones elsewhere (`/srv`, `/work`, a second disk).
//!
//! What must stay true: a workspace is added with one `O_APPEND` write of
//! one line (two stepwise at once cannot interleave lines); the list is
//! read capped ([`MAX_BYTES`]; past half of it, the list is written again
//! with only the workspaces that still exist) and a line that is not an
//! absolute path is ignored; a folder holding the run's workspace is never
//! covered; nothing here ever makes a run fail.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The most of the list read (about 2,000 workspaces).
const MAX_BYTES: u64 = 256 * 1024;

/// The list's file (`None`: no state folder on this system).
fn list_file() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "stepwise")?;
    Some(dirs.state_dir()?.join("workspaces"))
}

/// Add `root` (canonical) to the list if it is not there, and return the
/// `.stepwise` folders of the other workspaces on it that exist.
pub fn others(root: &Path) -> Vec<PathBuf> {
    match list_file() {
        Some(file) => others_in(&file, root),
        None => Vec::new(),
    }
}

fn others_in(file: &Path, root: &Path) -> Vec<PathBuf> {
    let bytes = crate::config::read::regular_bytes(file, MAX_BYTES)
        .ok()
        .flatten()
        .unwrap_or_default();
    let mut listed = false;
    let mut out = Vec::new();
    let mut existing = Vec::new();
    for line in bytes.split(|&b| b == b'\n') {
        let path = Path::new(std::ffi::OsStr::from_bytes(line));
        if !path.is_absolute() {
            continue;
        }
        if path == root {
            listed = true;
            continue;
        }
        if path.is_dir() && !existing.contains(&path) {
            existing.push(path);
        }
        let folder = path.join(".stepwise");
        let covers_root = root.starts_with(&folder);
        if !covers_root && folder.is_dir() && !out.contains(&folder) {
            out.push(folder);
        }
    }
    if root.as_os_str().as_bytes().contains(&b'\n') {
        return out;
    }
    if bytes.len() as u64 > MAX_BYTES / 2 {
        existing.push(root);
        let _ = rewrite(file, &existing);
    } else if !listed {
        let _ = add(file, root);
    }
    out
}

/// Write the list again with only `roots` (atomically).
fn rewrite(file: &Path, roots: &[&Path]) -> std::io::Result<()> {
    let mut text = Vec::new();
    for root in roots {
        text.extend_from_slice(root.as_os_str().as_bytes());
        text.push(b'\n');
    }
    let tmp = file.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, file)
}

fn add(file: &Path, root: &Path) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut line = root.as_os_str().as_bytes().to_vec();
    line.push(b'\n');
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    out.write_all(&line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_workspace_is_listed_once_and_sees_the_others_folders() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state/workspaces");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(a.join(".stepwise")).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        assert!(others_in(&file, &a).is_empty());
        assert!(others_in(&file, &a).is_empty(), "listed once");
        assert_eq!(others_in(&file, &b), [a.join(".stepwise")]);
        assert!(others_in(&file, &a).is_empty(), "b has no .stepwise yet");
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        // A folder holding the workspace is never covered.
        let inner = a.join(".stepwise/demo");
        std::fs::create_dir_all(&inner).unwrap();
        assert!(others_in(&file, &inner).is_empty());
        // A long list keeps only the workspaces that still exist.
        let gone = "/nonexistent/workspace\n".repeat(6000);
        std::fs::write(&file, format!("{gone}{}\n", a.display())).unwrap();
        assert_eq!(others_in(&file, &b), [a.join(".stepwise")]);
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text, format!("{}\n{}\n", a.display(), b.display()));
    }
}
