//! Reading a file stepwise itself opens at start-up (`.env`, `stepwise.toml`,
//! rule files, the trust store): a regular file only, opened without
//! blocking, read up to a cap. A FIFO, a device (`/dev/zero` behind a
//! symlink), a folder or an oversized file is an error naming it, never a
//! hang or a gigabyte read; for `.env` and `stepwise.toml` a special file
//! is a warning and skipped (`config_text`).
//!
//! What must stay true: at most `cap` bytes (plus one, to see that there is
//! more) are ever read; opening never waits for a writer.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The largest configuration or rule file read (1 MiB).
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// A configuration file's text, as [`regular_text`] reads it, except that
/// a special file (a FIFO, a device, a folder) is skipped with a one-line
/// warning on stderr, once per path: no real configuration is one, and a
/// repository planting one must not stop stepwise from starting. Broken or
/// oversized regular files stay errors.
pub fn config_text(path: &Path) -> Result<Option<String>, String> {
    use std::sync::Mutex;
    static WARNED: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());
    match regular_text(path, MAX_CONFIG_BYTES) {
        Err(e) if e.ends_with(NOT_REGULAR) => {
            if let Ok(mut warned) = WARNED.lock()
                && !warned.iter().any(|p| p == path)
            {
                warned.push(path.to_path_buf());
                eprintln!("stepwise: {}; ignored", crate::text::sanitize::sanitize(&e));
            }
            Ok(None)
        }
        other => other,
    }
}

/// [`config_text`]'s bytes, for a file that may hold lines that are not
/// text (`.env`): a special file is skipped with the same warning.
pub fn config_bytes(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match regular_bytes(path, MAX_CONFIG_BYTES) {
        Err(e) if e.ends_with(NOT_REGULAR) => {
            eprintln!("stepwise: {}; ignored", crate::text::sanitize::sanitize(&e));
            Ok(None)
        }
        other => other,
    }
}

const NOT_REGULAR: &str = "is not a regular file; it was not read";

/// The text of the regular file at `path` (`Ok(None)`: there is none).
pub fn regular_text(path: &Path, cap: u64) -> Result<Option<String>, String> {
    let Some(bytes) = regular_bytes(path, cap)? else {
        return Ok(None);
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| format!("{} is not UTF-8 text; it was not read", path.display()))
}

/// The bytes of the regular file at `path` (`Ok(None)`: there is none),
/// at most `cap` of them: a larger file is an error, never a partial read.
pub fn regular_bytes(path: &Path, cap: u64) -> Result<Option<Vec<u8>>, String> {
    let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} {NOT_REGULAR}", path.display()));
    }
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > cap {
        return Err(format!(
            "{} is larger than {} KiB; it was not read",
            path.display(),
            cap / 1024
        ));
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = regular_text(&zero, MAX_CONFIG_BYTES).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        // No writer: a blocking open would hang here.
        let err = regular_text(&fifo, MAX_CONFIG_BYTES).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        assert!(
            regular_text(dir.path(), 10)
                .unwrap_err()
                .contains("not a regular file")
        );
        assert_eq!(regular_text(&dir.path().join("none"), 10), Ok(None));
        let big = dir.path().join("big");
        std::fs::write(&big, "x".repeat(11)).unwrap();
        assert!(regular_text(&big, 10).unwrap_err().contains("larger than"));
        std::fs::write(&big, "x".repeat(10)).unwrap();
        assert_eq!(
            regular_text(&big, 10).unwrap().as_deref(),
            Some("xxxxxxxxxx")
        );
    }
}
