//! The one walk of the workspace that `list_files`, `search_text` and the
//! test-run snapshot share: hidden entries, `.gitignore`d paths and the
//! cache and tool folders of [`SKIPPED_DIRS`] are never entered, and
//! symlinks are never followed. Also the cheap pieces built on it: the
//! direct entries of one folder, a survey of the folders below one (each
//! with its file count), a split of a tree into parts that can be walked on
//! their own, and a small pool that runs such jobs on every core.
//! (`ignore`'s own parallel walk hands every entry from thread to thread;
//! walking whole parts, one thread each, costs about half as much.)
//!
//! What must stay true: every walk starts from [`walker`], so a folder walked
//! on its own (with the ignore files of the folders above it, up to the
//! workspace root) is filtered exactly as it is inside a walk of its parent;
//! `ignore` opens no file itself: ignore files are read by
//! [`WalkRules`](crate::tools::reading::ignore_rules::WalkRules), which skips a FIFO, a
//! device or a huge one without reading it.

use crate::tools::reading::ignore_rules::WalkRules;
use crate::tools::workspace::PRIVATE_DIR;
use crate::tools::workspace::deny::DenyList;
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

/// A walk of `start` (a real path inside the workspace `root`) with the
/// skips. The `ignore` crate reads no file of its own: the ignore rules come
/// from [`WalkRules`], which reads them through its guarded reader.
pub fn walker(root: &Path, start: &Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(start);
    let rules = WalkRules::new(root);
    builder
        // Hidden entries, `.gitignore` and `.ignore` are `rules`' business.
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let skipped = is_dir
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| SKIPPED_DIRS.contains(&n));
            !skipped && rules.keeps(e.path(), is_dir)
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
    for entry in walker(root, dir).max_depth(Some(1)).build().flatten() {
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

/// One folder a [`survey`] found.
#[derive(Debug)]
pub struct Surveyed {
    pub path: PathBuf,
    /// The index of its parent in the survey (0 for the first folder, the
    /// one surveyed, which is its own parent).
    pub parent: usize,
    /// Levels below the folder surveyed.
    pub depth: usize,
    /// The files directly in it that the deny list allows.
    pub files: usize,
    /// Whether the survey looked inside it (not, past a depth limit).
    pub entered: bool,
}

/// The folders below `dir` (to `depth` levels, or all), each with the count
/// of its own files, as the walk sees them (no symlink, nothing hidden,
/// ignored or skipped); parents come before their children, `dir` first.
/// Nothing is kept per file.
pub fn survey(deny: &DenyList, root: &Path, dir: &Path, depth: Option<usize>) -> Vec<Surveyed> {
    let dirs = [dir.to_path_buf()];
    survey_all(deny, root, &dirs, depth)
        .pop()
        .unwrap_or_default()
}

/// [`survey`] of each of `dirs`, in one walk (one set of ignore rules read
/// for all of them, however many there are).
pub fn survey_all(
    deny: &DenyList,
    root: &Path,
    dirs: &[PathBuf],
    depth: Option<usize>,
) -> Vec<Vec<Surveyed>> {
    let folder = |path, parent, depth| Surveyed {
        path,
        parent,
        depth,
        files: 0,
        entered: true,
    };
    let mut all: Vec<Vec<Surveyed>> = dirs.iter().map(|d| vec![folder(d.clone(), 0, 0)]).collect();
    let Some(mut walk) = walker_of(root, dirs) else {
        return all;
    };
    let (mut at_dir, mut next) = (None, 0);
    // The folder at each depth of the walk's current path (a walk yields a
    // folder before what it holds).
    let mut path = vec![0];
    for entry in walk.max_depth(depth).build().flatten() {
        let at = entry.depth();
        if at == 0 {
            // The next folder surveyed, in order (one that cannot be read
            // is left out).
            at_dir = dirs[next..]
                .iter()
                .position(|d| d == entry.path())
                .map(|i| next + i);
            next = at_dir.map_or(next, |i| i + 1);
            path = vec![0];
            continue;
        }
        let Some(found) = at_dir.and_then(|i| all.get_mut(i)) else {
            continue;
        };
        let Some(parent) = at.checked_sub(1).and_then(|up| path.get(up).copied()) else {
            continue;
        };
        match entry.file_type() {
            Some(t) if t.is_dir() => {
                path.truncate(at);
                path.push(found.len());
                let mut new = folder(entry.into_path(), parent, at);
                new.entered = depth.is_none_or(|d| at < d);
                found.push(new);
            }
            Some(t) if t.is_file() && !denied(deny, root, &entry) => found[parent].files += 1,
            _ => {}
        }
    }
    all
}

/// Most walks one job of [`in_parallel`] makes on its own: past that many
/// folders, folders are walked in groups (see [`groups`]).
pub const MAX_JOBS: usize = 64;

/// `folders` cut into at most [`MAX_JOBS`] groups of neighbours, each to be
/// walked by one [`walker_of`].
pub fn groups(folders: &[PathBuf]) -> Vec<&[PathBuf]> {
    folders
        .chunks(folders.len().div_ceil(MAX_JOBS).max(1))
        .collect()
}

/// One walk of several folders (none: no walk), each filtered as a walk of
/// it alone.
pub fn walker_of(root: &Path, folders: &[PathBuf]) -> Option<ignore::WalkBuilder> {
    let (first, rest) = folders.split_first()?;
    let mut builder = walker(root, first);
    for folder in rest {
        builder.add(folder);
    }
    Some(builder)
}

/// How many parts a tree is cut into, where it has them, to walk it on
/// every core.
pub fn parts() -> usize {
    4 * threads()
}

/// A tree cut into parts for [`in_parallel`]: the files of its upper
/// folders (as [`entries`] gives them) and the folders below them, each to
/// be walked whole. Together they are exactly what a walk of the tree finds.
#[derive(Debug, Default)]
pub struct Split {
    pub files: Vec<PathBuf>,
    pub folders: Vec<PathBuf>,
}

/// Cut the tree under `start` into at least `parts` folders where it has
/// that many, by listing it level by level (at most [`SPLIT_LEVELS`]).
pub fn split(deny: &DenyList, root: &Path, start: &Path, parts: usize) -> Split {
    let mut split = Split {
        files: Vec::new(),
        folders: vec![start.to_path_buf()],
    };
    for _ in 0..SPLIT_LEVELS {
        if split.folders.len() >= parts {
            break;
        }
        let listed = in_parallel(&split.folders, |dir| entries(deny, root, dir));
        split.folders.clear();
        for (files, folders) in listed {
            split.files.extend(files);
            split.folders.extend(folders);
        }
        if split.folders.is_empty() {
            break;
        }
    }
    split
}

/// Levels [`split`] lists at most before it walks what is left whole.
pub const SPLIT_LEVELS: usize = 3;

/// `job` run on every item, spread over [`threads`] threads; the results
/// in the order of `items`.
pub fn in_parallel<T: Sync, R: Send>(items: &[T], job: impl Fn(&T) -> R + Sync) -> Vec<R> {
    in_parallel_with(items, || (), |(), item| job(item))
}

/// [`in_parallel`] where each thread first makes its own `state` (a buffer
/// it reuses, say) and hands it to every job it runs.
pub fn in_parallel_with<T: Sync, S, R: Send>(
    items: &[T],
    state: impl Fn() -> S + Sync,
    job: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R> {
    let workers = threads().min(items.len());
    if workers <= 1 {
        let mut mine = state();
        return items.iter().map(|item| job(&mut mine, item)).collect();
    }
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut own = state();
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    mine.push((i, job(&mut own, item)));
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
#[path = "walk_tests.rs"]
mod tests;
