//! The stale-write guard: remembers, per file, a SHA-256 of the content the
//! model last read or stepwise last wrote. An edit is allowed only while the
//! file on disk still has that content, so an edit made meanwhile by the user
//! (in their editor, or by a test run) is never overwritten unseen. A file the
//! model never read may be created, but not overwritten.

use super::path::{PathError, RelPath};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

type Hash = [u8; 32];

fn hash(bytes: &[u8]) -> Hash {
    Sha256::digest(bytes).into()
}

/// What the model knows about each file of the workspace.
#[derive(Debug, Default)]
pub struct EditGuard {
    seen: Mutex<HashMap<RelPath, Hash>>,
}

impl EditGuard {
    /// The model was shown these bytes, or stepwise just wrote them.
    pub fn remember(&self, rel: &RelPath, bytes: &[u8]) {
        self.lock().insert(rel.clone(), hash(bytes));
    }

    /// The file does not exist (any more): nothing is known about it.
    pub fn forget(&self, rel: &RelPath) {
        self.lock().remove(rel);
    }

    /// Whether an edit of `rel`, whose current content on disk is `current`
    /// (`None`: the file does not exist), may go ahead.
    pub fn check(&self, rel: &RelPath, current: Option<&[u8]>) -> Result<(), PathError> {
        let known = self.lock().get(rel).copied();
        let path = rel.display();
        match (known, current) {
            (None, None) => Ok(()),
            (Some(h), Some(bytes)) if h == hash(bytes) => Ok(()),
            (None, Some(_)) => Err(PathError(format!(
                "{path} already exists and you have not read it; nothing was written. \
                 Call read_file on {path} first, then make your edit against what it holds now"
            ))),
            (Some(_), Some(_)) => Err(PathError(format!(
                "{path} changed on disk since you last read it (someone edited it); nothing was written, \
                 and their edit is kept. Call read_file on {path} again and redo your edit against its current content"
            ))),
            (Some(_), None) => Err(PathError(format!(
                "{path} was deleted since you last read it; nothing was written. \
                 Call list_files to see what exists now before recreating it"
            ))),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RelPath, Hash>> {
        // The map holds plain hashes: a panic elsewhere cannot leave it half-updated.
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Workspace;

    #[test]
    fn states_and_their_verdicts() {
        let guard = EditGuard::default();
        let rel = Workspace::check("a.py").unwrap();
        assert!(guard.check(&rel, None).is_ok(), "creating an unknown file");
        let never = guard.check(&rel, Some(b"x")).unwrap_err().0;
        assert!(never.contains("not read it"), "{never}");
        guard.remember(&rel, b"x");
        assert!(guard.check(&rel, Some(b"x")).is_ok());
        let changed = guard.check(&rel, Some(b"y")).unwrap_err().0;
        assert!(changed.contains("read_file") && changed.contains("changed"));
        assert!(guard.check(&rel, None).unwrap_err().0.contains("deleted"));
        guard.forget(&rel);
        assert!(guard.check(&rel, None).is_ok());
        let same = Workspace::check("./sub/../a.py").unwrap();
        guard.remember(&rel, b"z");
        assert!(
            guard.check(&same, Some(b"z")).is_ok(),
            "keys are normalized"
        );
    }
}
