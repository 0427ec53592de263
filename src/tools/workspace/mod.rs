//! Confinement: every file operation goes through a capability handle on the
//! workspace root (`cap-std`, `openat2(RESOLVE_BENEATH)` on Linux), so `..`,
//! absolute paths and symlinks that lead outside are refused by the kernel, for
//! existing and not-yet-existing targets alike. A lexical pre-check in front of
//! it gives the model clearer errors. stepwise's own `.stepwise/` folder is
//! unreachable: refused by name, and by its real path when a symlink leads there.
//! A search opens the files it found from their folder's handle (opened as
//! above) by one name each, with `openat(O_NOFOLLOW)`: no `/`, no `..`, no
//! symlink followed, so the kernel keeps it inside that folder.
//! Files are opened without blocking and only regular files with a single
//! name (one hard link) are read, checked against the [`DenyList`] both by
//! the name given and by the path they really have. The workspace also holds
//! the stale-write [`EditGuard`].

pub mod deny;
pub mod guard;
pub(in crate::tools) mod path;

use super::stage::{Lookup, Stage};
use super::workspace::deny::DenyList;
use super::workspace::guard::EditGuard;
pub use super::workspace::path::{PathError, RelPath};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, OpenOptions, OpenOptionsExt, Permissions};
use rustix::fs::FileType;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Component, Path, PathBuf};

pub use scan::ScanCheck;

/// Opening what a search's walk found (`workspace_scan.rs`).
#[path = "workspace_scan.rs"]
mod scan;

/// stepwise's own folder in the workspace (lock file, session logs).
pub const PRIVATE_DIR: &str = ".stepwise";

/// The workspace folder, opened once as a capability.
pub struct Workspace {
    root: PathBuf,
    dir: Dir,
    guard: EditGuard,
    deny: DenyList,
    /// A staged task's stage: reads go through it, writes into it.
    stage: Option<std::sync::Arc<Stage>>,
}

impl Workspace {
    pub fn open(root: &Path) -> io::Result<Self> {
        let root = root.canonicalize()?;
        let dir = Dir::open_ambient_dir(&root, ambient_authority())?;
        Ok(Workspace {
            root,
            dir,
            guard: EditGuard::default(),
            deny: DenyList::default(),
            stage: None,
        })
    }

    /// The same workspace seen through `stage`: every read goes through
    /// it, every write and deletion lands in it.
    pub fn with_stage(mut self, stage: std::sync::Arc<Stage>) -> Self {
        self.set_stage(Some(stage));
        self
    }

    /// Go on through `stage` from now on (`None`: the workspace itself
    /// again); what the model read stays known to the stale-write guard.
    pub fn set_stage(&mut self, stage: Option<std::sync::Arc<Stage>>) {
        self.stage = stage;
    }

    /// The stage reads and writes go through, in a staged task.
    pub fn stage(&self) -> Option<&std::sync::Arc<Stage>> {
        self.stage.as_ref()
    }

    /// The workspace itself, without the stage (for applying a changeset),
    /// with the same deny list.
    pub fn unstaged(&self) -> io::Result<Workspace> {
        Ok(Workspace {
            root: self.root.clone(),
            dir: self.dir.try_clone()?,
            guard: EditGuard::default(),
            deny: self.deny.clone(),
            stage: None,
        })
    }

    /// The same workspace with `deny_paths` globs added to the fixed deny list.
    pub fn with_deny_paths(mut self, globs: &[globset::Glob]) -> Result<Self, String> {
        self.deny = DenyList::new(globs)?;
        Ok(self)
    }

    /// What no tool may read, write, list or search.
    pub fn deny(&self) -> &DenyList {
        &self.deny
    }

    /// What the model last read or stepwise last wrote, per file.
    pub fn guard(&self) -> &EditGuard {
        &self.guard
    }

    /// The canonical absolute root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Lexical check and normalization of a path given by the model.
    pub fn check(path: &str) -> Result<RelPath, PathError> {
        if path.contains('\0') {
            return Err(PathError("the path contains a NUL byte".into()));
        }
        let trimmed = path.trim();
        if trimmed.is_empty() {
            return Err(PathError(
                "the path is empty; give a path relative to the workspace root, e.g. \"calculator.py\"".into(),
            ));
        }
        let mut out = PathBuf::new();
        for component in Path::new(trimmed).components() {
            match component {
                Component::Normal(part) => out.push(part),
                Component::CurDir => {}
                Component::ParentDir => {
                    if !out.pop() {
                        return Err(PathError(format!(
                            "{trimmed:?} leads outside the workspace; use a path relative to the workspace root"
                        )));
                    }
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(PathError(format!(
                        "{trimmed:?} is absolute; use a path relative to the workspace root"
                    )));
                }
            }
        }
        if out.components().next() == Some(Component::Normal(PRIVATE_DIR.as_ref())) {
            return Err(private_refusal(trimmed));
        }
        Ok(RelPath(out))
    }

    /// Refuse an opened file or folder whose real path lies in `.stepwise/`
    /// (reached through a symlink inside the workspace). Where `/proc` is not
    /// mounted the lexical check of [`Workspace::check`] is all there is.
    fn ensure_reachable(&self, rel: &RelPath, fd: impl AsFd) -> Result<(), PathError> {
        if let Some(real) = self.real_path(fd)
            && real.components().next() == Some(Component::Normal(PRIVATE_DIR.as_ref()))
        {
            return Err(private_refusal(&rel.display()));
        }
        Ok(())
    }

    /// The path, relative to the root, that an open descriptor really names.
    fn real_path(&self, fd: impl AsFd) -> Option<PathBuf> {
        let link = format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd());
        let real = std::fs::read_link(link).ok()?;
        real.strip_prefix(&self.root).ok().map(Path::to_path_buf)
    }

    /// The real absolute path of an existing folder, checked to be reachable.
    pub fn real_dir(&self, rel: &RelPath) -> Result<PathBuf, PathError> {
        let dir = self
            .dir
            .open_dir(rel.as_path())
            .map_err(|e| io_error(rel, e))?;
        self.ensure_reachable(rel, &dir)?;
        Ok(match self.real_path(&dir) {
            Some(real) => self.root.join(real),
            None => self.root.join(rel.as_path()),
        })
    }

    /// Metadata of an existing entry, following symlinks only inside the root.
    pub fn metadata(&self, rel: &RelPath) -> Result<Option<cap_std::fs::Metadata>, PathError> {
        if let Some(stage) = &self.stage {
            match stage.lookup(rel.as_path()) {
                Lookup::Deleted => return Ok(None),
                Lookup::File => {
                    return stage
                        .metadata(rel.as_path())
                        .map(Some)
                        .map_err(|e| io_error(rel, e));
                }
                // A folder only the stage has.
                Lookup::NotStaged => match stage.metadata(rel.as_path()) {
                    Ok(m) if m.is_dir() && self.dir.metadata(rel.as_path()).is_err() => {
                        return Ok(Some(m));
                    }
                    _ => {}
                },
            }
        }
        match self.dir.metadata(rel.as_path()) {
            Ok(m) => Ok(Some(m)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(rel, e)),
        }
    }

    /// Open an existing file for reading: without blocking (a FIFO never
    /// hangs), refused unless it is a regular file with one name that is
    /// neither denied by the name given nor by its real path.
    /// `Ok(None)` when the file does not exist.
    pub fn open_file(&self, rel: &RelPath) -> Result<Option<(File, Metadata)>, PathError> {
        self.deny.check(rel)?;
        if let Some(stage) = &self.stage {
            match stage.lookup(rel.as_path()) {
                Lookup::Deleted => return Ok(None),
                Lookup::File => {
                    let file = stage
                        .open_file(rel.as_path())
                        .map_err(|e| io_error(rel, e))?;
                    let meta = file.metadata().map_err(|e| io_error(rel, e))?;
                    return Ok(Some((file, meta)));
                }
                Lookup::NotStaged => {}
            }
        }
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(
            (rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32,
        );
        let file = match self.dir.open_with(rel.as_path(), &options) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            // Opening a socket fails with ENXIO.
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => {
                return Err(not_regular(rel, "a socket"));
            }
            Err(e) => return Err(io_error(rel, e)),
        };
        self.ensure_reachable(rel, &file)?;
        let real = self
            .real_path(&file)
            .or_else(|| self.dir.canonicalize(rel.as_path()).ok())
            .unwrap_or_else(|| rel.as_path().to_path_buf());
        self.deny.check_as(rel, &real)?;
        let stat = rustix::fs::fstat(&file).map_err(|e| io_error(rel, e.into()))?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => {}
            FileType::Directory => {
                return Err(PathError(format!(
                    "{} is a folder, not a file; use list_files to see what it holds",
                    rel.display()
                )));
            }
            FileType::Fifo => return Err(not_regular(rel, "a named pipe (FIFO)")),
            FileType::CharacterDevice => return Err(not_regular(rel, "a character device")),
            FileType::BlockDevice => return Err(not_regular(rel, "a block device")),
            FileType::Socket => return Err(not_regular(rel, "a socket")),
            _ => return Err(not_regular(rel, "a special file")),
        }
        if stat.st_nlink > 1 {
            return Err(PathError(format!(
                "{} has {} hard links: the same file also lives under another name, which may be \
                 one that is never readable (such as .env), so it is neither read nor written",
                rel.display(),
                stat.st_nlink
            )));
        }
        let meta = file.metadata().map_err(|e| io_error(rel, e))?;
        Ok(Some((file, meta)))
    }

    /// Read at most `limit` bytes; `Ok(None)` when the file does not exist.
    pub fn read_bytes(&self, rel: &RelPath, limit: u64) -> Result<Option<Vec<u8>>, PathError> {
        let Some((file, meta)) = self.open_file(rel)? else {
            return Ok(None);
        };
        if meta.len() > limit {
            return Err(PathError(format!(
                "{} is {} bytes, over the {limit}-byte limit",
                rel.display(),
                meta.len()
            )));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(rel, e))?;
        if bytes.len() as u64 > limit {
            return Err(PathError(format!(
                "{} grew past the {limit}-byte limit while it was read",
                rel.display()
            )));
        }
        Ok(Some(bytes))
    }

    /// Delete a file (used by undo to remove a file the session created).
    pub fn remove_file(&self, rel: &RelPath) -> Result<(), PathError> {
        if let Some(stage) = &self.stage {
            let in_workspace = self.dir.symlink_metadata(rel.as_path()).is_ok();
            let base = self.base_for(stage, rel)?;
            return stage
                .delete(rel.as_path(), in_workspace, base.as_deref())
                .map_err(|e| io_error(rel, e));
        }
        self.dir
            .remove_file(rel.as_path())
            .map_err(|e| io_error(rel, e))
    }

    /// Replace (or create) a file atomically: a temporary file in the same folder,
    /// fsynced, renamed over the target, then the folder fsynced. Parent folders
    /// are created. The original's permissions are kept.
    pub fn write_atomic(&self, rel: &RelPath, bytes: &[u8]) -> Result<(), PathError> {
        self.deny.check(rel)?;
        if let Some(stage) = &self.stage {
            return self.write_staged(stage, rel, bytes);
        }
        let name = rel
            .file_name()
            .ok_or_else(|| PathError(format!("{} is not a file path", rel.display())))?;
        let parent_rel = rel.0.parent().filter(|p| !p.as_os_str().is_empty());
        let parent = match parent_rel {
            Some(p) => {
                // No folder is created inside `.stepwise/` through a symlink either.
                if let Some(existing) = p.ancestors().find_map(|a| self.dir.open_dir(a).ok()) {
                    self.ensure_reachable(rel, &existing)?;
                }
                self.dir.create_dir_all(p).map_err(|e| io_error(rel, e))?;
                let parent = self.dir.open_dir(p).map_err(|e| io_error(rel, e))?;
                self.ensure_reachable(rel, &parent)?;
                parent
            }
            None => self.dir.try_clone().map_err(|e| io_error(rel, e))?,
        };
        // The folder really written into may be reached through a symlink.
        if let Some(real) = self.real_path(&parent) {
            self.deny.check_as(rel, &real.join(name))?;
        }
        let permissions = match parent.symlink_metadata(name) {
            Ok(m) if m.is_dir() => {
                return Err(PathError(format!("{} is a folder", rel.display())));
            }
            Ok(m) if m.is_file() => Some(m.permissions()),
            Ok(m) if !m.file_type().is_symlink() => {
                return Err(not_regular(rel, "a special file"));
            }
            // A symlink target is replaced by a regular file at the link's place
            // only after the link itself was checked to stay inside.
            Ok(_) => Some(
                parent
                    .metadata(name)
                    .map_err(|e| io_error(rel, e))?
                    .permissions(),
            ),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_error(rel, e)),
        };
        // Replacing by rename needs no write access to the file itself, but a
        // file the user made read-only is not the agent's to change.
        if permissions.as_ref().is_some_and(Permissions::readonly) {
            return Err(PathError(format!(
                "{}: permission denied: the file is read-only; ask the user to make it writable",
                rel.display()
            )));
        }
        let permissions = permissions.unwrap_or_else(default_permissions);
        let mut temp = cap_tempfile::TempFile::new(&parent).map_err(|e| io_error(rel, e))?;
        temp.write_all(bytes).map_err(|e| io_error(rel, e))?;
        temp.as_file()
            .set_permissions(permissions)
            .map_err(|e| io_error(rel, e))?;
        temp.as_file().sync_all().map_err(|e| io_error(rel, e))?;
        temp.replace(name).map_err(|e| io_error(rel, e))?;
        // Make the rename durable; a folder that cannot be synced is not an error worth failing for.
        if let Ok(d) = parent.open(".") {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Workspace {
    /// The bytes the stage records as `rel`'s base: read from the workspace
    /// only the first time the stage touches it.
    fn base_for(&self, stage: &Stage, rel: &RelPath) -> Result<Option<Vec<u8>>, PathError> {
        match stage.touched(rel.as_path()) {
            true => Ok(None),
            false => self.unstaged_bytes(rel),
        }
    }

    /// The workspace's own bytes of `rel`, past the stage (`None`: absent).
    fn unstaged_bytes(&self, rel: &RelPath) -> Result<Option<Vec<u8>>, PathError> {
        let mut plain = self.unstaged().map_err(|e| io_error(rel, e))?;
        plain.deny = DenyList::default();
        plain.read_bytes(rel, u64::MAX / 2)
    }

    /// Write into the stage, keeping the mode the file has now (staged or not).
    fn write_staged(&self, stage: &Stage, rel: &RelPath, bytes: &[u8]) -> Result<(), PathError> {
        use cap_std::fs::PermissionsExt;
        let mode = match self.metadata(rel)? {
            Some(m) if m.is_dir() => {
                return Err(PathError(format!("{} is a folder", rel.display())));
            }
            Some(m) if m.permissions().readonly() => {
                return Err(PathError(format!(
                    "{}: permission denied: the file is read-only; ask the user to make it writable",
                    rel.display()
                )));
            }
            Some(m) => m.permissions().mode(),
            None => 0o644,
        };
        let base = self.base_for(stage, rel)?;
        stage
            .write(rel.as_path(), bytes, mode, base.as_deref())
            .map_err(|e| io_error(rel, e))
    }
}

fn private_refusal(path: &str) -> PathError {
    PathError(format!(
        "{path:?} is in stepwise's own {PRIVATE_DIR}/ folder, which the tools cannot reach"
    ))
}

fn not_regular(rel: &RelPath, what: &str) -> PathError {
    PathError(format!(
        "{} is {what}, not a regular file; only regular text files can be read or written",
        rel.display()
    ))
}

fn default_permissions() -> Permissions {
    use cap_std::fs::PermissionsExt;
    Permissions::from_mode(0o644)
}

/// Turn an OS error into a message that names the path and says what to do.
pub fn io_error(rel: &RelPath, e: io::Error) -> PathError {
    let path = rel.display();
    let escaped = e.kind() == io::ErrorKind::PermissionDenied && e.to_string().contains("outside")
        || e.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error()); // RESOLVE_BENEATH
    if escaped {
        return PathError(format!(
            "{path} leads outside the workspace (through a symlink); refused"
        ));
    }
    match e.kind() {
        io::ErrorKind::NotFound => PathError(format!(
            "{path} does not exist; use list_files to see what exists"
        )),
        io::ErrorKind::NotADirectory => {
            PathError(format!("a parent of {path} is a file, not a folder"))
        }
        _ => PathError(format!("{path}: {e}")),
    }
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
