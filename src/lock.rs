//! One stepwise process per workspace: an OS file lock (`flock`) on
//! `.stepwise/lock`, held while any session of the process works there and
//! released by the kernel when the process ends, however it ends. The file
//! also holds the owner's pid, for the message another process prints.
//!
//! Sessions of one process share the lock (an editor opens several threads
//! on one project in one agent process); keeping them from writing at once
//! is the front end's business (`acp` serializes writing turns).
//!
//! What must stay true: the lock is the kernel's, never a pid check, so two
//! processes can never both hold it; the lock file is never deleted (deleting
//! it would let a second process lock a fresh file while the first still
//! holds the old one); the refusal names the other process, never this one.

use crate::state_dir::StateDir;
use cap_std::fs::OpenOptions;
use std::collections::HashMap;
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

const FILE: &str = "lock";

/// The locks this process holds, by state folder.
static HELD: Mutex<Option<HashMap<PathBuf, Weak<Held>>>> = Mutex::new(None);

fn held() -> MutexGuard<'static, Option<HashMap<PathBuf, Weak<Held>>>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// One held lock file, shared by the process's sessions on its workspace.
#[derive(Debug)]
struct Held {
    key: PathBuf,
    file: Option<File>,
}

impl Drop for Held {
    fn drop(&mut self) {
        // Closed under the table's lock: a session starting meanwhile
        // either finds this lock gone from the table and the file free, or
        // waits for both.
        let mut table = held();
        if let Some(map) = table.as_mut()
            && map.get(&self.key).is_some_and(|w| w.strong_count() == 0)
        {
            map.remove(&self.key);
        }
        drop(self.file.take());
    }
}

/// Held for the life of a session; the lock is released when the last
/// session of the process on the workspace lets go.
#[derive(Debug, Clone)]
pub struct WorkspaceLock {
    _held: Arc<Held>,
}

impl WorkspaceLock {
    /// Take the lock in `state` (or share the one this process holds there),
    /// or say which other process holds it.
    pub fn acquire(state: &StateDir) -> Result<WorkspaceLock, String> {
        let key = std::fs::canonicalize(state.path()).unwrap_or_else(|_| state.path().into());
        loop {
            let mut table = held();
            let map = table.get_or_insert_with(HashMap::new);
            match map.get(&key).map(Weak::upgrade) {
                Some(Some(shared)) => return Ok(WorkspaceLock { _held: shared }),
                // Its last session is letting go: the file closes once the
                // table is free again.
                Some(None) => {
                    drop(table);
                    std::thread::yield_now();
                    continue;
                }
                None => {}
            }
            let file = lock_file(state)?;
            let shared = Arc::new(Held {
                key: key.clone(),
                file: Some(file),
            });
            map.insert(key, Arc::downgrade(&shared));
            return Ok(WorkspaceLock { _held: shared });
        }
    }
}

/// The lock file of `state`, locked by this process.
fn lock_file(state: &StateDir) -> Result<File, String> {
    let path = state.path().join(FILE);
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true);
    let mut file = state
        .dir()
        .open_with(FILE, &options)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?
        .into_std();
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut owner = String::new();
            let _ = file.read_to_string(&mut owner);
            return Err(refusal(owner.trim(), state.path()));
        }
        Err(TryLockError::Error(e)) => {
            return Err(format!("cannot lock {}: {e}", path.display()));
        }
    }
    // Ours now: say who holds it (a failure here only costs the message).
    let _ = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| write!(file, "{}", std::process::id()));
    Ok(file)
}

/// What another process holding the lock is told. The pid in the file is
/// named unless it is this process's own (the holder has not written its
/// own yet): then no pid is named.
fn refusal(owner: &str, state: &Path) -> String {
    let who = match owner.parse::<u32>() {
        Ok(pid) if pid != std::process::id() => format!("another stepwise (pid {pid})"),
        _ => "another stepwise".to_string(),
    };
    let workspace = state.parent().unwrap_or(state);
    format!(
        "{who} is already working on {}; close it first",
        workspace.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid_in(ws: &Path) -> String {
        std::fs::read_to_string(ws.join(".stepwise/lock")).unwrap()
    }

    /// The lock file on a descriptor of its own, as another process has it.
    fn foreign(ws: &Path) -> File {
        File::options()
            .read(true)
            .write(true)
            .open(ws.join(".stepwise/lock"))
            .unwrap()
    }

    #[test]
    fn sessions_of_one_process_share_the_lock_until_the_last_lets_go() {
        let ws = tempfile::tempdir().unwrap();
        let state = StateDir::open(ws.path()).unwrap();
        let first = WorkspaceLock::acquire(&state).unwrap();
        assert_eq!(pid_in(ws.path()), std::process::id().to_string());
        let second = WorkspaceLock::acquire(&state).unwrap();
        assert!(foreign(ws.path()).try_lock().is_err(), "held");
        drop(first);
        assert!(foreign(ws.path()).try_lock().is_err(), "still held");
        drop(second);
        // The file stays (deleting it would race); the lock is free again.
        assert!(ws.path().join(".stepwise/lock").exists());
        let other = foreign(ws.path());
        other.try_lock().unwrap();
        drop(other);
        let _again = WorkspaceLock::acquire(&state).unwrap();
    }

    #[test]
    fn another_holder_is_named_by_its_pid_and_never_by_ours() {
        let ws = tempfile::tempdir().unwrap();
        let state = StateDir::open(ws.path()).unwrap();
        let mut other = foreign_created(ws.path());
        other.try_lock().unwrap();
        write!(other, "4242").unwrap();
        let err = WorkspaceLock::acquire(&state).unwrap_err();
        assert!(
            err.contains("already working") && err.contains("pid 4242"),
            "{err}"
        );
        other.set_len(0).unwrap();
        other.rewind().unwrap();
        write!(other, "{}", std::process::id()).unwrap();
        let err = WorkspaceLock::acquire(&state).unwrap_err();
        assert!(!err.contains("pid"), "{err}");
    }

    fn foreign_created(ws: &Path) -> File {
        File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(ws.join(".stepwise/lock"))
            .unwrap()
    }

    #[test]
    fn a_lock_file_without_a_live_lock_is_taken_whatever_pid_it_names() {
        let ws = tempfile::tempdir().unwrap();
        let state = StateDir::open(ws.path()).unwrap();
        // pid 1 is alive: a pid check would refuse; the kernel lock is free.
        std::fs::write(ws.path().join(".stepwise/lock"), "1").unwrap();
        let _taken = WorkspaceLock::acquire(&state).unwrap();
        assert_eq!(pid_in(ws.path()), std::process::id().to_string());
    }

    #[test]
    fn of_many_racing_for_one_stale_lock_all_share_one_kernel_lock() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join(".stepwise")).unwrap();
        std::fs::write(ws.path().join(".stepwise/lock"), "999999999").unwrap();
        let barrier = std::sync::Barrier::new(8);
        let held: Vec<Option<WorkspaceLock>> = std::thread::scope(|s| {
            let racers: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        let state = StateDir::open(ws.path()).unwrap();
                        barrier.wait();
                        WorkspaceLock::acquire(&state).ok()
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert!(held.iter().all(Option::is_some));
        assert!(foreign(ws.path()).try_lock().is_err(), "one kernel lock");
        drop(held);
        foreign(ws.path()).try_lock().unwrap();
    }
}
