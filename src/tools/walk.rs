//! The one walk of the workspace that `list_files`, `search_text` and the
//! test-run snapshot share: hidden entries, `.gitignore`d paths and the
//! cache and tool folders of [`SKIPPED_DIRS`] are never entered, and
//! symlinks are never followed. Also the cheap pieces built on it: the
//! direct entries of one folder, the count of files below one, and a small
//! pool that runs such jobs on every core.
//!
//! What must stay true: every walk starts from [`walker`], so a folder walked
//! on its own (with the `.gitignore` files of the folders above it, which
//! `ignore` reads) is filtered exactly as it is inside a walk of its parent.

use super::deny::DenyList;
use super::workspace::PRIVATE_DIR;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Folders never listed nor walked into.
pub const SKIPPED_DIRS: [&str; 8] = [
    PRIVATE_DIR,
    ".git",
    ".idea",
    ".vscode",
    "__pycache__",
    ".pytest_cache",
    "node_modules",
    "target",
];

/// A walk of `start` (a real path inside the workspace) with the skips.
pub fn walker(start: &Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(start);
    builder
        .hidden(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| {
            !(e.file_type().is_some_and(|t| t.is_dir())
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| SKIPPED_DIRS.contains(&n)))
        });
    builder
}

/// How many walking threads to use.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().min(8))
}

/// `path` (found by a walk that started inside `root`) relative to `root`:
/// a slice of its bytes, as `strip_prefix` would give, without walking the
/// components of both.
pub fn relative_to<'p>(root: &Path, path: &'p Path) -> &'p Path {
    use std::os::unix::ffi::OsStrExt;
    let (r, p) = (root.as_os_str().as_bytes(), path.as_os_str().as_bytes());
    match p.strip_prefix(r) {
        Some([b'/', rest @ ..]) => Path::new(std::ffi::OsStr::from_bytes(rest)),
        Some([]) => Path::new(""),
        _ => path.strip_prefix(root).unwrap_or(path),
    }
}

/// Whether a file the walk found is one the deny list refuses (`root` is
/// the workspace root).
pub fn denied(deny: &DenyList, root: &Path, entry: &ignore::DirEntry) -> bool {
    let name = entry.file_name().to_string_lossy();
    deny.denies_walked(relative_to(root, entry.path()), &name)
}

/// The direct entries of `dir`: the files the deny list allows, and the
/// folders, as the walk sees them (unsorted).
pub fn entries(deny: &DenyList, root: &Path, dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut files = Vec::new();
    let mut folders = Vec::new();
    for entry in walker(dir).max_depth(Some(1)).build().flatten() {
        if entry.depth() == 0 {
            continue;
        }
        match entry.file_type() {
            Some(t) if t.is_dir() => folders.push(entry.into_path()),
            Some(t) if t.is_file() && !denied(deny, root, &entry) => files.push(entry.into_path()),
            _ => {}
        }
    }
    (files, folders)
}

/// How many files the deny list allows anywhere below `dir`, as the walk sees
/// them (no symlink, nothing hidden, ignored or skipped). Nothing is kept
/// per file.
pub fn count_files(deny: &DenyList, root: &Path, dir: &Path) -> usize {
    walker(dir)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()) && !denied(deny, root, e))
        .count()
}

/// `job` run on every item, spread over [`threads`] threads; the results
/// in the order of `items`.
pub fn in_parallel<T: Sync, R: Send>(items: &[T], job: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = threads().min(items.len());
    if workers <= 1 {
        return items.iter().map(job).collect();
    }
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    mine.push((i, job(item)));
                }
                if let Ok(mut done) = done.lock() {
                    done.append(&mut mine);
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_unstable_by_key(|d| d.0);
    done.into_iter().map(|d| d.1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_those_strip_prefix_gives() {
        let root = Path::new("/w/root");
        for (path, want) in [
            ("/w/root/a/b.rs", "a/b.rs"),
            ("/w/root", ""),
            ("/w/rootless/x", "/w/rootless/x"),
            ("/elsewhere/x", "/elsewhere/x"),
        ] {
            assert_eq!(
                relative_to(root, Path::new(path)),
                Path::new(want),
                "{path}"
            );
        }
    }
}
