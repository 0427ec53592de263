//! What the session changed and keeps: the change log with undo (`changes`,
//! stored by `versions`, written by `changes_store`), what the front end sees
//! of it (`review`, `git`), saving and restoring a session (`saved`, `restore`)
//! and resuming a task (`carry`).
//!
//! What must stay true: undo never overwrites a file changed outside the
//! session since.

pub(super) mod carry;
pub(super) mod changes;
pub(super) mod changes_store;
pub(super) mod git;
pub(super) mod restore;
pub(super) mod review;
pub mod saved;
pub(super) mod versions;
