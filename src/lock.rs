//! One stepwise per workspace: a lock file `.stepwise/lock` holding the owner's
//! pid, taken over when that process is gone, removed when the holder exits.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Held for the life of a session; dropping it removes the lock file.
#[derive(Debug)]
pub struct WorkspaceLock {
    path: PathBuf,
}

impl WorkspaceLock {
    /// Take the lock, or say who holds it.
    pub fn acquire(workspace: &Path) -> Result<WorkspaceLock, String> {
        let dir = workspace.join(".stepwise");
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let path = dir.join("lock");
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut file) => {
                    let _ = write!(file, "{}", std::process::id());
                    return Ok(WorkspaceLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let owner = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|s| s.trim().parse::<i32>().ok());
                    match owner {
                        Some(pid) if process_alive(pid) => {
                            return Err(format!(
                                "another stepwise (pid {pid}) is already working on {}; close it first (or delete {} if that process is not stepwise)",
                                workspace.display(),
                                path.display()
                            ));
                        }
                        // The owner is gone: take the lock over.
                        _ => {
                            let _ = std::fs::remove_file(&path);
                        }
                    }
                }
                Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
            }
        }
        Err(format!("cannot take the lock {}", path.display()))
    }
}

impl Drop for WorkspaceLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn process_alive(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        // It exists but belongs to someone else.
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_refused_stale_lock_is_taken_over_and_drop_releases() {
        let dir = std::env::temp_dir().join(format!("stepwise-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let first = WorkspaceLock::acquire(&dir).unwrap();
        let err = WorkspaceLock::acquire(&dir).unwrap_err();
        assert!(
            err.contains("already working") && err.contains(&std::process::id().to_string()),
            "{err}"
        );
        drop(first);
        assert!(!dir.join(".stepwise/lock").exists());
        // A lock left by a dead process (pid far beyond pid_max) is taken over.
        std::fs::write(dir.join(".stepwise/lock"), "999999999").unwrap();
        let taken = WorkspaceLock::acquire(&dir).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join(".stepwise/lock")).unwrap(),
            std::process::id().to_string()
        );
        drop(taken);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
