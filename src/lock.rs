//! One stepwise per workspace: an OS file lock (`flock`) on `.stepwise/lock`,
//! held for the life of the session and released by the kernel when the
//! process ends, however it ends. The file also holds the owner's pid, for
//! the message a second stepwise prints.
//!
//! What must stay true: the lock is the kernel's, never a pid check, so two
//! processes can never both hold it; the lock file is never deleted (deleting
//! it would let a second process lock a fresh file while the first still
//! holds the old one).

use crate::state_dir::StateDir;
use cap_std::fs::OpenOptions;
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};

const FILE: &str = "lock";

/// Held for the life of a session; dropping it releases the lock.
#[derive(Debug)]
pub struct WorkspaceLock {
    _file: File,
}

impl WorkspaceLock {
    /// Take the lock in `state`, or say who holds it.
    pub fn acquire(state: &StateDir) -> Result<WorkspaceLock, String> {
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
                let who = match owner.trim().parse::<u32>() {
                    Ok(pid) => format!("another stepwise (pid {pid})"),
                    Err(_) => "another stepwise".to_string(),
                };
                let workspace = state.path().parent().unwrap_or(state.path());
                return Err(format!(
                    "{who} is already working on {}; close it first",
                    workspace.display()
                ));
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
        Ok(WorkspaceLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid_in(ws: &std::path::Path) -> String {
        std::fs::read_to_string(ws.join(".stepwise/lock")).unwrap()
    }

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let ws = tempfile::tempdir().unwrap();
        let state = StateDir::open(ws.path()).unwrap();
        let first = WorkspaceLock::acquire(&state).unwrap();
        assert_eq!(pid_in(ws.path()), std::process::id().to_string());
        let err = WorkspaceLock::acquire(&state).unwrap_err();
        assert!(
            err.contains("already working") && err.contains(&std::process::id().to_string()),
            "{err}"
        );
        drop(first);
        // The file stays (deleting it would race); the lock is free again.
        assert!(ws.path().join(".stepwise/lock").exists());
        let _again = WorkspaceLock::acquire(&state).unwrap();
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
    fn of_many_racing_for_one_stale_lock_exactly_one_wins() {
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
        assert_eq!(held.iter().filter(|l| l.is_some()).count(), 1);
    }
}
