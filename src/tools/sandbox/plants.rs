//! Files a test run could plant for code outside the sandbox to run: a
//! `.git` (folder or file) anywhere in the workspace, whose config
//! (`core.fsmonitor`, hooks) the user's next `git` there would run, and
//! compiled Python (`*.pyc`), which Python runs instead of the reviewed
//! source when its stamp matches; and what hides a run's work: symbolic
//! links (the snapshot looks at regular files only) and `.gitignore` files
//! (one that ignores its own folder hides it from the snapshot). The sandbox makes each existing `.git`
//! read-only; runs write no bytecode (`PYTHONDONTWRITEBYTECODE`; each
//! `__pycache__` of the workspace is covered for the run, or where it cannot
//! be, `PYTHONPYCACHEPREFIX` is the run's temporary folder), so a new or changed
//! `.pyc` in the workspace after a run is a plant, and is reported first.
//!
//! Folders of installed packages (`node_modules`, `.venv`, `.tox`, any
//! folder with a `pyvenv.cfg`): code the user's own tools run later,
//! outside any sandbox, so a test changing them plants code as surely as in
//! a cache; and their files may be hard-linked into a tool's store (uv,
//! pnpm). The sandbox gives each its own throwaway layer for the run (see
//! `mounts`), so the search lists them without going in.
//!
//! Files with more than one hard link elsewhere: a test could change the
//! other names, outside the workspace, through them; the sandbox makes each
//! read-only for the run, or refuses the run, naming them, when there are
//! too many.
//!
//! What must stay true: the search ignores `.gitignore` (a plant is most
//! often in an ignored `__pycache__`), never follows a link, lists a `.git`
//! without searching inside it, and is bounded ([`SEARCH_LIMIT`]); a search
//! that stopped at the bound says so (a run that floods the workspace with
//! files cannot hide a plant past them); it skips the folders that only
//! build outputs and installed packages live in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Folders at the root never searched (stepwise's own, cargo's build
/// outputs); a folder of these names deeper down is searched like any.
pub const NOT_SEARCHED: &[&str] = &[".stepwise", "target"];

/// Folders of installed packages (and any folder with a `pyvenv.cfg`).
pub const PACKAGES: &[&str] = &["node_modules", ".venv", ".tox"];

/// Whether the folder at `path`, named `name`, holds installed packages.
/// (A run can make any folder look like one: a package folder that is new
/// or another folder after a run is reported, see [`Plants::planted_since`].)
pub fn is_packages(name: &str, path: &Path, depth: usize) -> bool {
    if name == ".git" || name == "__pycache__" {
        return false;
    }
    // A virtual environment of any name, where projects keep one.
    PACKAGES.contains(&name) || (depth <= 2 && path.join("pyvenv.cfg").is_file())
}

/// A folder's identity: device and inode (a folder replaced by another of
/// the same name is another folder).
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

/// Data folders test tools make with a `.gitignore` of `*` in them
/// (pytest's cache and the like): their own `.gitignore` is no plant.
pub const TOOL_DATA: &[&str] = &[
    ".pytest_cache",
    ".hypothesis",
    ".mypy_cache",
    ".ruff_cache",
    ".nyc_output",
];

/// Most files with more than one link made read-only for a run; beyond
/// that the run is refused, naming them (see [`refusal`]).
pub const MAX_LINKED: usize = 4096;

/// Most entries looked at by one search.
pub const SEARCH_LIMIT: usize = 50_000;

/// What identifies one version of a planted path: size, modification and
/// status-change times, inode.
pub type Stamp = (u64, (i64, i64), (i64, i64), u64);

/// The `.git` entries and `.pyc` files below `root`, each with its stamp.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Plants {
    pub git: BTreeMap<PathBuf, Stamp>,
    pub pyc: BTreeMap<PathBuf, Stamp>,
    /// Symbolic links and `.gitignore` files: a link can lead the user's
    /// tools to a file outside, and a `.gitignore` that ignores its own
    /// folder hides that folder from the run's snapshot.
    pub hiding: BTreeMap<PathBuf, Stamp>,
    /// Regular files with more than one hard link, outside the folders of
    /// installed packages (only with `links`).
    pub linked: Vec<PathBuf>,
    /// The folders of installed packages, outermost only, never searched,
    /// with their identity.
    pub packages: BTreeMap<PathBuf, (u64, u64)>,
    /// The `__pycache__` folders (only with `links`): covered for the run,
    /// so that Python compiles the reviewed source, never a `.pyc` there.
    pub pycache: Vec<PathBuf>,
    /// Regular files whose name is on the fixed deny list (`.env`,
    /// `.env.*`, `*.pem`, `*.key`, …) at any depth (only with `links`):
    /// covered for the run, as the file tools refuse them.
    pub secrets: Vec<PathBuf>,
    /// The search looked at every entry (it stopped at [`SEARCH_LIMIT`] if not).
    pub complete: bool,
}

fn stamp(meta: &std::fs::Metadata) -> Stamp {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (
            meta.len(),
            (meta.mtime(), meta.mtime_nsec()),
            (meta.ctime(), meta.ctime_nsec()),
            meta.ino(),
        )
    }
    #[cfg(not(unix))]
    {
        (meta.len(), (0, 0), (0, 0), 0)
    }
}

/// Search `root` (see the module's rules); `links`: also collect the
/// files with more than one hard link and the folders of installed packages.
pub fn find(root: &Path, links: bool) -> Plants {
    find_denying(
        root,
        links,
        &crate::tools::workspace::deny::DenyList::default(),
    )
}

/// [`find`], where the files `deny` names (its `deny_paths` globs too)
/// count as secrets (with `links`).
pub fn find_denying(
    root: &Path,
    links: bool,
    deny: &crate::tools::workspace::deny::DenyList,
) -> Plants {
    let packages = std::sync::Arc::new(std::sync::Mutex::new(BTreeMap::new()));
    let listed = std::sync::Arc::clone(&packages);
    let walker = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(move |e| {
            if e.depth() == 0 {
                return true;
            }
            let in_git = e.path().parent().and_then(Path::file_name) == Some(".git".as_ref());
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let name = e.file_name().to_str();
            if !in_git && is_dir && name.is_some_and(|n| is_packages(n, e.path(), e.depth())) {
                // Listed, never searched.
                if let Ok(meta) = std::fs::symlink_metadata(e.path()) {
                    listed
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(e.path().to_path_buf(), identity(&meta));
                }
                return false;
            }
            let skipped = e.depth() == 1 && name.is_some_and(|n| NOT_SEARCHED.contains(&n));
            !(in_git || is_dir && skipped)
        })
        .build();
    let mut out = Plants {
        complete: true,
        ..Plants::default()
    };
    let mut seen = 0usize;
    for entry in walker {
        seen += 1;
        if seen > SEARCH_LIMIT {
            out.complete = false;
            break;
        }
        // A folder it could not read may hold anything: not complete.
        let Ok(entry) = entry else {
            out.complete = false;
            continue;
        };
        let name = entry.file_name();
        // A `__pycache__` (or a link named so, which Python follows), but
        // not one inside another: covering the outer one hides it.
        let nested = entry
            .path()
            .parent()
            .is_some_and(|p| p.components().any(|c| c.as_os_str() == "__pycache__"));
        let folder_or_link = entry
            .file_type()
            .is_some_and(|t| t.is_dir() || t.is_symlink());
        if links && name == "__pycache__" && folder_or_link && !nested {
            out.pycache.push(entry.path().to_path_buf());
        }
        let is_file = entry.file_type().is_some_and(|t| t.is_file());
        let is_git = name == ".git";
        let is_pyc = is_file && name.to_str().is_some_and(|n| n.ends_with(".pyc"));
        let is_link = entry.path_is_symlink();
        let hiding = is_link || (is_file && name == ".gitignore");
        if !(is_git || is_pyc || hiding || (links && is_file)) {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        let denied = |n: &str| {
            crate::tools::workspace::deny::denied_name(n)
                || (deny.has_configured()
                    && entry
                        .path()
                        .strip_prefix(root)
                        .is_ok_and(|rel| deny.denies_walked(rel, n)))
        };
        if links && is_file && name.to_str().is_some_and(denied) {
            out.secrets.push(entry.path().to_path_buf());
        }
        #[cfg(unix)]
        if links && is_file && std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
            out.linked.push(entry.path().to_path_buf());
        }
        let under = |names: &[&str]| {
            entry.path().strip_prefix(root).is_ok_and(|rel| {
                rel.components()
                    .any(|c| names.iter().any(|p| c.as_os_str() == *p))
            })
        };
        if is_git {
            out.git.insert(entry.path().to_path_buf(), stamp(&meta));
        } else if is_pyc {
            out.pyc.insert(entry.path().to_path_buf(), stamp(&meta));
        } else if hiding && !under(TOOL_DATA) {
            out.hiding.insert(entry.path().to_path_buf(), stamp(&meta));
        }
    }
    out.packages = std::mem::take(&mut *packages.lock().unwrap_or_else(|p| p.into_inner()));
    out
}

/// Why a run is refused for its hard links (`None`: it is not): more files
/// with several links than can be made read-only one by one.
pub fn refusal(linked: &[PathBuf], root: &Path) -> Option<String> {
    if linked.len() <= MAX_LINKED {
        return None;
    }
    let named: Vec<String> = linked
        .iter()
        .take(5)
        .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
        .collect();
    Some(format!(
        "the tests were not run: {} files in the workspace have more than one hard link ({}, …); a test could change the other copies, outside the workspace, through them. Recreate them as copies (uv: UV_LINK_MODE=copy; pnpm: package-import-method=copy) and run the tests again",
        linked.len(),
        named.join(", ")
    ))
}

impl Plants {
    /// What is new or changed in `after`, as paths relative to `root`.
    pub fn planted_since(&self, after: &Plants, root: &Path) -> Vec<String> {
        let fresh = |old: &BTreeMap<PathBuf, Stamp>, new: &BTreeMap<PathBuf, Stamp>| {
            new.iter()
                .filter(|(p, s)| old.get(*p) != Some(*s))
                .map(|(p, _)| p.strip_prefix(root).unwrap_or(p).display().to_string())
                .collect::<Vec<_>>()
        };
        // A `.git` folder's own stamp changes with its entries: only a new one counts.
        let mut out: Vec<String> = after
            .git
            .keys()
            .filter(|p| !self.git.contains_key(*p))
            .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
            .collect();
        out.extend(fresh(&self.pyc, &after.pyc));
        out.extend(fresh(&self.hiding, &after.hiding));
        // A package folder is never searched: one the run made (or made
        // anew) could hold anything.
        out.extend(
            after
                .packages
                .iter()
                .filter(|(p, id)| self.packages.get(*p) != Some(*id))
                .map(|(p, _)| {
                    let shown = p.strip_prefix(root).unwrap_or(p).display();
                    format!("{shown} (a new folder of installed packages, which is not searched)")
                }),
        );
        if self.complete && !after.complete {
            out.push(format!(
                "over {SEARCH_LIMIT} files and folders, or one it could not read (the search for plants stopped there: what is past them was not looked at)"
            ));
        }
        out
    }
}

/// The note for the top of a run's result (`None`: nothing was planted).
pub fn note(planted: &[String]) -> Option<String> {
    if planted.is_empty() {
        return None;
    }
    let mut shown: Vec<&str> = planted.iter().take(5).map(String::as_str).collect();
    let more = planted.len().saturating_sub(shown.len());
    let extra = format!("and {more} more");
    if more > 0 {
        shown.push(&extra);
    }
    Some(format!(
        "WARNING: the run planted {}: a new .git makes the next git command there run its config (core.fsmonitor, hooks), a .pyc runs instead of the reviewed source, a symbolic link can lead tools outside the workspace and a .gitignore can hide what the run wrote; delete them before running git or Python there, and treat the test suite as hostile",
        shown.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_stopped_by_a_flood_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let before = find(root, false);
        assert!(before.complete);
        let flood = root.join("flood");
        std::fs::create_dir(&flood).unwrap();
        for i in 0..SEARCH_LIMIT {
            std::fs::File::create(flood.join(i.to_string())).unwrap();
        }
        let after = find(root, false);
        assert!(!after.complete);
        let planted = before.planted_since(&after, root);
        assert_eq!(planted.len(), 1, "{planted:?}");
        assert!(
            planted[0].contains("the search for plants stopped"),
            "{planted:?}"
        );
        // A workspace that was that large already says nothing new.
        assert!(after.planted_since(&after, root).is_empty());
    }

    #[test]
    fn package_folders_are_listed_not_searched() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in ["node_modules/a/node_modules/b", "env/lib", "sub/.venv/lib"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("env/pyvenv.cfg"), "home = /usr\n").unwrap();
        std::fs::write(root.join("node_modules/a/x.pyc"), "x").unwrap();
        let found = find(root, true);
        let listed: Vec<_> = found
            .packages
            .keys()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(listed, ["env", "node_modules", "sub/.venv"]);
        assert!(found.pyc.is_empty(), "{found:?}");
        assert!(before_is_quiet(&found, root));
        // Made to look like packages, or made anew: reported, since the
        // search does not go in.
        std::fs::create_dir_all(root.join(".git/objects")).unwrap();
        std::fs::write(root.join(".git/pyvenv.cfg"), "x").unwrap();
        std::fs::create_dir_all(root.join("src/__pycache__")).unwrap();
        std::fs::write(root.join("src/pyvenv.cfg"), "x").unwrap();
        std::fs::rename(root.join("sub/.venv"), root.join("old")).unwrap();
        std::fs::create_dir_all(root.join("sub/.venv")).unwrap();
        let after = find(root, false);
        assert!(after.git.contains_key(&root.join(".git")), "{after:?}");
        let planted = found.planted_since(&after, root);
        assert_eq!(planted.len(), 3, "{planted:?}");
        for (entry, name) in planted.iter().zip([".git", "src", "sub/.venv"]) {
            assert!(entry.starts_with(name), "{planted:?}");
        }
    }

    #[test]
    fn pycache_folders_are_listed_outermost_links_included_and_deep_target_searched() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in [
            "a/__pycache__/b/__pycache__",
            "assets/c",
            "target/__pycache__",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::create_dir_all(root.join("crates/x/target")).unwrap();
        std::fs::write(root.join("crates/x/target/m.pyc"), "x").unwrap();
        std::os::unix::fs::symlink("../assets/c", root.join("crates/__pycache__")).unwrap();
        let found = find(root, true);
        let listed: Vec<_> = found
            .pycache
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(listed.len(), 2, "{listed:?}");
        assert!(listed.contains(&"a/__pycache__".to_string()), "{listed:?}");
        assert!(
            listed.contains(&"crates/__pycache__".to_string()),
            "{listed:?}"
        );
        // Only the root's `target` is cargo's: a deeper one is searched.
        assert!(found.pyc.contains_key(&root.join("crates/x/target/m.pyc")));
    }

    fn before_is_quiet(found: &Plants, root: &Path) -> bool {
        found.planted_since(found, root).is_empty()
    }

    #[test]
    fn new_git_folders_and_pyc_files_are_plants_even_when_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("pkg/__pycache__")).unwrap();
        std::fs::write(root.join(".gitignore"), "__pycache__/\nsub/\n").unwrap();
        let before = find(root, false);
        std::fs::create_dir_all(root.join("sub/.git")).unwrap();
        std::fs::write(root.join("sub/.git/config"), "[core]\nfsmonitor = x\n").unwrap();
        std::fs::write(root.join("pkg/__pycache__/m.cpython-311.pyc"), b"x").unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "x").unwrap();
        std::fs::create_dir_all(root.join("quiet")).unwrap();
        std::fs::write(root.join("quiet/.gitignore"), "*\n").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("pkg/link")).unwrap();
        // pytest's own cache ignores itself: no plant.
        std::fs::create_dir_all(root.join(".pytest_cache")).unwrap();
        std::fs::write(root.join(".pytest_cache/.gitignore"), "*\n").unwrap();
        let after = find(root, false);
        let planted = before.planted_since(&after, root);
        assert_eq!(
            planted,
            [
                "sub/.git",
                "pkg/__pycache__/m.cpython-311.pyc",
                "pkg/link",
                "quiet/.gitignore"
            ]
        );
        assert!(note(&planted).unwrap().contains("sub/.git"));
        assert_eq!(before.planted_since(&before, root), Vec::<String>::new());
    }
}
