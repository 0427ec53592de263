//! The workspace layer: what a test run wrote, read from the upper layer of
//! the overlay its sandbox mounted over the workspace (see
//! `sandbox::linux::mounts`). The run saw the project read-only below and
//! wrote only into that layer, so the layer *is* the list of what it
//! changed: new and changed files as files, deletions as whiteouts
//! (character devices 0/0), a folder it replaced as an opaque folder (the
//! `user.overlay.opaque` extended attribute). Reading it costs what the run
//! wrote, never the size of the workspace; names are kept as bytes; there is
//! no skip list and no limit on how many files are looked at.
//!
//! [`rules`] then decides, entry by entry, what may be offered to the user
//! and what is thrown away (and whether that is said); `keep` writes what
//! the user accepted into the workspace. Nothing else of a run reaches the
//! project: this is its one door.
//!
//! What must stay true: the walk never follows a link (a link is an entry
//! like any other, and the upper folder itself must be a folder), reads only regular files, and reads at most
//! [`READ_LIMIT`] bytes of each and [`TOTAL_LIMIT`] in all (a larger file is
//! known by its name and size, and never kept); the lower side (the real
//! workspace) is only read to tell a change from a creation or to list what
//! a deleted or replaced folder held.

pub mod keep;
pub mod rules;

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Most bytes of one file the layer's reader takes in.
pub const READ_LIMIT: u64 = 4 * 1024 * 1024;
/// Most bytes of all files together (then files are known by size only).
pub const TOTAL_LIMIT: u64 = 64 * 1024 * 1024;

/// What the run left at one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// A regular file, created or changed; `bytes` is `None` when it was
    /// over the limits (never kept: it could not be shown).
    File {
        bytes: Option<Vec<u8>>,
        size: u64,
        executable: bool,
        /// The workspace had a file there before.
        existed: bool,
    },
    /// A symbolic link and where it leads.
    Link { target: OsString },
    /// A folder the workspace did not have, left empty.
    Folder,
    /// A device, a FIFO or a socket.
    Special,
    /// The run deleted this file of the workspace.
    Deleted,
}

/// One path the run changed, relative to the workspace, as bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    pub written: Written,
}

impl Entry {
    /// The path as text, where it is UTF-8.
    pub fn utf8(&self) -> Option<&str> {
        self.path.to_str()
    }

    /// The path for a message: lossy, escapes for what is not UTF-8.
    pub fn shown(&self) -> String {
        shown(&self.path)
    }
}

/// A path for a message: `\xff` for each byte that is not UTF-8.
pub fn shown(path: &Path) -> String {
    let bytes = path.as_os_str().as_bytes();
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Read the upper layer `upper` of an overlay whose lower layer is `lower`
/// (the workspace): every path the run changed, sorted by path. A file
/// whose content is byte for byte the workspace's (a copy-up by an open for
/// writing, or an identical rewrite) is no change.
pub fn read(upper: &Path, lower: &Path) -> io::Result<Vec<Entry>> {
    // A run that reaches its layer's folder can put a link where the upper
    // folder was: read through, it would offer the user's own files as
    // what the run wrote.
    if !std::fs::symlink_metadata(upper)?.is_dir() {
        return Err(io::Error::other(
            "the run replaced its layer's folder (nothing of it is kept)",
        ));
    }
    let mut out = Vec::new();
    let mut budget = TOTAL_LIMIT;
    // Each folder to read, and whether the workspace has a real folder
    // there (not a link: below one, nothing of the workspace is looked at).
    let mut folders = vec![(PathBuf::new(), true)];
    while let Some((rel, below_lower)) = folders.pop() {
        let dir = upper.join(&rel);
        let lower_dir = lower.join(&rel);
        if below_lower && !rel.as_os_str().is_empty() && opaque(&dir) {
            // The run removed the workspace's folder and made a new one:
            // whatever the old one held and the new one does not is deleted.
            for gone in files_below(&lower_dir)? {
                let path = rel.join(&gone);
                if std::fs::symlink_metadata(upper.join(&path)).is_err() {
                    out.push(Entry {
                        path,
                        written: Written::Deleted,
                    });
                }
            }
        }
        let mut names: Vec<OsString> = std::fs::read_dir(&dir)?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<io::Result<_>>()?;
        names.sort();
        let mut empty = true;
        for name in names {
            empty = false;
            let path = rel.join(&name);
            let meta = std::fs::symlink_metadata(upper.join(&path))?;
            let kind = meta.file_type();
            let in_lower = below_lower
                .then(|| std::fs::symlink_metadata(lower.join(&path)).ok())
                .flatten();
            if kind.is_char_device() && meta.rdev() == 0 {
                // A whiteout: the workspace's file (or folder) is gone.
                match &in_lower {
                    Some(l) if l.is_dir() => {
                        for gone in files_below(&lower.join(&path))? {
                            out.push(Entry {
                                path: path.join(gone),
                                written: Written::Deleted,
                            });
                        }
                    }
                    Some(_) => out.push(Entry {
                        path,
                        written: Written::Deleted,
                    }),
                    None => {}
                }
                continue;
            }
            if kind.is_dir() {
                if in_lower.as_ref().is_some_and(|l| !l.is_dir()) {
                    // A file of the workspace replaced by a folder.
                    out.push(Entry {
                        path: path.clone(),
                        written: Written::Deleted,
                    });
                }
                let real = in_lower.as_ref().is_some_and(|l| l.is_dir());
                folders.push((path, real));
                continue;
            }
            let written = if kind.is_symlink() {
                Written::Link {
                    target: std::fs::read_link(upper.join(&path))?.into_os_string(),
                }
            } else if kind.is_file() {
                let size = meta.len();
                let executable = meta.permissions().mode() & 0o111 != 0;
                let bytes = if size <= READ_LIMIT && size <= budget {
                    budget -= size;
                    Some(read_at_most(&upper.join(&path), READ_LIMIT)?)
                } else {
                    None
                };
                let existed = in_lower.as_ref().is_some_and(|l| l.is_file());
                if existed
                    && let Some(new) = &bytes
                    && same_file(&lower.join(&path), new, executable)
                {
                    continue;
                }
                Written::File {
                    bytes,
                    size,
                    executable,
                    existed,
                }
            } else {
                Written::Special
            };
            if in_lower.as_ref().is_some_and(|l| l.is_dir()) {
                // A folder of the workspace replaced by a file or a link.
                for gone in files_below(&lower.join(&path))? {
                    out.push(Entry {
                        path: path.join(gone),
                        written: Written::Deleted,
                    });
                }
            }
            out.push(Entry { path, written });
        }
        let new_folder = !below_lower || std::fs::symlink_metadata(&lower_dir).is_err();
        if empty && new_folder && !rel.as_os_str().is_empty() {
            out.push(Entry {
                path: rel,
                written: Written::Folder,
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup_by(|a, b| a.path == b.path);
    Ok(out)
}

/// Whether the overlay marked `dir` opaque (it replaced a lower folder).
fn opaque(dir: &Path) -> bool {
    ["user.overlay.opaque", "trusted.overlay.opaque"]
        .iter()
        .any(|name| xattr(dir, name).is_some_and(|v| v == b"y"))
}

/// An extended attribute of `path` itself (a link is not followed).
#[cfg(not(target_os = "linux"))]
fn xattr(_path: &Path, _name: &str) -> Option<Vec<u8>> {
    None
}

/// An extended attribute of `path` itself (a link is not followed).
#[cfg(target_os = "linux")]
fn xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let name = std::ffi::CString::new(name).ok()?;
    let mut buf = [0u8; 16];
    // SAFETY: lgetxattr into a live buffer of the given length.
    let n = unsafe {
        libc::lgetxattr(
            path.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    (n >= 0).then(|| buf[..n as usize].to_vec())
}

/// Every non-folder below `dir` (relative to it), never following a link.
fn files_below(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Ok(out);
    }
    let mut folders = vec![PathBuf::new()];
    while let Some(rel) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for entry in entries {
            let entry = entry?;
            let path = rel.join(entry.file_name());
            if entry.file_type()?.is_dir() {
                folders.push(path);
            } else {
                out.push(path);
            }
        }
    }
    Ok(out)
}

fn read_at_most(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)?;
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Whether the workspace's file at `path` holds exactly `bytes` with the
/// same executable bit.
fn same_file(path: &Path, bytes: &[u8], executable: bool) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.is_file()
        || meta.len() != bytes.len() as u64
        || (meta.permissions().mode() & 0o111 != 0) != executable
    {
        return false;
    }
    read_at_most(path, READ_LIMIT).is_ok_and(|old| old == bytes)
}

#[cfg(test)]
mod tests;
