//! What a run with a workspace layer needs to know of the workspace before
//! it starts: its `__pycache__` folders (covered, so a shipped `.pyc` never
//! runs instead of the reviewed source) and its files named like secrets
//! (covered, as the file tools refuse them). Everything else a run could
//! plant lands in its layer, so unlike `plants::find` this looks for
//! nothing else, and goes into no `.git`, `__pycache__` or folder of
//! installed packages (nor the root's `target/` and `.stepwise/`).
//!
//! Cheap by design, so that a run costs the same in a small workspace and
//! a large one: each folder's listing is kept (per process) with the
//! folder's modification and status-change times, and a folder whose times
//! are unchanged is not listed again (adding, removing or renaming an entry
//! changes them; as in git's untracked cache). A later search stats each
//! folder instead of reading every entry.
//!
//! What must stay true: a folder changed within [`RACY_SECS`] of its
//! listing is listed again (file times are coarse); no link is followed; a
//! search past [`MAX_FOLDERS`] folders says it is incomplete.

use super::plants::{NOT_SEARCHED, is_packages};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Most folders one search looks at.
pub const MAX_FOLDERS: usize = 200_000;
/// A folder changed this close to its listing may change again unseen.
const RACY_SECS: i64 = 2;

/// What the search found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Found {
    /// `__pycache__` folders (or links named so), never one inside another.
    pub pycache: Vec<PathBuf>,
    /// Regular files whose name is on the fixed deny list.
    pub secrets: Vec<PathBuf>,
    /// Every folder was looked at.
    pub complete: bool,
}

/// One folder's listing, as it was at `stamp`.
#[derive(Debug, Clone)]
struct Listing {
    stamp: (i64, i64, i64, i64),
    listed_at: i64,
    /// Real folders to search below it.
    folders: Vec<OsString>,
    /// `__pycache__` entries (folders or links).
    pycache: bool,
    /// Files named like secrets.
    secrets: Vec<OsString>,
}

fn cache() -> &'static Mutex<HashMap<PathBuf, Listing>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Listing>>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The folder's times, if it is a real folder.
fn stamp(dir: &Path) -> Option<(i64, i64, i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir).ok()?;
    meta.is_dir().then(|| {
        (
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec(),
        )
    })
}

/// List `dir` (at `depth` below the root).
fn list(dir: &Path, depth: usize, stamp: (i64, i64, i64, i64)) -> Option<Listing> {
    let mut listing = Listing {
        stamp,
        listed_at: now(),
        folders: Vec::new(),
        pycache: false,
        secrets: Vec::new(),
    };
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let name = entry.file_name();
        let kind = entry.file_type().ok()?;
        let text = name.to_str();
        if name == "__pycache__" && (kind.is_dir() || kind.is_symlink()) {
            listing.pycache = true;
            continue;
        }
        if kind.is_file() && text.is_some_and(crate::tools::deny::denied_name) {
            listing.secrets.push(name);
            continue;
        }
        if !kind.is_dir() || name == ".git" {
            continue;
        }
        let skipped = depth == 0 && text.is_some_and(|n| NOT_SEARCHED.contains(&n));
        let packages = text.is_some_and(|n| is_packages(n, &entry.path(), depth + 1));
        if !skipped && !packages {
            listing.folders.push(name);
        }
    }
    Some(listing)
}

/// Search `root`, reusing the listings of folders unchanged since.
pub fn find(root: &Path) -> Found {
    let mut found = Found {
        complete: true,
        ..Found::default()
    };
    let Ok(mut cache) = cache().lock() else {
        found.complete = false;
        return found;
    };
    let mut folders = vec![(root.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((dir, depth)) = folders.pop() {
        seen += 1;
        if seen > MAX_FOLDERS {
            found.complete = false;
            break;
        }
        let Some(now_stamp) = stamp(&dir) else {
            continue;
        };
        let fresh = cache
            .get(&dir)
            .filter(|l| l.stamp == now_stamp && l.stamp.2 + RACY_SECS < l.listed_at)
            .cloned();
        let listing = match fresh {
            Some(listing) => listing,
            None => match list(&dir, depth, now_stamp) {
                Some(listing) => {
                    cache.insert(dir.clone(), listing.clone());
                    listing
                }
                // A folder it could not read may hold anything.
                None => {
                    found.complete = false;
                    continue;
                }
            },
        };
        if listing.pycache {
            found.pycache.push(dir.join("__pycache__"));
        }
        found
            .secrets
            .extend(listing.secrets.iter().map(|n| dir.join(n)));
        folders.extend(listing.folders.iter().map(|n| (dir.join(n), depth + 1)));
    }
    found.pycache.sort();
    found.secrets.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_search_sees_what_changed_and_skips_what_holds_no_code() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for folder in [
            "pkg/__pycache__",
            "node_modules/x/__pycache__",
            "target/__pycache__",
        ] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        std::fs::create_dir_all(root.join("deep/er")).unwrap();
        std::fs::write(root.join("deep/er/.env"), "K=1").unwrap();
        std::fs::write(root.join("deep/notes.txt"), "n").unwrap();
        let first = find(&root);
        assert!(first.complete);
        assert_eq!(first.pycache, [root.join("pkg/__pycache__")]);
        assert_eq!(first.secrets, [root.join("deep/er/.env")]);
        // A new entry changes its folder's times: seen on the next search.
        std::fs::create_dir_all(root.join("deep/er/__pycache__")).unwrap();
        std::fs::write(root.join("deep/.env.local"), "K=2").unwrap();
        let second = find(&root);
        assert_eq!(
            second.pycache,
            [
                root.join("deep/er/__pycache__"),
                root.join("pkg/__pycache__")
            ]
        );
        assert_eq!(
            second.secrets,
            [root.join("deep/.env.local"), root.join("deep/er/.env")]
        );
    }
}
