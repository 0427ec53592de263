//! What a test run did to the workspace: a snapshot of its files (size,
//! modification and status-change times, inode, and the content: the text
//! when it is kept, else a SHA-256) taken before and after each run, and the
//! files the run created, changed or deleted.
//!
//! Cheap by design: a file whose metadata is unchanged since the previous
//! snapshot is not read again (a process cannot set a file's status-change
//! time back, so restoring the modification time does not hide an edit);
//! only new or changed files are read, on every core, and only a file whose
//! text is not kept is hashed (kept text is compared as it is).
//!
//! What it looks at: every regular file the walk of the file tools finds,
//! and also hidden files and folders (a run that plants `.github/workflows/`
//! or `.gitattributes` changed the project). Never `.git/` and `.stepwise/`,
//! nor the build and cache folders (`node_modules`, `target`,
//! `.pytest_cache`) and the data test tools rewrite on each run
//! (`.hypothesis`, `.mypy_cache`, `.ruff_cache`, `.nyc_output`, `.coverage`).
//! `.gitignore`d paths and `__pycache__` *are* looked at: a run that plants
//! `generated/ci-cache.txt` or a `.pyc` changed what later code runs, and
//! is named like any change. A file on the deny
//! list is compared by its metadata only: its content is never read.
//!
//! What must stay true: the walk never follows a symlink; every file is read
//! through the workspace capability; the cost is bounded (files over
//! [`HASH_LIMIT`] are compared by size and time only, at most [`MAX_FILES`]
//! files are looked at, and at most [`KEPT_TEXT_BYTES`] of text is kept so
//! that changes can be shown as diffs and undone).

use crate::tools::reading::files::MAX_FILE_BYTES;
use crate::tools::workspace::Workspace;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Folders a snapshot never walks into: stepwise's own, git's, and the
/// caches that test runs rewrite on every run (counting them would make
/// every run a change, and the gate could never be met).
const NOT_WALKED: [&str; 9] = [
    crate::tools::workspace::PRIVATE_DIR,
    ".git",
    ".pytest_cache",
    "node_modules",
    "target",
    ".hypothesis",
    ".mypy_cache",
    ".ruff_cache",
    ".nyc_output",
];

/// Whether a file is coverage data a test run rewrites (`.coverage`,
/// `.coverage.host.123`): not looked at, for the same reason.
fn run_data(name: &str) -> bool {
    name == ".coverage" || name.starts_with(".coverage.")
}

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
    /// What the walk passed over that can hold code (see [`Self::partial`]).
    passed_over: std::collections::BTreeSet<String>,
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
        let (found, complete, passed_over) = walk(ws);
        let mut snapshot = Snapshot {
            files: BTreeMap::new(),
            complete,
            passed_over,
            taken_at: now_secs(),
        };
        let mut kept = 0usize;
        let mut to_read = Vec::new();
        for (path, stamp) in found {
            let known = previous.and_then(|p| {
                let e = p.files.get(&path)?;
                let settled = e.stamp.changed.0 + RACY_SECS < p.taken_at;
                let fits = kept + e.text.as_ref().map_or(0, String::len) <= KEPT_TEXT_BYTES;
                (settled && fits && e.stamp == stamp).then_some(e)
            });
            match known {
                Some(e) => {
                    kept += e.text.as_ref().map_or(0, String::len);
                    snapshot.files.insert(path, e.clone());
                }
                None => to_read.push((path, stamp)),
            }
        }
        let kept = AtomicUsize::new(kept);
        let read = crate::tools::reading::walk::in_parallel(&to_read, |(path, stamp)| {
            look_at(ws, path, *stamp, &kept)
        });
        for ((path, _), entry) in to_read.into_iter().zip(read) {
            if let Some(entry) = entry {
                snapshot.files.insert(path, entry);
            }
        }
        snapshot
    }

    /// Why a comparison of `self` (before a run) with `after` could not
    /// see everything the run may have changed (`None`: it saw it all):
    /// past [`MAX_FILES`], folders that can hold code it never walks
    /// (`target`, `node_modules`), names that are not UTF-8.
    pub fn partial(&self, after: &Snapshot) -> Option<String> {
        let mut why: Vec<String> = Vec::new();
        if !self.complete || !after.complete {
            why.push(format!("past the first {MAX_FILES} files"));
        }
        let over: std::collections::BTreeSet<&String> =
            self.passed_over.iter().chain(&after.passed_over).collect();
        why.extend(over.into_iter().cloned());
        (!why.is_empty()).then(|| why.join(", "))
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

/// Folders never walked that can hold code a later command runs (a
/// comparison that passed over one of them is partial).
const CODE_NOT_WALKED: [&str; 2] = ["node_modules", "target"];

/// The regular files a snapshot looks at, with their metadata, whether
/// that was all of them (at most [`MAX_FILES`]), and what it passed over
/// that can hold code (folders of [`CODE_NOT_WALKED`], names that are not
/// UTF-8).
fn walk(
    ws: &Workspace,
) -> (
    Vec<(String, Stamp)>,
    bool,
    std::collections::BTreeSet<String>,
) {
    let passed = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let seen = std::sync::Arc::clone(&passed);
    let walker = ignore::WalkBuilder::new(ws.root())
        .hidden(false)
        .require_git(false)
        // What git ignores still runs (a planted cache or `.pyc`).
        .git_ignore(false)
        .git_exclude(false)
        .git_global(false)
        .ignore(false)
        .parents(false)
        .follow_links(false)
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let name = e.file_name().to_str();
            let skip = is_dir && name.is_some_and(|n| NOT_WALKED.contains(&n));
            if skip
                && let Some(n) = name.filter(|n| CODE_NOT_WALKED.contains(n))
                && let Ok(mut passed) = seen.lock()
            {
                passed.insert(format!("{n}/ folders not compared"));
            }
            !skip
        })
        .build();
    let mut found = Vec::new();
    let mut complete = true;
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file())
            || entry.file_name().to_str().is_some_and(run_data)
        {
            continue;
        }
        if found.len() >= MAX_FILES {
            complete = false;
            break;
        }
        let Some(path) = crate::tools::reading::walk::relative_to(ws.root(), entry.path()).to_str()
        else {
            if let Ok(mut passed) = passed.lock() {
                passed.insert("names that are not UTF-8".into());
            }
            continue;
        };
        if let Some(stamp) = entry.metadata().ok().and_then(|m| stamp_of(&m)) {
            found.push((path.to_string(), stamp));
        }
    }
    let passed = passed.lock().map(|p| p.clone()).unwrap_or_default();
    (found, complete, passed)
}

/// Read one file through the workspace capability: its text when it is text
/// and fits in what is left of `kept` (shared by the reading threads), else
/// its hash. A denied file keeps its metadata only.
fn look_at(ws: &Workspace, path: &str, stamp: Stamp, kept: &AtomicUsize) -> Option<Entry> {
    let rel = Workspace::check(path).ok()?;
    let mut entry = Entry {
        stamp,
        hash: None,
        text: None,
    };
    if stamp.size > HASH_LIMIT || ws.deny().denies(rel.as_path()) {
        return Some(entry);
    }
    let bytes = ws.read_bytes(&rel, HASH_LIMIT).ok()??;
    let len = bytes.len();
    let fits = || {
        kept.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| {
            (k + len <= KEPT_TEXT_BYTES).then_some(k + len)
        })
        .is_ok()
    };
    if len as u64 <= MAX_FILE_BYTES
        && !bytes.contains(&0)
        && std::str::from_utf8(&bytes).is_ok()
        && fits()
    {
        entry.text = String::from_utf8(bytes).ok();
    } else {
        entry.hash = Some(Sha256::digest(&bytes).into());
    }
    Some(entry)
}

/// The content's hash: the one taken, or that of the kept text.
fn digest(e: &Entry) -> Option<[u8; 32]> {
    e.hash
        .or_else(|| e.text.as_ref().map(|t| Sha256::digest(t.as_bytes()).into()))
}

fn differ(old: &Entry, new: &Entry) -> bool {
    // The content decides when both sides are known; else the metadata.
    if let (Some(a), Some(b)) = (&old.text, &new.text) {
        return a != b;
    }
    if old.stamp == new.stamp {
        return false;
    }
    match (digest(old), digest(new)) {
        (Some(a), Some(b)) => a != b,
        _ => true,
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
#[path = "snapshot_tests.rs"]
mod tests;
