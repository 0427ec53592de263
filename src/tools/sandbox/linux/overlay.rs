//! The run's layers in its mount namespace: the overlay over the whole
//! workspace (every write of the run lands in its upper folder, see
//! `sandbox::layers`), the build layer's folders bound into it, and the
//! private tmpfs over `/tmp` and `/var/tmp` where the workspace is outside
//! them, and over `/dev/shm` (all three sized by the run's disk budget, so
//! a burst into shared memory is refused at the budget instead of seen
//! afterwards). All of it is planned before `fork`; [`WorkspaceLayer::apply`] runs
//! in the child.
//!
//! What must stay true: the overlay is mounted before anything is bound
//! inside the workspace (a mount beneath it would be hidden), the private
//! tmpfs after everything else (the binds may come from files in `/tmp`);
//! an options string the kernel would cut or split is never made.

use super::calls::{bind, c_path, check};
use crate::tools::sandbox::layers::LayerPlan;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The folders a run gets a private, size-limited tmpfs on, with the tmpfs
/// options, where the workspace is not inside them (a tmpfs over `/tmp`
/// would hide it); `size_mb`: the run's disk budget.
pub fn private_tmp(root: &Path, size_mb: u64) -> Vec<(CString, CString)> {
    let mut out = Vec::new();
    let options = CString::new(format!("size={size_mb}m,mode=1777")).unwrap_or_default();
    for dir in ["/tmp", "/var/tmp", "/dev/shm"] {
        let Ok(real) = std::fs::canonicalize(dir) else {
            continue;
        };
        // The run's own temporary folder may be covered: the layers and
        // covers made from it are mounted by then, and the run's `TMPDIR`
        // is the private folder itself.
        let covers_own = root.starts_with(&real);
        let twice = out
            .iter()
            .any(|(d, _): &(CString, CString)| d.as_bytes() == real.as_os_str().as_bytes());
        if covers_own || twice || !real.is_dir() {
            continue;
        }
        if let Some(c) = c_path(&real) {
            out.push((c, options.clone()));
        }
    }
    out
}

/// The overlay over the workspace, and the build layer's binds in it.
pub struct WorkspaceLayer {
    target: CString,
    options: CString,
    /// Each build output folder: the build layer's folder, where it is
    /// bound, and the folders to make first (mount points the workspace
    /// does not have yet; they land in the run's layer and are dropped).
    binds: Vec<(CString, CString, Vec<CString>)>,
}

impl WorkspaceLayer {
    pub fn new(root: &Path, plan: &LayerPlan) -> Option<WorkspaceLayer> {
        let lower: Vec<&Path> = plan
            .stage
            .iter()
            .map(PathBuf::as_path)
            .chain([root])
            .collect();
        let options = overlay_options(&lower, &plan.dir)?;
        let mut binds = Vec::new();
        if let Some(build) = &plan.build {
            for rel in &build.outputs {
                let mut dirs = Vec::new();
                let mut at = root.to_path_buf();
                for part in rel.components() {
                    at.push(part);
                    dirs.push(c_path(&at)?);
                }
                binds.push((
                    c_path(&build.dir.join(rel))?,
                    c_path(&root.join(rel))?,
                    dirs,
                ));
            }
        }
        Some(WorkspaceLayer {
            target: c_path(root)?,
            options,
            binds,
        })
    }

    /// Mount the overlay, then bind the build layer's folders into it.
    /// Async-signal-safe.
    pub fn apply(&self) -> io::Result<()> {
        // SAFETY: mount(2) and mkdir(2) on NUL-terminated paths.
        unsafe {
            check(libc::mount(
                c"overlay".as_ptr(),
                self.target.as_ptr(),
                c"overlay".as_ptr(),
                0,
                self.options.as_ptr().cast(),
            ))?;
            for (source, target, dirs) in &self.binds {
                for dir in dirs {
                    libc::mkdir(dir.as_ptr(), 0o755);
                }
                bind(source, target)?;
            }
        }
        Ok(())
    }
}

/// The overlay options for the layers `lower` (the top one first) with the
/// run's own layers in `dir` (created here), `None` where a path holds a
/// character the options use as a separator.
pub fn overlay_options(lower: &[&Path], dir: &Path) -> Option<CString> {
    let (upper, work) = (dir.join("upper"), dir.join("work"));
    std::fs::create_dir_all(&upper).ok()?;
    std::fs::create_dir_all(&work).ok()?;
    let spelt = |path: &Path| {
        let path = path.to_str()?;
        (!path.contains([',', ':', '\\'])).then(|| path.to_string())
    };
    let lowers: Option<Vec<String>> = lower.iter().map(|p| spelt(p)).collect();
    let mut text = String::from("userxattr");
    text.push_str(&format!(",lowerdir={}", lowers?.join(":")));
    for (key, path) in [("upperdir", &upper), ("workdir", &work)] {
        text.push_str(&format!(",{key}={}", spelt(path)?));
    }
    // The kernel takes one page of mount options and cuts the rest.
    if text.len() >= 4096 {
        return None;
    }
    CString::new(text).ok()
}
