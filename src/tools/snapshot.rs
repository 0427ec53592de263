//! What a test run did to the workspace: a snapshot of its files (size,
//! modification and status-change times, inode, and a SHA-256 of the
//! content) taken before and after each run, and the files the run created,
//! changed or deleted.
//!
//! Cheap by design: a file whose metadata is unchanged since the previous
//! snapshot is not read again (a process cannot set a file's status-change
//! time back, so restoring the modification time does not hide an edit);
//! only new or changed files are read and hashed.
//!
//! What must stay true: the walk skips what `list_files` skips (hidden and
//! cache folders, `.gitignore`d paths, `SKIPPED_DIRS`) and never follows a
//! symlink; every file is read through the workspace capability; the cost is
//! bounded (files over [`HASH_LIMIT`] are compared by size and time only, at
//! most [`MAX_FILES`] files are looked at, and at most [`KEPT_TEXT_BYTES`] of
//! text is kept so that changes can be shown as diffs and undone).

use super::files::MAX_FILE_BYTES;
use super::workspace::Workspace;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Files larger than this are compared by size and modification time only.
pub const HASH_LIMIT: u64 = 1024 * 1024;
/// Most files a snapshot looks at.
pub const MAX_FILES: usize = 20_000;
/// Most bytes of file text one snapshot keeps (for diffs and undo).
pub const KEPT_TEXT_BYTES: usize = 16 * 1024 * 1024;

/// What `lstat` says about a file: any write changes one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
    inode: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    stamp: Stamp,
    hash: Option<[u8; 32]>,
    /// The content, when it is text small enough to keep.
    text: Option<String>,
}

/// The workspace's files at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    files: BTreeMap<String, Entry>,
    /// False when [`MAX_FILES`] was reached (later files were not looked at).
    pub complete: bool,
    /// When it was taken (seconds since the epoch).
    taken_at: i64,
}

/// File times are coarse: a file changed this close to a snapshot may change
/// again within the same tick, so its metadata is not trusted (as git does).
const RACY_SECS: i64 = 2;

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// How a test run touched a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Touch {
    Created,
    Changed,
    Deleted,
}

/// One file a test run created, changed or deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunChange {
    pub path: String,
    pub change: Touch,
    /// Text before and after, when both sides are known text (for diffs and undo).
    #[serde(skip)]
    pub before: Option<String>,
    #[serde(skip)]
    pub after: Option<String>,
    /// Both sides are known (`None` for an absent side counts as known).
    #[serde(skip)]
    pub contents_known: bool,
}

impl Snapshot {
    /// Look at every file the file tools would see.
    pub fn take(ws: &Workspace) -> Snapshot {
        Self::take_after(ws, None)
    }

    /// Like [`take`](Self::take), reusing what `previous` read of files whose
    /// metadata has not changed since.
    pub fn take_after(ws: &Workspace, previous: Option<&Snapshot>) -> Snapshot {
        // The walk the file tools use, so the snapshot sees what they see.
        let walker = super::walk::walker(ws.root()).build();
        let mut snapshot = Snapshot {
            files: BTreeMap::new(),
            complete: true,
            taken_at: now_secs(),
        };
        let mut kept = 0usize;
        for entry in walker.flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            if snapshot.files.len() >= MAX_FILES {
                snapshot.complete = false;
                break;
            }
            let Some(path) = entry
                .path()
                .strip_prefix(ws.root())
                .ok()
                .and_then(|p| p.to_str())
            else {
                continue;
            };
            let Some(stamp) = entry.metadata().ok().and_then(|m| stamp_of(&m)) else {
                continue;
            };
            let known = previous.and_then(|p| {
                let e = p.files.get(path)?;
                let settled = e.stamp.changed.0 + RACY_SECS < p.taken_at;
                let fits = kept + e.text.as_ref().map_or(0, String::len) <= KEPT_TEXT_BYTES;
                (settled && fits && e.stamp == stamp).then_some(e)
            });
            let found = match known {
                Some(e) => {
                    kept += e.text.as_ref().map_or(0, String::len);
                    Some(e.clone())
                }
                None => look_at(ws, path, stamp, &mut kept),
            };
            if let Some(found) = found {
                snapshot.files.insert(path.to_string(), found);
            }
        }
        snapshot
    }

    /// What changed from `self` (before the run) to `after`.
    pub fn changes_to(&self, after: &Snapshot) -> Vec<RunChange> {
        let mut out = Vec::new();
        for (path, old) in &self.files {
            match after.files.get(path) {
                None => out.push(change(path, Touch::Deleted, Some(old), None)),
                Some(new) if differ(old, new) => {
                    out.push(change(path, Touch::Changed, Some(old), Some(new)))
                }
                Some(_) => {}
            }
        }
        // A file past the limit of an incomplete snapshot is not "created".
        let seen_all = self.complete;
        for (path, new) in &after.files {
            if !self.files.contains_key(path) && seen_all {
                out.push(change(path, Touch::Created, None, Some(new)));
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }
}

fn stamp_of(meta: &std::fs::Metadata) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    meta.is_file().then(|| Stamp {
        size: meta.len(),
        modified: (meta.mtime(), meta.mtime_nsec()),
        changed: (meta.ctime(), meta.ctime_nsec()),
        inode: meta.ino(),
    })
}

/// Read and hash one file through the workspace capability.
fn look_at(ws: &Workspace, path: &str, stamp: Stamp, kept: &mut usize) -> Option<Entry> {
    let rel = Workspace::check(path).ok()?;
    let mut entry = Entry {
        stamp,
        hash: None,
        text: None,
    };
    if stamp.size > HASH_LIMIT {
        return Some(entry);
    }
    let bytes = ws.read_bytes(&rel, HASH_LIMIT).ok()??;
    entry.hash = Some(Sha256::digest(&bytes).into());
    let small = bytes.len() as u64 <= MAX_FILE_BYTES && *kept + bytes.len() <= KEPT_TEXT_BYTES;
    if small
        && !bytes.contains(&0)
        && let Ok(text) = String::from_utf8(bytes)
    {
        *kept += text.len();
        entry.text = Some(text);
    }
    Some(entry)
}

fn differ(old: &Entry, new: &Entry) -> bool {
    // The content decides when both sides were hashed; else the metadata.
    match (old.hash, new.hash) {
        (Some(a), Some(b)) => a != b,
        _ => old.stamp != new.stamp,
    }
}

fn change(path: &str, touch: Touch, old: Option<&Entry>, new: Option<&Entry>) -> RunChange {
    let side = |e: Option<&Entry>| match e {
        None => (None, true),
        Some(e) => (e.text.clone(), e.text.is_some()),
    };
    let (before, before_known) = side(old);
    let (after, after_known) = side(new);
    RunChange {
        path: path.to_string(),
        change: touch,
        before,
        after,
        contents_known: before_known && after_known,
    }
}

/// `created a.txt, changed b.py` for summaries.
pub fn describe(changes: &[RunChange]) -> String {
    let each: Vec<String> = changes
        .iter()
        .map(|c| {
            let verb = match c.change {
                Touch::Created => "created",
                Touch::Changed => "changed",
                Touch::Deleted => "deleted",
            };
            format!("{verb} {}", c.path)
        })
        .collect();
    each.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_changed_and_deleted_files_are_found_even_with_the_same_size_and_time() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("keep.txt"), "same\n").unwrap();
        std::fs::write(p.join("edit.py"), "x = 1\n").unwrap();
        std::fs::write(p.join("gone.md"), "bye\n").unwrap();
        std::fs::create_dir(p.join("__pycache__")).unwrap();
        let ws = Workspace::open(p).unwrap();
        let before = Snapshot::take(&ws);
        let stamp = std::fs::metadata(p.join("edit.py"))
            .unwrap()
            .modified()
            .unwrap();
        std::fs::write(p.join("edit.py"), "x = 2\n").unwrap();
        // Same size, same modification time: the status-change time tells.
        let file = std::fs::File::options()
            .write(true)
            .open(p.join("edit.py"))
            .unwrap();
        file.set_modified(stamp).unwrap();
        std::fs::remove_file(p.join("gone.md")).unwrap();
        std::fs::write(p.join("new.txt"), "hi\n").unwrap();
        std::fs::write(p.join("__pycache__/x.pyc"), "cache").unwrap();
        std::fs::write(p.join(".hidden"), "h").unwrap();
        let changes = before.changes_to(&Snapshot::take(&ws));
        let seen: Vec<(&str, Touch)> = changes
            .iter()
            .map(|c| (c.path.as_str(), c.change))
            .collect();
        assert_eq!(
            seen,
            [
                ("edit.py", Touch::Changed),
                ("gone.md", Touch::Deleted),
                ("new.txt", Touch::Created)
            ]
        );
        assert_eq!(changes[0].before.as_deref(), Some("x = 1\n"));
        assert_eq!(changes[0].after.as_deref(), Some("x = 2\n"));
        assert!(changes.iter().all(|c| c.contents_known));
        assert_eq!(
            describe(&changes),
            "changed edit.py, deleted gone.md, created new.txt"
        );
    }

    #[test]
    fn nothing_changed_is_no_change_and_a_rewrite_with_the_same_text_neither() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let before = Snapshot::take(&ws);
        assert!(
            before
                .changes_to(&Snapshot::take_after(&ws, Some(&before)))
                .is_empty()
        );
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        let after = Snapshot::take_after(&ws, Some(&before));
        assert!(before.changes_to(&after).is_empty());
        std::fs::write(dir.path().join("a.txt"), "b").unwrap();
        let again = Snapshot::take_after(&ws, Some(&after));
        assert_eq!(after.changes_to(&again)[0].after.as_deref(), Some("b"));
    }
}
