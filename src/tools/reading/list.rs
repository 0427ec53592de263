//! `list_files {path, depth?}`: an overview of a folder that stays useful on
//! a tree of any size. Breadth first, a folder is opened while everything
//! fits in [`MAX_LIST_ENTRIES`]; a folder that does not fit stays one entry
//! with its count (`src/components/ (1,234 files)`). The whole tree is
//! counted first, by walks that keep nothing per file (the tree cut into
//! parts, one thread each); then only the folders the overview opens are
//! listed by name.
//!
//! A folder's count is the number of files below it the model could open
//! with `read_file`'s path rules: regular files (not symlinks) outside hidden,
//! cache and `.gitignore`d folders, that are not hidden themselves, not
//! `.gitignore`d and not on the deny list (fixed names and `deny_paths`).
//!
//! What must stay true: nothing under a skipped folder is ever read; the
//! listing never holds more than [`MAX_LIST_ENTRIES`] entries; the counts and
//! entries are those a full walk of the folder would give.

use crate::text::numbers::thousands;
use crate::tools::ToolOutput;
use crate::tools::reading::walk::{
    SPLIT_LEVELS, Surveyed, entries, groups, in_parallel, parts, survey, survey_all,
};
use crate::tools::workspace::{PathError, Workspace};
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
    /// Its files, by name: only for a folder the overview opens.
    files: Vec<PathBuf>,
    folders: Vec<usize>,
    /// Files directly in it.
    direct: usize,
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
    // A folder only a staged task's stage has: its staged files.
    if ws.stage().is_some() && ws.real_dir(&rel).is_err() {
        let (written, _) = staged_under(ws, &rel);
        let summary = format!("{} staged files", written.len());
        let payload = json!({"path": rel.display(), "files": written, "total_files": written.len(), "truncated": false});
        return Ok(ToolOutput::ok(summary, payload));
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
    if ws.stage().is_some() {
        let (written, deleted) = staged_under(ws, &rel);
        if !written.is_empty() || !deleted.is_empty() {
            payload["staged"] = json!({"written": written, "deleted": deleted});
            payload["staged_note"] = json!(
                "this task works in a stage: the files under `staged` were written or deleted in it, and count as shown there, whatever the listing above says"
            );
        }
    }
    Ok(ToolOutput::ok(summary, payload))
}

/// The files a staged task's stage wrote and deleted under `rel`.
fn staged_under(
    ws: &Workspace,
    rel: &crate::tools::workspace::RelPath,
) -> (Vec<String>, Vec<String>) {
    let (mut written, mut deleted) = (Vec::new(), Vec::new());
    let Some(stage) = ws.stage() else {
        return (written, deleted);
    };
    let top = matches!(rel.as_path().to_str(), Some("" | "."));
    for (path, gone) in stage.paths() {
        if !(top || Path::new(&path).starts_with(rel.as_path())) {
            continue;
        }
        match gone {
            false => written.push(path),
            true => deleted.push(path),
        }
    }
    (written, deleted)
}

/// The folders under the start folder, as `list_files` sees them. Index 0
/// is the start folder; children come after their parents.
struct Tree {
    folders: Vec<Folder>,
    open: Vec<bool>,
    /// The start folder alone holds more entries than fit.
    cut: bool,
}

/// Build the tree under `start`: every folder's files are counted (by the
/// walks of [`survey`], on every core), the folders that fit in
/// [`MAX_LIST_ENTRIES`] are opened breadth first, and only the open folders'
/// files are listed by name.
fn walk(ws: &Workspace, start: &Path, max_depth: usize) -> Tree {
    let mut tree = Tree {
        folders: vec![Folder {
            path: start.to_path_buf(),
            ..Folder::default()
        }],
        open: vec![true],
        cut: false,
    };
    count_all(ws, &mut tree);
    let size = |f: &Folder| f.direct + f.folders.len();
    tree.cut = size(&tree.folders[0]) > MAX_LIST_ENTRIES;
    let mut count = size(&tree.folders[0]).min(MAX_LIST_ENTRIES);
    let mut frontier = if tree.cut {
        Vec::new()
    } else {
        sorted_folders(&tree.folders, 0)
    };
    while !frontier.is_empty() {
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
    name_open_files(ws, &mut tree);
    tree
}

/// Count the files of every folder under the start folder: the upper
/// levels a level at a time until there are parts enough for every core,
/// then each part in one walk. Each folder is read once here (the folders
/// the overview opens are read again, to name their entries).
fn count_all(ws: &Workspace, tree: &mut Tree) {
    let (deny, root) = (ws.deny(), ws.root());
    let top = survey(deny, root, &tree.folders[0].path, Some(1));
    let mut leaves = graft(tree, 0, top);
    for _ in 0..SPLIT_LEVELS {
        if leaves.len() >= parts() {
            break;
        }
        leaves = survey_each(ws, tree, &leaves, Some(1));
    }
    survey_each(ws, tree, &leaves, None);
    // Children come after their parents: add counts up from the leaves.
    for folder in tree.folders.iter_mut() {
        folder.count = folder.direct;
    }
    for id in (1..tree.folders.len()).rev() {
        let parent = tree.folders[id].parent;
        tree.folders[parent].count += tree.folders[id].count;
    }
}

/// Survey the folders `ids` of the tree in parallel, each to `depth`, and
/// graft what was found; returns the folders found but not yet surveyed.
fn survey_each(ws: &Workspace, tree: &mut Tree, ids: &[usize], depth: Option<usize>) -> Vec<usize> {
    let (deny, root) = (ws.deny(), ws.root());
    let paths: Vec<PathBuf> = ids
        .iter()
        .map(|&id| tree.folders[id].path.clone())
        .collect();
    let found = in_parallel(&groups(&paths), |group| {
        survey_all(deny, root, group, depth)
    });
    let mut leaves = Vec::new();
    for (&id, surveyed) in ids.iter().zip(found.into_iter().flatten()) {
        leaves.extend(graft(tree, id, surveyed));
    }
    if depth.is_none() { Vec::new() } else { leaves }
}

/// Add what a survey of folder `id` found to the tree (the survey's first
/// folder is `id` itself); returns the new folders a depth-limited survey
/// did not enter.
fn graft(tree: &mut Tree, id: usize, surveyed: Vec<Surveyed>) -> Vec<usize> {
    let base = tree.folders[id].depth;
    let mut ids = Vec::with_capacity(surveyed.len());
    let mut leaves = Vec::new();
    for (i, s) in surveyed.into_iter().enumerate() {
        if i == 0 {
            tree.folders[id].direct = s.files;
            ids.push(id);
            continue;
        }
        let (new, parent) = (tree.folders.len(), ids[s.parent]);
        tree.folders.push(Folder {
            path: s.path,
            parent,
            depth: base + s.depth,
            direct: s.files,
            ..Folder::default()
        });
        tree.open.push(false);
        tree.folders[parent].folders.push(new);
        ids.push(new);
        if !s.entered {
            leaves.push(new);
        }
    }
    leaves
}

/// Name the files of the open folders (their direct files), in parallel.
fn name_open_files(ws: &Workspace, tree: &mut Tree) {
    let (deny, root) = (ws.deny(), ws.root());
    let ids: Vec<usize> = (0..tree.folders.len())
        .filter(|&id| tree.open[id] && tree.folders[id].direct > 0)
        .collect();
    let paths: Vec<&Path> = ids
        .iter()
        .map(|&id| tree.folders[id].path.as_path())
        .collect();
    let named = in_parallel(&paths, |dir| entries(deny, root, dir).0);
    for (id, files) in ids.into_iter().zip(named) {
        tree.folders[id].files = files;
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
