//! The workspace's files as a flat list of paths, for a front end's file
//! picker: the same walk and skips as `list_files` (`walk`), and a file the
//! deny list refuses is never listed. Capped, so a huge tree costs a bounded
//! walk.
//!
//! What must stay true: only files `list_files` would show are listed, with
//! `/`-separated paths relative to the root.

use crate::tools::reading::walk::walker;
use crate::tools::workspace::Workspace;

/// Most files listed.
pub const MAX_FILES: usize = 20_000;

/// Up to `cap` files of the workspace, sorted; `true` when more were left out.
pub fn workspace_files(ws: &Workspace, cap: usize) -> (Vec<String>, bool) {
    let root = ws.root();
    let mut files = Vec::new();
    let mut more = false;
    for entry in walker(root, root).build().flatten() {
        if entry.depth() == 0 || !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
        let name = entry.file_name().to_string_lossy();
        if ws.deny().denies_walked(relative, &name) {
            continue;
        }
        if files.len() == cap {
            more = true;
            break;
        }
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        files.push(parts.join("/"));
    }
    files.sort();
    (files, more)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_files_with_the_walks_skips_and_without_denied_ones() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("src/deep")).unwrap();
        std::fs::create_dir_all(p.join("node_modules/x")).unwrap();
        for f in [
            "a.py",
            "src/deep/b.rs",
            "node_modules/x/i.js",
            ".env",
            ".hidden",
            "secret.pem",
        ] {
            std::fs::write(p.join(f), "x").unwrap();
        }
        let globs = [globset::Glob::new("*.pem").unwrap()];
        let ws = Workspace::open(p).unwrap().with_deny_paths(&globs).unwrap();
        let (files, more) = workspace_files(&ws, MAX_FILES);
        assert_eq!(files, ["a.py", "src/deep/b.rs"]);
        assert!(!more);
        let (files, more) = workspace_files(&ws, 1);
        assert_eq!((files.len(), more), (1, true));
    }
}
