//! What a run with a workspace layer needs to know of the workspace before
//! it starts: its `__pycache__` folders (covered, so a shipped `.pyc` never
//! runs instead of the reviewed source), its files on the deny list (named
//! like secrets, or matched by the workspace's `deny_paths`) and its
//! folders whose whole content is denied (`.stepwise`, `.kube`, at any
//! depth): all covered, as the file tools refuse them. Everything else a run could
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
//! search past [`MAX_FOLDERS`] folders says it is incomplete; listings kept
//! for one deny list are never used for another (they are dropped).

use super::plants::{NOT_SEARCHED, is_packages};
use crate::tools::workspace::deny::{DENIED_DIRS, DenyList};
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
    /// Regular files on the deny list (by name, or by `deny_paths`).
    pub secrets: Vec<PathBuf>,
    /// Folders whose whole content is denied (`.stepwise`, `.kube`).
    pub denied_dirs: Vec<PathBuf>,
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
    /// Files on the deny list.
    secrets: Vec<OsString>,
    /// Folders whose content is denied.
    denied_dirs: Vec<OsString>,
}

/// The listings, and the `deny_paths` they were made for.
type Cache = (Vec<String>, HashMap<PathBuf, Listing>);

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
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

/// List `dir` (at `depth` below `root`).
fn list(
    root: &Path,
    dir: &Path,
    depth: usize,
    stamp: (i64, i64, i64, i64),
    deny: &DenyList,
) -> Option<Listing> {
    let mut listing = Listing {
        stamp,
        listed_at: now(),
        folders: Vec::new(),
        pycache: false,
        secrets: Vec::new(),
        denied_dirs: Vec::new(),
    };
    let relative = dir.strip_prefix(root).unwrap_or(dir);
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let name = entry.file_name();
        let kind = entry.file_type().ok()?;
        let text = name.to_str();
        if name == "__pycache__" && (kind.is_dir() || kind.is_symlink()) {
            listing.pycache = true;
            continue;
        }
        let denied = |n: &str| {
            crate::tools::workspace::deny::denied_name(n)
                || (deny.has_configured() && deny.denies_walked(&relative.join(n), n))
        };
        if kind.is_file() && text.is_some_and(denied) {
            listing.secrets.push(name);
            continue;
        }
        if !kind.is_dir() || name == ".git" {
            continue;
        }
        let whole = |n: &str| DENIED_DIRS.iter().any(|d| d.eq_ignore_ascii_case(n));
        if text.is_some_and(whole) {
            listing.denied_dirs.push(name);
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

/// Search `root` for what `deny` denies, reusing the listings of folders
/// unchanged since.
pub fn find(root: &Path, deny: &DenyList) -> Found {
    let mut found = Found {
        complete: true,
        ..Found::default()
    };
    let Ok(mut guard) = cache().lock() else {
        found.complete = false;
        return found;
    };
    let (patterns, cache) = &mut *guard;
    if patterns.as_slice() != deny.patterns() {
        *patterns = deny.patterns().to_vec();
        cache.clear();
    }
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
            None => match list(root, &dir, depth, now_stamp, deny) {
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
        found
            .denied_dirs
            .extend(listing.denied_dirs.iter().map(|n| dir.join(n)));
        folders.extend(listing.folders.iter().map(|n| (dir.join(n), depth + 1)));
    }
    found.pycache.sort();
    found.secrets.sort();
    found.denied_dirs.sort();
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
        let none = DenyList::default();
        let first = find(&root, &none);
        assert!(first.complete);
        assert_eq!(first.pycache, [root.join("pkg/__pycache__")]);
        assert_eq!(first.secrets, [root.join("deep/er/.env")]);
        // A new entry changes its folder's times: seen on the next search.
        std::fs::create_dir_all(root.join("deep/er/__pycache__")).unwrap();
        std::fs::write(root.join("deep/.env.local"), "K=2").unwrap();
        let second = find(&root, &none);
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
        // `deny_paths` at any depth, and denied folders; another list
        // drops the listings made for this one.
        std::fs::create_dir_all(root.join("secrets")).unwrap();
        std::fs::create_dir_all(root.join("deep/other/.stepwise")).unwrap();
        std::fs::write(root.join("secrets/db.yaml"), "pw").unwrap();
        let glob = globset::Glob::new("secrets/db.yaml").unwrap();
        let deny = DenyList::new(&[glob]).unwrap();
        let third = find(&root, &deny);
        assert!(
            third.secrets.contains(&root.join("secrets/db.yaml")),
            "{third:?}"
        );
        assert_eq!(third.denied_dirs, [root.join("deep/other/.stepwise")]);
        assert!(
            !find(&root, &none)
                .secrets
                .contains(&root.join("secrets/db.yaml"))
        );
    }
}
