//! `list_files {path, depth?}`: an overview of a folder that stays useful on
//! a tree of any size. Breadth first, a folder is opened while everything
//! fits in [`MAX_LIST_ENTRIES`]; a folder that does not fit stays one entry
//! with its count (`src/components/ (1,234 files)`). Only the folders the
//! overview may open are listed; a closed folder is only counted, by a walk
//! that keeps nothing per file.
//!
//! A folder's count is the number of files below it the model could open
//! with `read_file`'s path rules: regular files (not symlinks) outside hidden,
//! cache and `.gitignore`d folders, that are not hidden themselves, not
//! `.gitignore`d and not on the deny list (fixed names and `deny_paths`).
//!
//! What must stay true: nothing under a skipped folder is ever read; the
//! listing never holds more than [`MAX_LIST_ENTRIES`] entries; the counts and
//! entries are those a full walk of the folder would give.

use super::ToolOutput;
use super::walk::{count_files, entries, in_parallel};
use super::workspace::{PathError, Workspace};
use crate::present::numbers::thousands;
use serde_json::json;
use std::path::{Path, PathBuf};

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
    let max_depth = depth.map_or(usize::MAX, |d| usize::try_from(d).unwrap_or(usize::MAX));
    let tree = walk(ws, &start, max_depth);
    let (entries, collapsed) = overview(&tree, ws.root());
    let (total, cut) = (tree.folders[0].count, tree.cut);
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

/// The folders `list_files` looks at: every folder the overview may open is
/// listed (its direct entries read), level by level; a folder shown closed
/// is only counted. Index 0 is the start folder; children come after their
/// parents.
struct Tree {
    folders: Vec<Folder>,
    open: Vec<bool>,
    /// The start folder alone holds more entries than fit.
    cut: bool,
}

/// Build the tree under `start`: breadth first, opening a folder while its
/// entries fit in [`MAX_LIST_ENTRIES`], then count what stays closed. Each
/// folder is read once: by its listing, or by the count of a closed folder
/// above it. Listings of one level and the counts run on every core.
fn walk(ws: &Workspace, start: &Path, max_depth: usize) -> Tree {
    let (deny, root) = (ws.deny(), ws.root());
    let mut tree = Tree {
        folders: vec![Folder {
            path: start.to_path_buf(),
            ..Folder::default()
        }],
        open: vec![true],
        cut: false,
    };
    let mut listed = vec![true];
    let (files, dirs) = entries(deny, root, start);
    adopt(&mut tree, &mut listed, 0, files, dirs);
    let size = |f: &Folder| f.files.len() + f.folders.len();
    tree.cut = size(&tree.folders[0]) > MAX_LIST_ENTRIES;
    let mut count = size(&tree.folders[0]).min(MAX_LIST_ENTRIES);
    let mut frontier = if tree.cut {
        Vec::new()
    } else {
        sorted_folders(&tree.folders, 0)
    };
    while !frontier.is_empty() {
        let to_list: Vec<usize> = frontier
            .iter()
            .copied()
            .filter(|&id| tree.folders[id].depth < max_depth)
            .collect();
        let paths: Vec<&Path> = to_list
            .iter()
            .map(|&id| tree.folders[id].path.as_path())
            .collect();
        let found = in_parallel(&paths, |dir| entries(deny, root, dir));
        for (id, (files, dirs)) in to_list.into_iter().zip(found) {
            adopt(&mut tree, &mut listed, id, files, dirs);
        }
        let mut next = Vec::new();
        for id in frontier {
            let folder = &tree.folders[id];
            if folder.depth >= max_depth || size(folder) == 0 {
                continue;
            }
            if count - 1 + size(folder) <= MAX_LIST_ENTRIES {
                count = count - 1 + size(folder);
                tree.open[id] = true;
                next.extend(sorted_folders(&tree.folders, id));
            }
        }
        frontier = next;
    }
    count_closed(ws, &mut tree, &listed);
    tree
}

/// Record the listing of folder `id`: its files, and its folders as new
/// (not yet listed) entries of the tree.
fn adopt(
    tree: &mut Tree,
    listed: &mut Vec<bool>,
    id: usize,
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
) {
    listed[id] = true;
    let depth = tree.folders[id].depth + 1;
    for path in dirs {
        let child = tree.folders.len();
        tree.folders.push(Folder {
            path,
            parent: id,
            depth,
            ..Folder::default()
        });
        tree.open.push(false);
        listed.push(false);
        tree.folders[id].folders.push(child);
    }
    tree.folders[id].files = files;
}

/// Give every folder its count of files below it. A closed folder that was
/// listed and holds no folders is its own file count; any other closed
/// folder under an open one is counted by a walk; an open folder adds up
/// its files and its folders.
fn count_closed(ws: &Workspace, tree: &mut Tree, listed: &[bool]) {
    let folders = &tree.folders;
    let open = &tree.open;
    let walked: Vec<usize> = (0..folders.len())
        .filter(|&id| {
            !open[id]
                && (id == 0 || open[folders[id].parent])
                && !(listed[id] && folders[id].folders.is_empty())
        })
        .collect();
    let paths: Vec<&Path> = walked
        .iter()
        .map(|&id| folders[id].path.as_path())
        .collect();
    let counts = in_parallel(&paths, |dir| count_files(ws.deny(), ws.root(), dir));
    for folder in tree.folders.iter_mut() {
        folder.count = folder.files.len();
    }
    for (id, n) in walked.into_iter().zip(counts) {
        tree.folders[id].count = n;
    }
    // Children come after their parents: add counts up from the leaves.
    for id in (1..tree.folders.len()).rev() {
        let parent = tree.folders[id].parent;
        if tree.open[parent] {
            tree.folders[parent].count += tree.folders[id].count;
        }
    }
}

/// Entries to show, and how many folders stay closed.
fn overview(tree: &Tree, root: &Path) -> (Vec<String>, usize) {
    let (folders, open, cut) = (&tree.folders, &tree.open, tree.cut);
    let shown = |p: &Path| {
        p.strip_prefix(root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
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
    (entries, collapsed)
}

fn sorted_folders(folders: &[Folder], id: usize) -> Vec<usize> {
    let mut children = folders[id].folders.clone();
    children.sort_by(|a, b| folders[*a].path.cmp(&folders[*b].path));
    children
}
