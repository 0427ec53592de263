//! The run's temporary folder and the folder that holds every run's: made
//! this user's alone (0700, never a link another user planted), granted to
//! its own run and hidden from every other, and removed with the run even
//! where a test left folders of mode 000; the runs folder goes with the
//! last run out (`exec` leaves nothing in the temporary folder).
//!
//! What must stay true: clean-up never follows a link the run left.

use super::Confined;
use std::path::{Path, PathBuf};

/// The folder holding every run's temporary folder (this user's, mode
/// 0700): hidden from each run, whose own folder inside it is granted.
pub(super) fn runs_folder() -> std::io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    // SAFETY: getuid cannot fail.
    let user = unsafe { libc::getuid() }.to_string();
    #[cfg(not(target_os = "linux"))]
    let user = std::env::var("USER").unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("stepwise-runs-{user}"));
    match std::fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        // Not a link, and ours: another user could otherwise pre-create it.
        let meta = std::fs::symlink_metadata(&dir)?;
        #[cfg(target_os = "linux")]
        // SAFETY: getuid cannot fail.
        let mine = meta.uid() == unsafe { libc::getuid() };
        #[cfg(not(target_os = "linux"))]
        let mine = true;
        if !meta.is_dir() || !mine {
            return Err(std::io::Error::other(format!(
                "{} is not a folder of this user",
                dir.display()
            )));
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(dir)
}

impl Drop for Confined {
    /// The temporary folder is removed with this; first every folder in it
    /// is opened to its owner again: a test (or the kernel, for an
    /// overlay's `work/work`) can leave folders of mode 000, which would
    /// keep it from being removed. Then the runs folder goes too, if no
    /// other run is in it (`exec` leaves nothing in the temporary folder).
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            #[cfg(unix)]
            open_up(temp.path());
            drop(temp);
        }
        // The last run out removes the runs folder (it fails while another
        // run's folder is in it).
        let _ = std::fs::remove_dir(&self.runs);
    }
}

/// Give the owner full access to every folder below `top`, never following
/// a link (the run's processes are gone by now; a link it left is not
/// followed out of the folder). Iterative: a run can nest folders deeply.
#[cfg(unix)]
fn open_up(top: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut folders = vec![top.to_path_buf()];
    while let Some(dir) = folders.pop() {
        let is_folder = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir());
        if !is_folder {
            continue;
        }
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                folders.push(entry.path());
            }
        }
    }
}
