//! How a search opens what its walk found: each folder from the root's
//! capability, each file by its one name from its folder's handle, and
//! what a file really is, asked of the open descriptor. Part of
//! [`Workspace`], with its confinement: nothing opened here can be outside
//! the root, be followed through a symlink the walk did not see, or block.

use super::Workspace;
use cap_std::fs::{Dir, File, OpenOptions, OpenOptionsExt};
use rustix::fs::FileType;
use std::os::fd::AsFd;
use std::path::Path;

/// What [`Workspace::scan_check`] found a file to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanCheck {
    /// A regular file with one name, of this size.
    Single(u64),
    /// A regular file with more than one name: never searched.
    Linked,
    /// Not a regular file (or not one that could be looked at).
    Other,
}

impl Workspace {
    /// Open a folder a walk found (`relative` to the root; empty for the
    /// root itself) to open the files in it with [`Workspace::open_for_scan`]:
    /// confined to the root. The walk follows no symlink, so the folder it
    /// found is really at `relative`; if one of its folders was swapped for
    /// a symlink since (to `.git/`, or a denied folder), the folder opened
    /// is elsewhere, and it is refused (where `/proc` tells).
    pub fn open_folder_for_scan(&self, relative: &Path) -> Option<Dir> {
        if relative.as_os_str().is_empty() {
            return self.dir.try_clone().ok();
        }
        let mut options = OpenOptions::new();
        options
            .read(true)
            .custom_flags(rustix::fs::OFlags::DIRECTORY.bits() as i32);
        let folder = self.dir.open_with(relative, &options).ok()?;
        match self.real_path(&folder) {
            Some(real) if real != relative => None,
            _ => Some(Dir::from_std_file(folder.into_std())),
        }
    }

    /// Open a file a walk found (`name`, in a `folder` opened by
    /// [`Workspace::open_folder_for_scan`], already checked against the deny
    /// list) for a search: confined, not following a symlink, without
    /// blocking. Opening it from its folder spares the kernel a walk of the
    /// whole path for every file. What it is, the caller asks
    /// [`Workspace::scan_check`] before anything read from it is used.
    pub fn open_for_scan(folder: &Dir, name: &Path) -> Option<File> {
        // One name, as a folder's listing gives it: plain `openat` from the
        // folder cannot leave it (no `/`, not `..`) nor follow a symlink
        // (`O_NOFOLLOW`), so the kernel keeps the file inside the folder,
        // which is inside the root; it costs less than `openat2`.
        if is_one_name(name) {
            let flags = rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::NONBLOCK
                | rustix::fs::OFlags::NOCTTY
                | rustix::fs::OFlags::NOFOLLOW
                | rustix::fs::OFlags::CLOEXEC;
            let fd = rustix::fs::openat(folder.as_fd(), name, flags, rustix::fs::Mode::empty());
            return fd.ok().map(|fd| File::from_std(std::fs::File::from(fd)));
        }
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(
            (rustix::fs::OFlags::NONBLOCK
                | rustix::fs::OFlags::NOCTTY
                | rustix::fs::OFlags::NOFOLLOW)
                .bits() as i32,
        );
        folder.open_with(name, &options).ok()
    }

    /// What a file opened by [`Workspace::open_for_scan`] is (it may be
    /// anything but a symlink: a folder, a FIFO, a device).
    pub fn scan_check(file: &File) -> ScanCheck {
        match rustix::fs::fstat(file) {
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile => {
                ScanCheck::Other
            }
            Ok(stat) if stat.st_nlink != 1 => ScanCheck::Linked,
            Ok(stat) => ScanCheck::Single(stat.st_size.max(0) as u64),
            Err(_) => ScanCheck::Other,
        }
    }
}

/// Whether `name` is one entry's name: not empty, not `.` or `..`, no `/`.
fn is_one_name(name: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let bytes = name.as_os_str().as_bytes();
    !bytes.is_empty() && bytes != b"." && bytes != b".." && !bytes.contains(&b'/')
}
