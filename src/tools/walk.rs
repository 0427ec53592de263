//! The one walk of the workspace that `list_files` and `search_text` share:
//! hidden entries, `.gitignore`d paths and the cache and tool folders of
//! [`SKIPPED_DIRS`] are never entered, and symlinks are never followed.

use super::workspace::PRIVATE_DIR;
use std::path::Path;

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
