//! The documentation the tests hold to the code: `README.md` and every page
//! of `docs/`, read from the repository.

use std::path::{Path, PathBuf};

/// The repository's root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md`, then each `docs/*.md` page by name: (path from the root, text).
pub fn pages() -> Vec<(PathBuf, String)> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("a docs folder")
        .map(|e| e.expect("a docs entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| {
            p.strip_prefix(root())
                .expect("inside the root")
                .to_path_buf()
        })
        .collect();
    names.sort();
    names.insert(0, PathBuf::from("README.md"));
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(root().join(&name)).expect("a readable page");
            (name, text)
        })
        .collect()
}

/// Every page as one text, each starting on a line of its own.
pub fn all_text() -> String {
    pages()
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join("\n")
}
