//! `list_files {path, depth?}`: an overview of a folder that stays useful on
//! a tree of any size. One walk (hidden, cache and `.gitignore`d folders are
//! never entered, symlinks never followed, denied files never counted) builds
//! the folder tree with each folder's file count; the listing then opens
//! folders breadth first while everything fits in [`MAX_LIST_ENTRIES`], and a
//! folder that does not fit stays one entry with its count
//! (`src/components/ (1,234 files)`).
//!
//! What must stay true: nothing under a skipped folder is ever read; the
//! listing never holds more than [`MAX_LIST_ENTRIES`] entries.

use super::ToolOutput;
use super::walk::walker;
use super::workspace::{PathError, Workspace};
use crate::present::numbers::thousands;
use serde_json::json;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Most entries `list_files` returns.
pub const MAX_LIST_ENTRIES: usize = 200;

/// One folder of the walked tree. Paths are kept as the walk found them
/// (absolute); only the entries shown are turned into text.
#[derive(Default)]
struct Folder {
    path: PathBuf,
    parent: usize,
    depth: usize,
    files: Vec<PathBuf>,
    folders: Vec<usize>,
    /// Files anywhere below it.
    count: usize,
}

/// What one walking thread found, handed over when the thread is done.
struct Found<'a> {
    local: Vec<(usize, PathBuf, bool)>,
    out: &'a Mutex<Vec<(usize, PathBuf, bool)>>,
}

impl Drop for Found<'_> {
    fn drop(&mut self) {
        if let Ok(mut out) = self.out.lock() {
            out.append(&mut self.local);
        }
    }
}

pub fn list_files_depth(ws: &Workspace, path: &str, depth: Option<u64>) -> ToolOutput {
    list(ws, path, depth).unwrap_or_else(|e| ToolOutput::error(e.0))
}

/// `list_files {path}`: as many levels as fit.
pub fn list_files(ws: &Workspace, path: &str) -> ToolOutput {
    list_files_depth(ws, path, None)
}

fn list(ws: &Workspace, path: &str, depth: Option<u64>) -> Result<ToolOutput, PathError> {
    let rel = Workspace::check(path)?;
    if depth == Some(0) {
        return Err(PathError(
            "depth counts folder levels to show; give 1 or more, or leave it out".into(),
        ));
    }
    ws.deny().check(&rel)?;
    match ws.metadata(&rel)? {
        None => {
            return Err(PathError(format!(
                "{} does not exist; use list_files with path \".\" to see the workspace",
                rel.display()
            )));
        }
        Some(m) if !m.is_dir() => {
            return Err(PathError(format!(
                "{} is a file, not a folder; use read_file to read it",
                rel.display()
            )));
        }
        Some(_) => {}
    }
    // The folder was opened through the capability, so its real path lies
    // inside the root (and outside `.stepwise/`); the walk never follows symlinks.
    let start = ws.real_dir(&rel)?;
    let folders = walk(ws, &start);
    let max_depth = depth.map_or(usize::MAX, |d| usize::try_from(d).unwrap_or(usize::MAX));
    let (entries, collapsed, cut) = overview(&folders, max_depth, ws.root());
    let total = folders[0].count;
    let truncated = collapsed > 0 || cut;
    let files_word = |n: usize| {
        if n == 1 {
            "1 file".to_string()
        } else {
            format!("{} files", thousands(n))
        }
    };
    let summary = if truncated {
        format!("{} entries, {}", entries.len(), files_word(total))
    } else {
        files_word(total)
    };
    let mut payload = json!({
        "path": rel.display(),
        "files": entries,
        "total_files": total,
        "truncated": truncated,
    });
    if truncated {
        let mut note = format!(
            "an overview of {} in at most {MAX_LIST_ENTRIES} entries",
            files_word(total)
        );
        if collapsed > 0 {
            note.push_str(
                "; an entry ending in `/ (N files)` is a folder not opened here: call list_files on it to see inside",
            );
        }
        if cut {
            note.push_str(&format!(
                "; {} holds more entries than fit, only the first {MAX_LIST_ENTRIES} are shown",
                rel.display()
            ));
        }
        payload["note"] = json!(note);
    }
    Ok(ToolOutput::ok(summary, payload))
}

/// The folder tree under `start` (index 0), with file counts. The walk runs
/// on every core; the tree is built afterwards, parents first.
fn walk(ws: &Workspace, start: &Path) -> Vec<Folder> {
    let found = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    walker(start).threads(threads).build_parallel().run(|| {
        let mut mine = Found {
            local: Vec::new(),
            out: &found,
        };
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return ignore::WalkState::Continue;
            };
            let Some(kind) = entry.file_type() else {
                return ignore::WalkState::Continue;
            };
            let depth = entry.depth();
            if depth == 0 {
                return ignore::WalkState::Continue;
            }
            if kind.is_dir() {
                mine.local.push((depth, entry.into_path(), true));
            } else if kind.is_file() {
                let name = entry.file_name().to_string_lossy();
                let relative = entry.path().strip_prefix(ws.root()).unwrap_or(entry.path());
                if !ws.deny().denies_walked(relative, &name) {
                    mine.local.push((depth, entry.into_path(), false));
                }
            }
            ignore::WalkState::Continue
        })
    });
    let mut entries = found.into_inner().unwrap_or_else(|e| e.into_inner());
    entries.sort_unstable_by_key(|e| e.0);
    let mut folders = vec![Folder {
        path: start.to_path_buf(),
        ..Folder::default()
    }];
    let mut index: HashMap<PathBuf, usize> = HashMap::from([(start.to_path_buf(), 0)]);
    for (depth, path, is_dir) in entries {
        let Some(&parent) = path.parent().and_then(|p| index.get(p)) else {
            continue;
        };
        if is_dir {
            let id = folders.len();
            index.insert(path.clone(), id);
            folders.push(Folder {
                path,
                parent,
                depth,
                ..Folder::default()
            });
            folders[parent].folders.push(id);
        } else {
            folders[parent].files.push(path);
        }
    }
    // Children come after their parents: add counts up from the leaves.
    for id in (0..folders.len()).rev() {
        folders[id].count += folders[id].files.len();
        if id != 0 {
            let parent = folders[id].parent;
            folders[parent].count += folders[id].count;
        }
    }
    folders
}

/// Entries to show, how many folders stay closed, and whether the start
/// folder itself had more entries than fit.
fn overview(folders: &[Folder], max_depth: usize, root: &Path) -> (Vec<String>, usize, bool) {
    let shown = |p: &Path| {
        p.strip_prefix(root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    let mut open = vec![false; folders.len()];
    let size = |f: &Folder| f.files.len() + f.folders.len();
    let cut = size(&folders[0]) > MAX_LIST_ENTRIES;
    let mut count = size(&folders[0]).min(MAX_LIST_ENTRIES);
    open[0] = true;
    let mut queue: VecDeque<usize> = sorted_folders(folders, 0).into();
    while let Some(id) = queue.pop_front() {
        let folder = &folders[id];
        if folder.depth >= max_depth || size(folder) == 0 || cut {
            continue;
        }
        if count - 1 + size(folder) <= MAX_LIST_ENTRIES {
            count = count - 1 + size(folder);
            open[id] = true;
            queue.extend(sorted_folders(folders, id));
        }
    }
    let mut entries: Vec<String> = Vec::new();
    let mut collapsed = 0;
    let mut stack = vec![0];
    while let Some(id) = stack.pop() {
        let folder = &folders[id];
        entries.extend(folder.files.iter().map(|f| shown(f)));
        for &child in &folder.folders {
            if open[child] {
                stack.push(child);
            } else {
                collapsed += 1;
                let n = folders[child].count;
                let word = if n == 1 { "file" } else { "files" };
                entries.push(format!(
                    "{}/ ({} {word})",
                    shown(&folders[child].path),
                    thousands(n)
                ));
            }
        }
    }
    entries.sort();
    if cut {
        entries.truncate(MAX_LIST_ENTRIES);
        collapsed = entries
            .iter()
            .filter(|e| e.ends_with(" files)") || e.ends_with(" file)"))
            .count();
    }
    (entries, collapsed, cut)
}

fn sorted_folders(folders: &[Folder], id: usize) -> Vec<usize> {
    let mut children = folders[id].folders.clone();
    children.sort_by(|a, b| folders[*a].path.cmp(&folders[*b].path));
    children
}
