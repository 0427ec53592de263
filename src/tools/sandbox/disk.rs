//! The disk one test run may use as a whole: the file size limit bounds one
//! file, not a run that fills the disk through many of them.
//!
//! Where the run has a disk of its own (one tmpfs of the budget holding its
//! workspace layer and temporary folders, see `linux::overlay`), the kernel
//! holds the budget there as the run writes; what is read here is what it
//! writes elsewhere (the build layer, `[sandbox] writable`), counted
//! together with what its own disk holds. Elsewhere, before the run,
//! stepwise reads how much each file system it may write (the workspace's,
//! the temporary folder's, `/dev/shm`'s, the build outputs') has free; while
//! it goes, it reads them again every 50 ms and stops the run once it has
//! used more than its budget, in bytes or in new files, or once a file
//! system that had more than [`FLOOR`] free comes down to it.
//!
//! Measured, not estimated: `statvfs` counts space the kernel has promised
//! (ext4's delayed allocation included) and what tmpfs holds; new files are
//! the growth of the inodes in use (`f_files - f_ffree`: free inodes are an
//! estimate from free space on ZFS and XFS). What it cannot tell apart:
//! another program writing to the same disk meanwhile uses the run's budget
//! too (the run is stopped early, never late), and a run can overshoot by
//! what it writes within one interval.
//!
//! What must stay true: a file system is counted once however many writable
//! folders are on it, also when they are subvolumes or datasets sharing one
//! pool (btrfs, ZFS: one key from `/proc/self/mountinfo`); space a run frees
//! again is its own to use; reading is one system call per file system, no
//! walk.

use super::limits::{DISK_FILES as FILES, DISK_FLOOR as FLOOR};
use std::ffi::CString;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Why a run was stopped for its disk use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// More bytes or files than its budget.
    Budget,
    /// A file system it writes came down to [`FLOOR`].
    Floor,
}

/// One reading of a file system: bytes free to unprivileged users, and
/// inodes in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reading {
    free: u64,
    files_used: u64,
}

struct System {
    path: CString,
    start: Reading,
}

/// The file systems of one run and what each had free when it started.
pub struct Watch {
    systems: Vec<System>,
    budget: u64,
}

/// A file system's figures, in bytes and files.
struct Figures {
    size: u64,
    /// Free to anyone (root's reserve included).
    free: u64,
    /// Free to unprivileged users.
    available: u64,
    files: u64,
    files_free: u64,
}

impl Figures {
    fn of(st: &libc::statvfs) -> Figures {
        #[allow(clippy::unnecessary_cast)]
        let block = st.f_frsize as u64;
        #[allow(clippy::unnecessary_cast)]
        Figures {
            size: (st.f_blocks as u64).saturating_mul(block),
            free: (st.f_bfree as u64).saturating_mul(block),
            available: (st.f_bavail as u64).saturating_mul(block),
            files: st.f_files as u64,
            files_free: st.f_ffree as u64,
        }
    }

    /// `statvfs` of `path`.
    fn at(path: &CString) -> Option<Figures> {
        // SAFETY: statvfs on a NUL-terminated path into a zeroed struct.
        unsafe {
            let mut st: libc::statvfs = std::mem::zeroed();
            (libc::statvfs(path.as_ptr(), &mut st) == 0).then(|| Figures::of(&st))
        }
    }

    /// `fstatvfs` of `fd`.
    fn of_fd(fd: BorrowedFd<'_>) -> Option<Figures> {
        // SAFETY: fstatvfs on a live descriptor into a zeroed struct.
        unsafe {
            let mut st: libc::statvfs = std::mem::zeroed();
            (libc::fstatvfs(fd.as_raw_fd(), &mut st) == 0).then(|| Figures::of(&st))
        }
    }
}

fn read(path: &CString) -> Option<Reading> {
    let f = Figures::at(path)?;
    Some(Reading {
        free: f.available,
        files_used: f.files.saturating_sub(f.files_free),
    })
}

/// Whether readings `(at the start, now)` of every file system show a run
/// over `budget` bytes, or a file system brought down to the floor.
fn judge(readings: impl IntoIterator<Item = (Reading, Reading)>, budget: u64) -> Option<Over> {
    let (mut bytes, mut files) = (0u64, 0u64);
    for (start, now) in readings {
        // One that had less than the floor free already is held to the
        // budget only (or no run could write there at all).
        if start.free >= FLOOR && now.free < FLOOR {
            return Some(Over::Floor);
        }
        bytes = bytes.saturating_add(start.free.saturating_sub(now.free));
        files = files.saturating_add(now.files_used.saturating_sub(start.files_used));
    }
    (bytes > budget || files > FILES).then_some(Over::Budget)
}

/// What identifies the file system a folder is on: its block device (and
/// type) or its ZFS pool from `/proc/self/mountinfo`, else its device number.
fn system_key(dev: u64, mountinfo: &str) -> String {
    #[cfg(target_os = "linux")]
    {
        let wanted = format!("{}:{}", libc::major(dev), libc::minor(dev));
        for line in mountinfo.lines() {
            let mut fields = line.split(' ');
            if fields.nth(2) != Some(wanted.as_str()) {
                continue;
            }
            let Some((_, after)) = line.split_once(" - ") else {
                continue;
            };
            let mut rest = after.split(' ');
            let (Some(kind), Some(source)) = (rest.next(), rest.next()) else {
                continue;
            };
            if kind == "zfs" {
                let pool = source.split('/').next().unwrap_or(source);
                return format!("zfs {pool}");
            }
            if source.starts_with("/dev/") {
                return format!("{kind} {source}");
            }
            break;
        }
    }
    let _ = mountinfo;
    format!("dev {dev}")
}

impl Watch {
    /// The file systems holding `folders` (those that exist), and a budget
    /// of `budget` bytes for the run.
    pub fn new<'a>(folders: impl IntoIterator<Item = &'a Path>, budget: u64) -> Self {
        use std::os::unix::fs::MetadataExt;
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mut seen = Vec::new();
        let mut systems = Vec::new();
        for folder in folders {
            let Ok(meta) = std::fs::metadata(folder) else {
                continue;
            };
            let key = system_key(meta.dev(), &mountinfo);
            if seen.contains(&key) {
                continue;
            }
            let Ok(path) = CString::new(folder.as_os_str().as_bytes()) else {
                continue;
            };
            if let Some(start) = read(&path) {
                seen.push(key);
                systems.push(System { path, start });
            }
        }
        Watch { systems, budget }
    }

    /// How many file systems are watched.
    #[cfg(test)]
    pub fn systems(&self) -> usize {
        self.systems.len()
    }

    /// Whether the run has used more than it may, and how; `own`: the
    /// run's own disk, whose use counts from nothing.
    pub fn over(&self, own: Option<BorrowedFd<'_>>) -> Option<Over> {
        let readings = self
            .systems
            .iter()
            .filter_map(|s| Some((s.start, read(&s.path)?)));
        let own = own.and_then(Own::read).map(|o| {
            let start = Reading {
                free: o.size,
                files_used: 0,
            };
            let now = Reading {
                free: o.size.saturating_sub(o.used),
                files_used: o.files_used,
            };
            (start, now)
        });
        judge(readings.chain(own), self.budget)
    }
}

/// One reading of the run's own disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Own {
    size: u64,
    used: u64,
    files_used: u64,
    files_free: u64,
}

impl Own {
    /// Read the tmpfs whose root `fd` is.
    pub fn read(fd: BorrowedFd<'_>) -> Option<Own> {
        let f = Figures::of_fd(fd)?;
        Some(Own {
            size: f.size,
            used: f.size.saturating_sub(f.free),
            files_used: f.files.saturating_sub(f.files_free),
            files_free: f.files_free,
        })
    }

    /// Whether it is full: the kernel refused, or is about to refuse, the
    /// run's next write (less than a hundredth of it or 64 KiB free), or
    /// its next file.
    pub fn full(&self) -> bool {
        let margin = (self.size / 100).max(64 * 1024);
        self.size.saturating_sub(self.used) < margin || self.files_free == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    fn at(free: u64, files_used: u64) -> Reading {
        Reading { free, files_used }
    }

    #[test]
    fn the_budget_counts_bytes_and_files_over_every_file_system() {
        let gib = 1024 * MIB;
        let start = at(10 * gib, 500);
        assert_eq!(judge([(start, start)], MIB), None);
        // 0.6 MiB on each of two file systems: over a 1 MiB budget together.
        let used = at(10 * gib - 600 * 1024, 500);
        assert_eq!(judge([(start, used)], MIB), None);
        assert_eq!(
            judge([(start, used), (start, used)], MIB),
            Some(Over::Budget)
        );
        // Files are the growth of inodes in use, whatever free space does.
        let many = at(10 * gib, 500 + FILES + 1);
        assert_eq!(judge([(start, many)], u64::MAX), Some(Over::Budget));
        // Space freed again is the run's to use.
        assert_eq!(judge([(start, at(11 * gib, 400))], MIB), None);
    }

    #[test]
    fn the_floor_stops_a_run_that_brings_a_disk_down_to_it_only() {
        let roomy = at(FLOOR + 10 * MIB, 0);
        assert_eq!(
            judge([(roomy, at(FLOOR - 1, 0))], u64::MAX),
            Some(Over::Floor)
        );
        // A small /dev/shm (64 MiB, Docker's default) that had less than the
        // floor from the start is held to the budget only.
        let small = at(64 * MIB, 0);
        assert_eq!(judge([(small, at(60 * MIB, 1))], 16 * 1024 * MIB), None);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn subvolumes_of_one_pool_are_one_file_system() {
        let mountinfo = "\
            36 25 0:33 /@home /home rw - btrfs /dev/sda2 rw,subvol=/@home\n\
            37 25 0:34 /@ / rw - btrfs /dev/sda2 rw,subvol=/@\n\
            40 25 0:50 / /tank/a rw - zfs tank/a rw\n\
            41 25 0:51 / /tank/b rw - zfs tank/b rw\n\
            42 25 0:60 / /dev/shm rw - tmpfs tmpfs rw\n\
            43 25 0:61 / /run rw - tmpfs tmpfs rw\n";
        let dev = |minor: u32| libc::makedev(0, minor);
        assert_eq!(
            system_key(dev(33), mountinfo),
            system_key(dev(34), mountinfo)
        );
        assert_eq!(
            system_key(dev(50), mountinfo),
            system_key(dev(51), mountinfo)
        );
        // Two tmpfs mounts are two file systems.
        assert_ne!(
            system_key(dev(60), mountinfo),
            system_key(dev(61), mountinfo)
        );
    }

    #[test]
    fn a_file_system_is_counted_once_and_what_a_run_writes_counts() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let missing = dir.path().join("missing");
        let watch = Watch::new([a.as_path(), b.as_path(), missing.as_path()], MIB);
        assert_eq!(watch.systems(), 1);
        // Written and synced, so that every file system has counted it.
        let file = a.join("big");
        std::fs::write(&file, vec![7u8; 16 * MIB as usize]).unwrap();
        std::fs::File::open(&file).unwrap().sync_all().unwrap();
        assert_eq!(watch.over(None), Some(Over::Budget));
    }

    #[test]
    fn what_the_runs_own_disk_holds_counts_with_the_rest() {
        use std::os::fd::AsFd;
        let dir = tempfile::tempdir().unwrap();
        let watch = Watch::new([dir.path()], 8 * MIB);
        assert_eq!(watch.over(None), None);
        // `/dev/shm` stands in for the run's disk: a tmpfs, whatever it holds.
        let Ok(shm) = std::fs::File::open("/dev/shm") else {
            return;
        };
        let Some(own) = Own::read(shm.as_fd()) else {
            return;
        };
        let budget = own.used.saturating_add(4 * MIB);
        let watch = Watch::new([dir.path()], budget);
        assert_eq!(watch.over(Some(shm.as_fd())), None);
        let fill = tempfile::Builder::new().tempfile_in("/dev/shm").unwrap();
        std::fs::write(fill.path(), vec![1u8; 8 * MIB as usize]).unwrap();
        assert_eq!(watch.over(Some(shm.as_fd())), Some(Over::Budget));
    }

    #[test]
    fn a_disk_is_full_within_a_hundredth_of_its_size_or_without_files() {
        let own = |used: u64, files_free: u64| Own {
            size: 100 * MIB,
            used,
            files_used: 10,
            files_free,
        };
        assert!(!own(98 * MIB, 5).full());
        assert!(own(100 * MIB - 4096, 5).full());
        assert!(own(MIB, 0).full());
        let small = Own {
            size: MIB,
            used: MIB - 128 * 1024,
            files_used: 1,
            files_free: 9,
        };
        assert!(!small.full());
    }
}
