//! The run's own mount namespace: what Landlock cannot say, because a grant
//! on the workspace covers everything beneath it. `.git` and `.stepwise` at
//! the workspace root become read-only bind mounts (no planted
//! `.git/hooks/pre-commit`, no rewritten config); each file whose name is
//! on the fixed deny list (`.env`, `.env.*`, `*.pem`, `*.key`, `id_rsa*`,
//! `.netrc`, …), at the root and at any depth the search for plants sees,
//! is covered by an empty file nobody may read; and
//! `/dev/shm` is a fresh private tmpfs (Python's `multiprocessing` locks and
//! queues need it; the host's stays out of reach). The private one is a
//! folder made for the run in the host's `/dev/shm` (so still memory),
//! bind-mounted over it: Landlock grants it by that folder, whereas a fresh
//! tmpfs would hide its grant (Landlock skips covered mount points).
//!
//! Why mounts: Landlock rights on a directory apply to every file beneath
//! it, including files created later, so the root needs write access for new
//! files to be writable and that same access reaches `.git/`; only a mount
//! on top can take it back. With a workspace layer, the files the
//! workspace's `deny_paths` names are covered like secrets, at any depth,
//! and every folder whose whole content is denied (`.stepwise`, the root's
//! included, holding the transcripts, and `.kube`) by an empty read-only
//! tmpfs; without a layer, the search for plants finds the `deny_paths`
//! files in the same walk. Limits: a secret below `target/` or a folder of
//! installed packages (which the search skips) stays readable, and without
//! a layer so does a nested `.stepwise` or `.kube`; `.git` is read-only but
//! a test can still read it.
//!
//! The entries of `HOME` outside its allow-list (see `paths`), which
//! Landlock refuses already, are covered too, so that a tool finds them
//! missing instead of refused (git stops at a `~/.gitconfig` it may not
//! read, and at none): each file by `/dev/null` (read as empty), each
//! folder by an empty read-only tmpfs. So are the other workspaces'
//! `.stepwise` folders stepwise knows of (see `workspaces`).
//! With a workspace layer (the overlay over the whole workspace, see
//! `layers`), whatever a run writes lands in that layer, and git metadata
//! and package writes never leave it: only the covers need a search of the
//! workspace (`run_search`, which reuses unchanged folders' listings).
//! Without one, every nested `.git` (a submodule, a repository in a
//! subfolder) is made read-only too, found by a walk that skips build
//! outputs and installed packages (see `plants`); a `.git` a run creates
//! cannot be refused by a mount, so the run's result reports it first
//! (see `snapshot`).
//!
//! Where the kernel has `mount_setattr` (Linux 5.12), every mount is made
//! read-only first and each writable folder (the workspace, the run's
//! temporary folder, the build outputs) is bound over itself writable
//! again, like bubblewrap's read-only bind of `/`: Landlock does not check
//! `chmod`, `chown`, `utime` or xattrs, the read-only view refuses them
//! outside (`EROFS`), hidden files included.
//!
//! Each folder of installed packages (`node_modules`, a virtual
//! environment; see `plants`) gets a throwaway layer for the run: an
//! overlay whose upper layer is in the run's temporary folder, removed with
//! it. Tools that write there (vite's `node_modules/.vite`) still work, a
//! test that rewrites a package or plants a `.pyc` in one changes nothing
//! the user's own tools run later, and a file hard-linked into a tool's
//! store (uv, pnpm) is copied up, never written through. Where the kernel
//! refuses the overlay (before Linux 5.11, or a path the overlay's options
//! cannot spell), the folder is read-only for the run instead.
//!
//! Every `__pycache__` of the workspace is covered by an empty read-only
//! tmpfs for the run: a `.pyc` there (planted by an earlier run, or shipped
//! with the repository) never runs instead of the reviewed source, and a
//! test that turns bytecode writing back on cannot write there. The
//! interpreter's own compiled library stays in use (pointing Python at
//! another cache with `PYTHONPYCACHEPREFIX` made it compile the whole
//! library from source on every run: a no-op pytest took 1.4 s, not 0.4 s).
//!
//! The run gets terminals of its own, as bubblewrap's `--dev` gives: a new
//! `devpts` instance on `/dev/pts` (and its `ptmx` on `/dev/ptmx`), where
//! only the ptys the run opens exist (`pexpect`, `pty.openpty()`); the
//! user's terminals, in the host's instance, are covered. Where the kernel
//! refuses the instance, the run has no terminal at all, as before.
//!
//! With a PID namespace, `/proc` is the run's own (mounted by its PID 1):
//! other processes' command lines, environments and limits are out of sight.
//!
//! What must stay true: every path and flag is prepared before `fork`;
//! [`Mounts::apply`] runs in the child right after it enters its namespaces
//! and before Landlock (which forbids mounting afterwards, so a test cannot
//! undo these even as root in its user namespace); mounts never propagate
//! back to the host (`/` is made a slave first).

use super::calls::{bind, c_path, check, set_read_only};
use super::overlay::{Disk, PrivateTmp, WorkspaceLayer, overlay_options, private_tmp};
use crate::tools::sandbox::layers::LayerPlan;
use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The mount flags a bind remount must keep in a user namespace (the kernel
/// refuses to clear them): `statvfs` reports them with the same bits.
const LOCKED: libc::c_ulong = libc::MS_NOSUID
    | libc::MS_NODEV
    | libc::MS_NOEXEC
    | libc::MS_NOATIME
    | libc::MS_NODIRATIME
    | libc::MS_RELATIME;

/// Folders at the root that the tests may read but not change (and every
/// `.git` below it, see `plants`).
const READ_ONLY: [&str; 2] = [".git", ".stepwise"];

/// Everything to mount, prepared in the parent.
pub struct Mounts {
    /// Paths to make read-only, with the flags their mount already has.
    read_only: Vec<(CString, libc::c_ulong)>,
    /// Files to cover with `veil`.
    hidden: Vec<CString>,
    veil: CString,
    /// The run's own folder to mount over `/dev/shm`.
    shm: Option<CString>,
    /// Make every mount read-only first, then these writable again
    /// (`None`: the kernel has no `mount_setattr`).
    writable: Option<Vec<CString>>,
    /// Folders of installed packages, each given a throwaway layer.
    layers: Vec<Layer>,
    /// Bind the new `devpts` instance's `ptmx` over `/dev/ptmx` (a device
    /// node there; a link to `pts/ptmx` already leads to it).
    bind_ptmx: bool,
    /// `/dev/ptmx` exists (a node or a link), so it can be granted.
    pub has_ptmx: bool,
    /// The workspace's `__pycache__` folders, each covered by an empty
    /// read-only tmpfs (`None`: too many, see [`MAX_PYCACHE`], or the
    /// search did not see them all).
    pycache: Option<Vec<CString>>,
    /// The overlay over the whole workspace (see `layers`).
    layer: Option<WorkspaceLayer>,
    /// Folders private to the run (`/tmp`, `/var/tmp`, `/dev/shm`, where
    /// the workspace is outside them), in the order they are mounted.
    private_tmp: Vec<(CString, PrivateTmp)>,
    /// Folders covered by an empty read-only tmpfs: denied folders of the
    /// workspace (`true`: a cover that fails fails the run) and hidden
    /// folders of `HOME` (`false`: Landlock refuses them anyway, so one
    /// gone since it was listed does not stop the run).
    empty: Vec<(CString, bool)>,
    /// Files of `HOME` covered by `/dev/null` (as `false` above).
    nulled: Vec<CString>,
}

/// Most entries of `HOME` covered one by one (the rest stay refused by
/// Landlock only).
pub const MAX_HOME_COVERS: usize = 512;

/// Most files named like secrets hidden from a run one by one.
pub const MAX_HIDDEN: usize = 4096;

/// Most `__pycache__` folders covered one by one; past that, Python is
/// pointed away from them with `PYTHONPYCACHEPREFIX` instead (which also
/// makes it ignore the interpreter's own compiled library: slower).
pub const MAX_PYCACHE: usize = 4096;

/// One folder of installed packages and its overlay.
struct Layer {
    target: CString,
    /// The overlay's options (`None`: its paths cannot be spelt in them,
    /// so the folder is made read-only instead).
    options: Option<CString>,
    /// The flags its mount already has, for the read-only fallback.
    flags: libc::c_ulong,
}

fn mount_flags(path: &CString) -> libc::c_ulong {
    // SAFETY: statvfs on a NUL-terminated path into a zeroed struct.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(path.as_ptr(), &mut st) == 0 {
            st.f_flag & LOCKED
        } else {
            0
        }
    }
}

impl Mounts {
    /// The plan for the workspace `root`; `veil` is an empty file no one may
    /// read; `shm`: the run's folder to mount over `/dev/shm`.
    /// `writable`: the folders the run may write (the rest becomes a
    /// read-only view), `None` where the kernel cannot do that.
    /// `layers`: the folder (in the run's temporary folder) to hold the
    /// package folders' throwaway layers; `tmpfs`: the kernel lets the run
    /// mount one (else no `__pycache__` is covered); `deny`: the
    /// workspace's deny list; `covered`: what else to cover (`HOME`'s hidden
    /// entries, other workspaces' `.stepwise`), as far as it can be;
    /// `disk`: the run's disk, a tmpfs holding the layer and the private
    /// temporary folders (see `overlay`).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        root: &Path,
        veil: &Path,
        shm: Option<&Path>,
        writable: Option<&[std::path::PathBuf]>,
        layers: &Path,
        tmpfs: bool,
        layer: Option<&LayerPlan>,
        deny: &crate::tools::workspace::deny::DenyList,
        covered: &[std::path::PathBuf],
        disk: Option<Disk>,
    ) -> Result<Self, String> {
        // A private `/tmp` comes with the layer (whose grant it shares).
        let private_tmp = match layer {
            Some(plan) if tmpfs => {
                let held = disk.as_ref().map(|_| plan.dir.as_path());
                private_tmp(root, plan.tmp_mb, held)
            }
            _ => Vec::new(),
        };
        let bad = |p: &Path| format!("cannot confine the path {}", p.display());
        let mut read_only = Vec::new();
        let layer = match layer {
            Some(plan) => Some(WorkspaceLayer::new(root, plan, disk).ok_or_else(|| bad(root))?),
            None => None,
        };
        let mut denied_dirs = Vec::new();
        let found = match layer {
            // Writes through a hard link are copied up into the layer, and
            // what a run writes into a package folder or a `.git` lands
            // there and is dropped: only the covers need a search, and
            // that one reuses what it listed before (see `run_search`).
            Some(_) => {
                let f = crate::tools::sandbox::run_search::find(root, deny);
                denied_dirs = f.denied_dirs;
                crate::tools::sandbox::plants::Plants {
                    pycache: f.pycache,
                    secrets: f.secrets,
                    complete: f.complete,
                    ..Default::default()
                }
            }
            None => crate::tools::sandbox::plants::find_denying(root, true, deny),
        };
        if let Some(why) = crate::tools::sandbox::plants::refusal(&found.linked, root) {
            return Err(why);
        }
        // Each `.git` below the root, and each file with another name
        // elsewhere (a uv `.venv` linked into uv's cache).
        let nested = found
            .git
            .into_keys()
            .filter(|p| p.parent() != Some(root))
            .chain(found.linked);
        for path in READ_ONLY.iter().map(|n| root.join(n)).chain(nested) {
            // Resolved, so that a link is mounted where it points; a hard
            // link is its own path (it is no symbolic link).
            if let Ok(real) = std::fs::canonicalize(&path) {
                let c = c_path(&real).ok_or_else(|| bad(&real))?;
                let flags = mount_flags(&c);
                read_only.push((c, flags));
            }
        }
        // A search that stopped early may have missed some: then none is
        // covered, and Python is pointed away from all of them instead.
        let pycache = match tmpfs && found.complete && found.pycache.len() <= MAX_PYCACHE {
            true => {
                let mut out = Vec::new();
                let mut all = true;
                for dir in &found.pycache {
                    // Resolved: a link is covered where it leads, if that is
                    // a folder inside the workspace (not the workspace
                    // itself). One leading anywhere else, or that cannot be
                    // resolved, means Python is pointed away from them all
                    // (covering `/dev` or the workspace would break the run).
                    // A folder that is gone has nothing to cover.
                    match std::fs::canonicalize(dir) {
                        Ok(real) if real.is_dir() && real.starts_with(root) && real != root => {
                            out.push(real)
                        }
                        Ok(real) if !real.is_dir() && real.starts_with(root) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        _ => all = false,
                    }
                }
                // Outermost first, and none inside another (covering the
                // outer one hides the inner, whose mount would then fail).
                out.sort();
                out.dedup();
                let mut kept: Vec<std::path::PathBuf> = Vec::new();
                for dir in out {
                    if !kept.iter().any(|k| dir.starts_with(k)) {
                        kept.push(dir);
                    }
                }
                let mut paths = Vec::new();
                for dir in &kept {
                    paths.push(c_path(dir).ok_or_else(|| bad(dir))?);
                }
                all.then_some(paths)
            }
            false => None,
        };
        let mut package_layers = Vec::new();
        for (i, folder) in found.packages.keys().enumerate() {
            // Resolved like the rest; a folder already gone has nothing to layer.
            let Ok(real) = std::fs::canonicalize(folder) else {
                continue;
            };
            let target = c_path(&real).ok_or_else(|| bad(&real))?;
            let flags = mount_flags(&target);
            package_layers.push(Layer {
                options: overlay_options(&[&real], &layers.join(i.to_string())),
                target,
                flags,
            });
        }
        // Secrets by name, at the root and at any depth the search saw.
        let mut hidden = Vec::new();
        let at_root = std::fs::read_dir(root)
            .map_err(|e| format!("cannot list the workspace: {e}"))?
            .flatten()
            .filter(|e| {
                crate::tools::workspace::deny::denied_name(&e.file_name().to_string_lossy())
            })
            .map(|e| e.path());
        for path in at_root.chain(found.secrets.iter().cloned()) {
            match std::fs::canonicalize(&path) {
                Ok(real) if real.is_file() => {
                    let c = c_path(&real).ok_or_else(|| bad(&real))?;
                    if !hidden.contains(&c) {
                        hidden.push(c);
                    }
                }
                _ => {}
            }
        }
        if hidden.len() > MAX_HIDDEN {
            return Err(format!(
                "the tests were not run: the workspace holds {} files named like secrets (.env, *.key, …), more than {MAX_HIDDEN} can be hidden from a run one by one",
                hidden.len()
            ));
        }
        // Denied folders (the root's `.stepwise` with the transcripts, and
        // those the search found) and `HOME`'s hidden entries.
        let mut empty = Vec::new();
        let mut nulled = Vec::new();
        if tmpfs && layer.is_some() {
            denied_dirs.push(root.join(".stepwise"));
        }
        let denied = denied_dirs.iter().map(|p| (p, true));
        let home = covered.iter().take(MAX_HOME_COVERS).map(|p| (p, false));
        for (path, required) in denied.chain(home) {
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            if meta.is_dir() && tmpfs {
                empty.push((c_path(path).ok_or_else(|| bad(path))?, required));
            } else if meta.is_file() && !required {
                nulled.push(c_path(path).ok_or_else(|| bad(path))?);
            }
        }
        let shm = match shm {
            Some(path) => Some(c_path(path).ok_or_else(|| bad(path))?),
            None => None,
        };
        let writable = match writable {
            Some(paths) => {
                let mut out = Vec::new();
                for path in paths {
                    // Resolved, so that the mount is made where it is; a
                    // folder that does not exist has nothing to grant.
                    if let Ok(real) = std::fs::canonicalize(path)
                        && real.is_dir()
                    {
                        out.push(c_path(&real).ok_or_else(|| bad(&real))?);
                    }
                }
                Some(out)
            }
            None => None,
        };
        let ptmx = std::fs::symlink_metadata("/dev/ptmx");
        let bind_ptmx = ptmx.as_ref().is_ok_and(|m| !m.file_type().is_symlink());
        Ok(Mounts {
            empty,
            nulled,
            private_tmp,
            layer,
            pycache,
            bind_ptmx,
            has_ptmx: ptmx.is_ok() && Path::new("/dev/ptmx").exists(),
            layers: package_layers,
            writable,
            read_only,
            hidden,
            veil: c_path(veil).ok_or_else(|| bad(veil))?,
            shm,
        })
    }

    /// Whether every `__pycache__` of the workspace is covered for the run.
    pub fn covers_pycache(&self) -> bool {
        self.pycache.is_some()
    }

    /// Whether `/tmp` itself is private to the run (then its `TMPDIR`).
    pub fn private_tmp_is_tmp(&self) -> bool {
        let tmp = std::fs::canonicalize("/tmp").unwrap_or_else(|_| "/tmp".into());
        self.private_tmp
            .iter()
            .any(|(dir, _)| dir.as_bytes() == tmp.as_os_str().as_bytes())
    }

    /// The private tmpfs folders, to be granted once mounted.
    pub fn private_tmp(&self) -> impl Iterator<Item = &CStr> {
        self.private_tmp.iter().map(|(dir, _)| dir.as_c_str())
    }

    /// Whether a file is covered (for the caller's capability drop).
    pub fn hides_files(&self) -> bool {
        !self.hidden.is_empty()
    }

    /// Run in the child, inside its new mount namespace; `proc`: the child
    /// is PID 1 of a new PID namespace, whose own `/proc` is mounted over
    /// the host's (so it shows only the run's processes). Async-signal-safe.
    /// `Ok(true)`: the run has its own `devpts` instance (to be granted).
    pub fn apply(&self, proc: bool) -> io::Result<bool> {
        let none = std::ptr::null::<libc::c_char>();
        // SAFETY: mount(2) on NUL-terminated paths prepared before fork.
        unsafe {
            check(libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            ))?;
            if let Some(writable) = &self.writable {
                // A read-only view of everything (chmod, utime and xattrs
                // fail outside, which Landlock does not check), then each
                // writable folder its own mount, writable again.
                set_read_only(c"/", true, true)?;
                for path in writable {
                    bind(path, path)?;
                    set_read_only(path, false, false)?;
                }
            }
            if let Some(layer) = &self.layer {
                layer.apply()?;
            }
            for layer in &self.layers {
                let layered = layer.options.as_ref().is_some_and(|options| {
                    libc::mount(
                        c"overlay".as_ptr(),
                        layer.target.as_ptr(),
                        c"overlay".as_ptr(),
                        0,
                        options.as_ptr().cast(),
                    ) == 0
                });
                if !layered {
                    read_only(&layer.target, layer.flags)?;
                }
            }
            for (path, flags) in &self.read_only {
                read_only(path, *flags)?;
            }
            for dir in self.pycache.iter().flatten() {
                // Empty and read-only: Python finds no `.pyc` there and
                // compiles the source; one that writes bytecode writes none.
                check(libc::mount(
                    c"tmpfs".as_ptr(),
                    dir.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"size=4k".as_ptr().cast(),
                ))?;
            }
            for path in &self.hidden {
                bind(&self.veil, path)?;
            }
            for (dir, required) in &self.empty {
                let covered = check(libc::mount(
                    c"tmpfs".as_ptr(),
                    dir.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"size=4k,mode=755".as_ptr().cast(),
                ));
                if *required {
                    covered?;
                }
            }
            for path in &self.nulled {
                // As above: Landlock refuses the file if this fails.
                let _ = bind(c"/dev/null", path);
            }
            if let Some(source) = &self.shm {
                bind(source, c"/dev/shm")?;
                if self.writable.is_some() {
                    set_read_only(c"/dev/shm", false, false)?;
                }
            }
            if proc {
                check(libc::mount(
                    c"proc".as_ptr(),
                    c"/proc".as_ptr(),
                    c"proc".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    std::ptr::null(),
                ))?;
            }
            for (dir, how) in &self.private_tmp {
                // Last: the binds above may come from files in `/tmp`.
                match how {
                    PrivateTmp::Tmpfs(options) => check(libc::mount(
                        c"tmpfs".as_ptr(),
                        dir.as_ptr(),
                        c"tmpfs".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV,
                        options.as_ptr().cast(),
                    ))?,
                    PrivateTmp::Bind(source) => bind(source, dir)?,
                }
            }
            let pts = own_terminals(self.bind_ptmx);
            if self.writable.is_some() || self.layer.is_some() {
                // The working folder was entered before the mounts: a mount
                // on it is not seen by relative paths until it is entered
                // again by its name.
                let mut cwd = [0u8; 4096];
                let n = libc::syscall(libc::SYS_getcwd, cwd.as_mut_ptr(), cwd.len());
                if n <= 0 {
                    return Err(io::Error::last_os_error());
                }
                check(libc::chdir(cwd.as_ptr().cast()))?;
            }
            Ok(pts)
        }
    }
}

/// A new `devpts` instance on `/dev/pts`, its `ptmx` bound over
/// `/dev/ptmx` when `bind_ptmx`; `false` where the kernel refuses it.
/// Async-signal-safe.
fn own_terminals(bind_ptmx: bool) -> bool {
    // SAFETY: mount(2) on NUL-terminated literals.
    unsafe {
        let mounted = libc::mount(
            c"devpts".as_ptr(),
            c"/dev/pts".as_ptr(),
            c"devpts".as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
        ) == 0;
        if !mounted {
            return false;
        }
        // Where the bind fails, the host's multiplexer stays covered by the
        // rules: no terminal at all, rather than one in the host's instance.
        !bind_ptmx || bind(c"/dev/pts/ptmx", c"/dev/ptmx").is_ok()
    }
}

/// Bind `path` over itself read-only, keeping the locked `flags`.
/// Async-signal-safe.
fn read_only(path: &CStr, flags: libc::c_ulong) -> io::Result<()> {
    bind(path, path)?;
    let none = std::ptr::null::<libc::c_char>();
    let remount = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | flags;
    // SAFETY: as in `apply`.
    check(unsafe { libc::mount(none, path.as_ptr(), none, remount, std::ptr::null()) })
}
