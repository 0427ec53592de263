//! The input's history kept per workspace, in `.stepwise/history.jsonl`
//! (one JSON string a line, oldest first, the last [`MAX_ENTRIES`]): read
//! when the UI starts, so ↑ and Ctrl+R reach earlier sessions' tasks, and
//! written when it closes.
//!
//! What must stay true: the file is opened only through the state folder's
//! capability (`state_dir`); every entry is scrubbed before it is written
//! (`tools::scrub`: the key's value and credential-looking values), so a
//! task that quoted a secret leaves none on disk; a file that is too large
//! or not what this writes is read as far as it makes sense, never panics.

use crate::state_dir::StateDir;
use std::io::Read;
use std::path::Path;

/// The file's name inside `.stepwise/`.
pub const FILE: &str = "history.jsonl";
/// Entries kept (the newest).
pub const MAX_ENTRIES: usize = 500;
/// The most read of the file.
const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// The workspace's history, oldest first (empty when there is none).
pub fn load(workspace: &Path) -> Vec<String> {
    let Ok(state) = StateDir::open(workspace) else {
        return Vec::new();
    };
    let Ok(file) = state.dir().open(FILE) else {
        return Vec::new();
    };
    let mut text = String::new();
    if file.take(MAX_BYTES).read_to_string(&mut text).is_err() {
        return Vec::new();
    }
    let entries: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<String>(l).ok())
        .filter(|e| !e.trim().is_empty())
        .collect();
    let skip = entries.len().saturating_sub(MAX_ENTRIES);
    entries.into_iter().skip(skip).collect()
}

/// Write `entries` (the last `MAX_ENTRIES`, each scrubbed) as the
/// workspace's history.
pub fn save(workspace: &Path, entries: &[String]) -> Result<(), String> {
    let state = StateDir::open(workspace)?;
    let skip = entries.len().saturating_sub(MAX_ENTRIES);
    let mut text = String::new();
    for entry in &entries[skip..] {
        let clean = crate::tools::scrub::text(entry);
        if let Ok(line) = serde_json::to_string(clean.as_ref()) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    let temp = format!("{FILE}.tmp");
    state
        .dir()
        .write(&temp, text)
        .and_then(|()| state.dir().rename(&temp, state.dir(), FILE))
        .map_err(|e| format!("cannot write {}/{FILE}: {e}", state.path().display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_with_line_breaks_and_only_the_newest_are_kept() {
        let ws = tempfile::tempdir().unwrap();
        let many: Vec<String> = (0..MAX_ENTRIES + 3)
            .map(|i| format!("task {i}\nline two"))
            .collect();
        save(ws.path(), &many).unwrap();
        let back = load(ws.path());
        assert_eq!(back.len(), MAX_ENTRIES);
        assert_eq!(back.first().map(String::as_str), Some("task 3\nline two"));
        assert_eq!(back.last(), many.last());
    }

    #[test]
    fn secrets_never_reach_the_file() {
        let ws = tempfile::tempdir().unwrap();
        let task = "use key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 please".to_string();
        save(ws.path(), &[task]).unwrap();
        let on_disk = std::fs::read_to_string(ws.path().join(".stepwise").join(FILE)).unwrap();
        assert!(
            !on_disk.contains("sk-proj-abcdefghijklmnopqrstuvwxyz"),
            "{on_disk}"
        );
        assert!(on_disk.contains("please"), "{on_disk}");
    }

    #[test]
    fn a_broken_file_reads_as_what_makes_sense() {
        let ws = tempfile::tempdir().unwrap();
        save(ws.path(), &[]).unwrap();
        let path = ws.path().join(".stepwise").join(FILE);
        std::fs::write(&path, "\"ok\"\nnot json\n{\"a\":1}\n\"also ok\"\n").unwrap();
        assert_eq!(load(ws.path()), ["ok", "also ok"]);
    }
}
