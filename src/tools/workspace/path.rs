//! The two path types every tool shares: `RelPath`, a normalized path inside
//! the workspace (only `Workspace::check` makes one from model input), and
//! `PathError`, a refusal written for the model. Plain data: this module
//! depends on no other tool module, so the guard and the workspace can both
//! use it.

use std::path::{Path, PathBuf};

/// A path inside the workspace, normalized (no `.`/`..`, no leading `/`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RelPath(pub(super) PathBuf);

impl RelPath {
    /// The empty path stands for the workspace root.
    pub fn is_root(&self) -> bool {
        self.0.as_os_str().is_empty()
    }

    pub fn as_path(&self) -> &Path {
        if self.is_root() {
            Path::new(".")
        } else {
            &self.0
        }
    }

    /// The display form sent to the model: `/`-separated, `.` for the root.
    pub fn display(&self) -> String {
        if self.is_root() {
            ".".into()
        } else {
            self.0.to_string_lossy().into_owned()
        }
    }

    pub fn file_name(&self) -> Option<&str> {
        self.0.file_name().and_then(|n| n.to_str())
    }
}

/// Why a path or file operation was refused. The text is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PathError(pub String);
