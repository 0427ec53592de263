//! stepwise's own folder in a workspace, `.stepwise/` (the lock, the session
//! transcripts). It is reached only through a capability on the workspace,
//! never by an ambient path, so nothing a stranger's repository puts there
//! can lead a write outside the workspace.
//!
//! What must stay true: a `.stepwise` that is a symlink (or anything but a
//! folder) is refused with an error that says so; everything stepwise writes
//! under it is opened through [`StateDir::dir`]; the folder ignores itself
//! (a `.gitignore` of `*` inside, written when stepwise creates the folder,
//! as pytest does for `.pytest_cache`), and the project's own `.gitignore`
//! is never touched.

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::path::{Path, PathBuf};

/// The folder's name inside a workspace (the tools cannot reach it).
pub use crate::tools::workspace::PRIVATE_DIR as NAME;

/// What `.stepwise/.gitignore` says: everything here is stepwise's own.
const IGNORE_ALL: &str = "# Created by stepwise: its lock and transcripts stay out of git.\n*\n";

/// An open `.stepwise/` folder of one workspace.
#[derive(Debug)]
pub struct StateDir {
    dir: Dir,
    path: PathBuf,
}

impl StateDir {
    /// Open `workspace/.stepwise`, creating it when it does not exist.
    pub fn open(workspace: &Path) -> Result<StateDir, String> {
        let path = workspace.join(NAME);
        let root = Dir::open_ambient_dir(workspace, ambient_authority())
            .map_err(|e| format!("cannot open workspace {}: {e}", workspace.display()))?;
        match root.symlink_metadata(NAME) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(format!(
                    "{} is a symbolic link; stepwise keeps its lock and transcripts only in a real folder there (remove the link, or run with --no-log elsewhere)",
                    path.display()
                ));
            }
            Ok(meta) if !meta.is_dir() => {
                return Err(format!("{} exists but is not a folder", path.display()));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match root.create_dir(NAME) {
                Ok(()) => {
                    // Best effort: a folder without it still works.
                    let _ = root.write(Path::new(NAME).join(".gitignore"), IGNORE_ALL);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
            },
            Err(e) => return Err(format!("cannot look at {}: {e}", path.display())),
        }
        // Opened beneath the workspace: even a link swapped in since the
        // check above cannot lead outside it.
        let dir = root
            .open_dir(NAME)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        Ok(StateDir { dir, path })
    }

    /// The folder, as a capability: open everything inside through it.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Where it is, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_folder_ignores_itself_and_the_project_gitignore_is_left_alone() {
        let ws = tempfile::tempdir().unwrap();
        StateDir::open(ws.path()).unwrap();
        let ignore = std::fs::read_to_string(ws.path().join(".stepwise/.gitignore")).unwrap();
        assert!(ignore.lines().any(|l| l == "*"), "{ignore}");
        assert!(!ws.path().join(".gitignore").exists());
        // An existing folder (the user's own choice) is not changed.
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir(other.path().join(".stepwise")).unwrap();
        StateDir::open(other.path()).unwrap();
        assert!(!other.path().join(".stepwise/.gitignore").exists());
    }

    #[test]
    fn creates_the_folder_and_opens_it_again() {
        let ws = tempfile::tempdir().unwrap();
        let state = StateDir::open(ws.path()).unwrap();
        assert!(ws.path().join(NAME).is_dir());
        assert_eq!(state.path(), ws.path().join(NAME));
        StateDir::open(ws.path()).unwrap();
    }

    #[test]
    fn a_symlinked_state_folder_is_refused_and_nothing_is_written_through_it() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join(NAME)).unwrap();
        let err = StateDir::open(ws.path()).unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_state_file_instead_of_a_folder_is_refused() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join(NAME), "x").unwrap();
        let err = StateDir::open(ws.path()).unwrap_err();
        assert!(err.contains("not a folder"), "{err}");
    }
}
