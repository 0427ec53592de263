//! The `.ignore` and `.gitignore` rules of a walk, read by stepwise itself:
//! the `ignore` crate's own reading is turned off (it opens those files with
//! a plain blocking `open` and reads them whole), and each folder's files
//! are read here through [`guarded_text`], then matched as the crate
//! matches them (the nearest folder with a matching line decides; `.ignore`
//! before `.gitignore`; `.gitignore` files above a folder holding `.git` do
//! not apply below it; a hidden entry is left out unless a rule lets it in).
//! Only folders from the workspace root down are read: the rules of the
//! folders above it, like the user's global excludes, are not the project's.
//!
//! What must stay true: an ignore file is opened without following a
//! symlink (as git does) and without waiting for a writer, read only when
//! it is a regular file of at most [`MAX_IGNORE_BYTES`], and never more
//! than that many bytes plus one; one that is not is skipped (logged) and
//! its folder walked without its rules, so a FIFO, `/dev/zero` behind a
//! link or a huge file costs nothing. Compiled rules are shared between
//! walks while the file keeps its identity (device, inode, size, times).

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The largest ignore file read: far above real ones (a few KiB), low
/// enough that compiling one stays cheap (some 4,000 `**/x*_N.t?t` globs
/// compile in about 0.6 s in a debug build, once per version of the file).
pub const MAX_IGNORE_BYTES: u64 = 64 * 1024;

/// The ignore files of each folder, the first winning over the second.
const IGNORE_FILES: [&str; 2] = [".ignore", ".gitignore"];

/// The rules of one walk: for each folder it entered, that folder's rules
/// and those of the folders above it, up to the workspace root.
pub struct WalkRules {
    root: PathBuf,
    chains: Mutex<HashMap<PathBuf, Arc<Chain>>>,
}

/// One folder's rules, linked to its parent's.
struct Chain {
    /// From `.ignore` and `.gitignore`, in that order.
    files: [Option<Arc<Gitignore>>; 2],
    /// Whether the folder holds `.git` (a repository's top).
    has_git: bool,
    parent: Option<Arc<Chain>>,
}

impl WalkRules {
    /// Rules for walks inside `root` (the workspace root).
    pub fn new(root: &Path) -> WalkRules {
        WalkRules {
            root: root.to_path_buf(),
            chains: Mutex::new(HashMap::new()),
        }
    }

    /// Whether a walk keeps `path` (an entry below the walk's start).
    pub fn keeps(&self, path: &Path, is_dir: bool) -> bool {
        let Some(dir) = path.parent() else {
            return true;
        };
        match self.chain(dir).matched(path, is_dir) {
            Match::Ignore(_) => false,
            Match::Whitelist(_) => true,
            Match::None => !path
                .file_name()
                .is_some_and(|n| n.as_encoded_bytes().starts_with(b".")),
        }
    }

    fn chain(&self, dir: &Path) -> Arc<Chain> {
        if let Some(chain) = self.lock().get(dir) {
            return Arc::clone(chain);
        }
        let parent = (dir != self.root && dir.starts_with(&self.root))
            .then(|| dir.parent().map(|p| self.chain(p)))
            .flatten();
        let chain = Arc::new(Chain {
            files: IGNORE_FILES.map(|name| rules_of(dir, name)),
            has_git: std::fs::symlink_metadata(dir.join(".git")).is_ok(),
            parent,
        });
        self.lock().insert(dir.to_path_buf(), Arc::clone(&chain));
        chain
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<Chain>>> {
        self.chains.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Chain {
    /// For each kind of file, the nearest folder whose rules match decides;
    /// `.ignore` wins over `.gitignore`.
    fn matched(&self, path: &Path, is_dir: bool) -> Match<()> {
        let (mut by_ignore, mut by_git) = (Match::None, Match::None);
        let mut saw_git = false;
        let mut at = Some(self);
        while let Some(chain) = at {
            if by_ignore.is_none()
                && let Some(rules) = &chain.files[0]
            {
                by_ignore = rules.matched(path, is_dir).map(|_| ());
            }
            if by_git.is_none()
                && !saw_git
                && let Some(rules) = &chain.files[1]
            {
                by_git = rules.matched(path, is_dir).map(|_| ());
            }
            saw_git |= chain.has_git;
            at = chain.parent.as_deref();
        }
        by_ignore.or(by_git)
    }
}

/// Which version of a file compiled rules were made from.
type Identity = (PathBuf, u64, u64, u64, i64, i64, i64, i64);

/// Compiled rules, by the file they came from (bounded: cleared when full).
static COMPILED: Mutex<Option<HashMap<Identity, Arc<Gitignore>>>> = Mutex::new(None);

/// Most files whose compiled rules are kept.
const MAX_COMPILED: usize = 1024;

/// The compiled rules of `dir/name`, if it is an ignore file stepwise reads.
fn rules_of(dir: &Path, name: &str) -> Option<Arc<Gitignore>> {
    let path = dir.join(name);
    let (text, identity) = guarded_text(&path, MAX_IGNORE_BYTES)
        .map_err(|why| {
            if let Some(why) = why {
                tracing::warn!(path = %path.display(), "ignore file not read: {why}");
            }
        })
        .ok()?;
    let mut compiled = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
    let cache = compiled.get_or_insert_with(HashMap::new);
    if let Some(rules) = cache.get(&identity) {
        return Some(Arc::clone(rules));
    }
    drop(compiled);
    let mut builder = GitignoreBuilder::new(dir);
    for line in text.lines() {
        // A line no glob reads is skipped, as git skips it.
        let _ = builder.add_line(Some(path.clone()), line);
    }
    let rules = Arc::new(builder.build().ok()?);
    let mut compiled = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
    let cache = compiled.get_or_insert_with(HashMap::new);
    if cache.len() >= MAX_COMPILED {
        cache.clear();
    }
    cache.insert(identity, Arc::clone(&rules));
    Some(rules)
}

/// The text of the regular file at `path` (a symlink is not followed) and
/// its identity, read without waiting and only up to `cap` bytes. `Err(None)`:
/// there is none; `Err(Some(why))`: it is not one stepwise reads.
pub fn guarded_text(path: &Path, cap: u64) -> Result<(String, Identity), Option<String>> {
    use rustix::fs::{Mode, OFlags};
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => return Err(None),
        Err(rustix::io::Errno::LOOP) => return Err(Some("it is a symlink".into())),
        Err(e) => return Err(Some(e.to_string())),
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| Some(e.to_string()))?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(Some("it is not a regular file".into()));
    }
    let size = u64::try_from(stat.st_size).unwrap_or(u64::MAX);
    if size > cap {
        return Err(Some(format!("it is larger than {} KiB", cap / 1024)));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Some(e.to_string()))?;
    if bytes.len() as u64 > cap {
        return Err(Some(format!("it is larger than {} KiB", cap / 1024)));
    }
    let identity = (
        path.to_path_buf(),
        stat.st_dev as u64,
        stat.st_ino as u64,
        bytes.len() as u64,
        stat.st_mtime as i64,
        stat.st_mtime_nsec as i64,
        stat.st_ctime as i64,
        stat.st_ctime_nsec as i64,
    );
    Ok((String::from_utf8_lossy(&bytes).into_owned(), identity))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        for (path, text) in files {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        (tmp, root)
    }

    #[test]
    fn rules_match_as_the_walker_matches_them() {
        let (_tmp, root) = tree(&[
            (".gitignore", "*.log\nbuild/\n"),
            (".ignore", "!kept.log\n"),
            ("a/.gitignore", "!a.log\nsecret*\n"),
            ("nested/.git/HEAD", ""),
            ("nested/.gitignore", ""),
        ]);
        let rules = WalkRules::new(&root);
        let keeps = |p: &str, dir: bool| rules.keeps(&root.join(p), dir);
        assert!(!keeps("x.log", false));
        assert!(keeps("kept.log", false), ".ignore wins over .gitignore");
        assert!(!keeps("build", true));
        assert!(keeps("build", false), "build/ names folders only");
        assert!(keeps("a/a.log", false), "the nearer folder decides");
        assert!(!keeps("a/b/secret.rs", false));
        assert!(!keeps(".hidden", false));
        assert!(
            keeps("nested/x.log", false),
            "a repository inside starts afresh"
        );
        assert!(keeps("src/main.rs", false));
    }

    #[test]
    fn a_special_or_huge_ignore_file_is_skipped_without_reading_it() {
        let (_tmp, root) = tree(&[("ok/.gitignore", "*.tmp\n")]);
        std::fs::create_dir_all(root.join("zero")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("zero/.gitignore")).unwrap();
        std::fs::create_dir_all(root.join("fifo")).unwrap();
        let fifo = root.join("fifo/.ignore");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        std::fs::create_dir_all(root.join("big")).unwrap();
        let big = "x.tmp\n".repeat(MAX_IGNORE_BYTES as usize / 6 + 1);
        std::fs::write(root.join("big/.gitignore"), big).unwrap();
        let rules = WalkRules::new(&root);
        assert!(!rules.keeps(&root.join("ok/a.tmp"), false));
        assert!(rules.keeps(&root.join("zero/a.tmp"), false));
        if made.is_ok_and(|s| s.success()) {
            assert!(rules.keeps(&root.join("fifo/a.tmp"), false));
        }
        assert!(
            rules.keeps(&root.join("big/x.tmp"), false),
            "too large: not read"
        );
        for name in ["zero/.gitignore", "fifo/.ignore", "big/.gitignore"] {
            assert!(
                guarded_text(&root.join(name), MAX_IGNORE_BYTES).is_err(),
                "{name}"
            );
        }
    }
}
