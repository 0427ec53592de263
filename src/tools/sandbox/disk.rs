//! The disk one test run may use as a whole: the file size limit bounds one
//! file, not a run that fills the disk through many of them. Before the run,
//! stepwise reads how much each file system it may write (the workspace's,
//! the temporary folder's, `/dev/shm`'s, the build outputs') has free; while
//! it goes, it reads them again every 50 ms and stops the run once it
//! has used more than its budget, in bytes or in new files, or once a file
//! system has less than [`FLOOR`] left.
//!
//! Measured, not estimated: `statvfs` counts space the kernel has promised
//! (ext4's delayed allocation included) and what tmpfs holds. What it cannot
//! tell apart: another program writing to the same disk meanwhile uses the
//! run's budget too (the run is stopped early, never late), and a run can
//! overshoot by what it writes within one interval.
//!
//! What must stay true: a file system is counted once however many writable
//! folders are on it; space a run frees again is its own to use; reading is
//! one system call per file system, no walk.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::limits::{DISK_FILES as FILES, DISK_FLOOR as FLOOR};

/// Why a run was stopped for its disk use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// More bytes or files than its budget.
    Budget,
    /// A file system it writes came down to [`FLOOR`].
    Floor,
}

struct System {
    path: CString,
    free_bytes: u64,
    free_files: u64,
}

/// The file systems of one run and what each had free when it started.
pub struct Watch {
    systems: Vec<System>,
    budget: u64,
}

/// `(free bytes, free inodes)` for unprivileged use, `None` when unreadable.
fn free(path: &CString) -> Option<(u64, u64)> {
    // SAFETY: statvfs on a NUL-terminated path into a zeroed struct.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(path.as_ptr(), &mut st) != 0 {
            return None;
        }
        #[allow(clippy::unnecessary_cast)]
        let bytes = (st.f_bavail as u64).saturating_mul(st.f_frsize as u64);
        #[allow(clippy::unnecessary_cast)]
        Some((bytes, st.f_favail as u64))
    }
}

impl Watch {
    /// The file systems holding `folders` (those that exist), and a budget
    /// of `budget` bytes for the run.
    pub fn new<'a>(folders: impl IntoIterator<Item = &'a Path>, budget: u64) -> Self {
        use std::os::unix::fs::MetadataExt;
        let mut seen = Vec::new();
        let mut systems = Vec::new();
        for folder in folders {
            let Ok(meta) = std::fs::metadata(folder) else {
                continue;
            };
            if seen.contains(&meta.dev()) {
                continue;
            }
            let Ok(path) = CString::new(folder.as_os_str().as_bytes()) else {
                continue;
            };
            if let Some((free_bytes, free_files)) = free(&path) {
                seen.push(meta.dev());
                systems.push(System {
                    path,
                    free_bytes,
                    free_files,
                });
            }
        }
        Watch { systems, budget }
    }

    /// How many file systems are watched.
    #[cfg(test)]
    pub fn systems(&self) -> usize {
        self.systems.len()
    }

    /// Whether the run has used more than it may, and how.
    pub fn over(&self) -> Option<Over> {
        let (mut bytes, mut files) = (0u64, 0u64);
        for system in &self.systems {
            let Some((now_bytes, now_files)) = free(&system.path) else {
                continue;
            };
            // A file system that was already below the floor is only held
            // to the budget (or no run could write there at all).
            if now_bytes < FLOOR && now_bytes < system.free_bytes {
                return Some(Over::Floor);
            }
            bytes = bytes.saturating_add(system.free_bytes.saturating_sub(now_bytes));
            files = files.saturating_add(system.free_files.saturating_sub(now_files));
        }
        (bytes > self.budget || files > FILES).then_some(Over::Budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_system_is_counted_once_and_what_a_run_writes_counts() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let missing = dir.path().join("missing");
        let watch = Watch::new([a.as_path(), b.as_path(), missing.as_path()], 1024 * 1024);
        assert_eq!(watch.systems(), 1);
        assert_eq!(watch.over(), None);
        // Written and synced, so that every file system has counted it.
        let data = vec![7u8; 16 * 1024 * 1024];
        let file = a.join("big");
        std::fs::write(&file, &data).unwrap();
        std::fs::File::open(&file).unwrap().sync_all().unwrap();
        assert_eq!(watch.over(), Some(Over::Budget));
        let roomy = Watch::new([a.as_path()], u64::MAX / 2);
        assert_eq!(roomy.over(), None, "what was there before is not the run's");
    }
}
