//! A stage: a copy-on-write layer over the workspace that a staged task
//! reads through and writes into, so nothing reaches the project until a
//! person has reviewed the whole change ([`changeset`]).
//!
//! On disk a stage is a folder outside the workspace
//! (`~/.local/share/stepwise/stages/<hash of the workspace's path>/<id>`):
//! - `upper/` in the format of an overlay's upper folder: a changed or new
//!   file is a regular file at its path, a deleted one a whiteout (a
//!   character device 0/0, which the kernel lets anyone make). A sandboxed
//!   test run mounts it as the top lower layer above the workspace, so the
//!   run sees the staged files exactly as the tools do;
//! - `bases.json`: for each staged path, the SHA-256 of the workspace's file
//!   when the stage first touched it (`null`: it did not exist), so a file
//!   the user changed meanwhile becomes a conflict, never an overwrite;
//! - `meta.json`: its state (`running`, `passed`, `failed`), the task and the
//!   receipt of its last answer.
//!
//! A stage lives until it is applied or discarded: a crash or `kill -9`
//! leaves it as it was, and the next staged task in the workspace goes on in
//! it. Its cost does not grow with the workspace: creating one makes three
//! small files, and every operation touches only the staged paths.
//!
//! What must stay true: a stage's folder is the user's alone (0700); only
//! regular files and whiteouts are ever made in `upper/`, by relative paths
//! opened beneath it (`cap-std`); a path's base is recorded before its
//! first write and never changed afterwards.

pub mod changeset;
#[cfg(test)]
mod tests;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, OpenOptions, OpenOptionsExt, Permissions};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the stage says about one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// The stage has nothing at this path: the workspace's file shows.
    NotStaged,
    /// The stage deleted it.
    Deleted,
    /// The stage holds its content.
    File,
}

/// One staged path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staged {
    pub path: String,
    /// Its staged content; `None`: deleted.
    pub content: Option<Vec<u8>>,
    /// The workspace's file when the stage first touched it, as a hash
    /// (`None`: it did not exist).
    pub base: Option<String>,
    /// The staged file's mode bits (0 for a deletion).
    pub mode: u32,
}

/// A stage of one workspace, open.
#[derive(Debug)]
pub struct Stage {
    id: String,
    dir: PathBuf,
    upper: Dir,
    bases: Mutex<BTreeMap<String, Option<String>>>,
    /// An OS lock on the stage's `lock` file while it is open: one session
    /// at a time works in a stage (an editor's threads get a stage each).
    _lock: std::fs::File,
}

/// One stage as listed for the user.
#[derive(Debug, Clone)]
pub struct StageInfo {
    pub id: String,
    /// The comparison it is an attempt of, if any.
    pub group: Option<String>,
    pub state: String,
    pub task: String,
    pub files: usize,
}

/// The folder holding every workspace's stages.
pub fn all_stages() -> Option<PathBuf> {
    let base = directories::BaseDirs::new()?;
    Some(base.data_local_dir().join("stepwise").join("stages"))
}

/// Where stages are kept: [`all_stages`], or a folder of the caller's.
#[derive(Debug, Clone)]
pub struct Store(pub PathBuf);

impl Store {
    /// The user's own folder of stages.
    pub fn user() -> io::Result<Store> {
        all_stages()
            .map(Store)
            .ok_or_else(|| io::Error::other("no home folder to keep stages in"))
    }
}

/// The folder of the stages of the workspace at `root` (its real path).
fn stages_of(store: &Store, root: &Path) -> io::Result<PathBuf> {
    let all = &store.0;
    let root = root.canonicalize()?;
    let id = hex::encode(&Sha256::digest(root.as_os_str().as_encoded_bytes())[..8]);
    Ok(all.join(id))
}

/// SHA-256 of some bytes, in hex.
pub fn hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn private_dir(path: &Path) -> io::Result<()> {
    std::fs::create_dir_all(path)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
}

impl Stage {
    /// A new, empty stage of the workspace at `root`.
    pub fn create(store: &Store, root: &Path, task: &str) -> io::Result<Stage> {
        Self::create_in_group(store, root, task, None)
    }

    /// A new stage that is one attempt of a comparison (`group`): never
    /// taken up by a later staged task, and discarded with its group once
    /// one attempt of it is applied.
    pub fn create_in_group(
        store: &Store,
        root: &Path,
        task: &str,
        group: Option<&str>,
    ) -> io::Result<Stage> {
        let all = stages_of(store, root)?;
        private_dir(&store.0)?;
        private_dir(&all)?;
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut n = 0;
        let (id, dir) = loop {
            let id = format!("{secs}-{}-{n}", std::process::id());
            let dir = all.join(&id);
            match std::fs::create_dir(&dir) {
                Ok(()) => break (id, dir),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 100 => n += 1,
                Err(e) => return Err(e),
            }
        };
        std::fs::create_dir(dir.join("upper"))?;
        let mut meta = json!({"workspace": root.canonicalize()?, "state": "running", "task": task});
        if let Some(group) = group {
            meta["group"] = json!(group);
        }
        write_json(&dir.join("meta.json"), &meta)?;
        write_json(&dir.join("bases.json"), &json!({}))?;
        Self::open_dir(id, dir)
    }

    /// The stage `id` of the workspace at `root`.
    pub fn open(store: &Store, root: &Path, id: &str) -> io::Result<Stage> {
        let plain = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !plain {
            return Err(io::Error::other(format!("{id:?} is not a stage's name")));
        }
        let dir = stages_of(store, root)?.join(id);
        if !dir.join("meta.json").is_file() {
            return Err(io::Error::other(format!(
                "this workspace has no stage {id} (`stepwise stage list` lists them)"
            )));
        }
        Self::open_dir(id.to_string(), dir)
    }

    /// The workspace's newest stage that no session has open, if one is
    /// left (applied and discarded stages are gone; attempts of a
    /// comparison are never taken up).
    pub fn newest(store: &Store, root: &Path) -> io::Result<Option<Stage>> {
        let list = Self::list(store, root)?;
        for info in list.iter().rev().filter(|s| s.group.is_none()) {
            match Self::open(store, root, &info.id) {
                Ok(stage) => return Ok(Some(stage)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    fn open_dir(id: String, dir: PathBuf) -> io::Result<Stage> {
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("lock"))?;
        if lock.try_lock().is_err() {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!("the stage {id} is open in a running stepwise"),
            ));
        }
        let upper = Dir::open_ambient_dir(dir.join("upper"), ambient_authority())?;
        let bases = read_json(&dir.join("bases.json"))?;
        let bases = bases
            .as_object()
            .ok_or_else(|| io::Error::other("the stage's bases.json is not an object"))?
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().map(str::to_string)))
            .collect();
        Ok(Stage {
            id,
            dir,
            upper,
            bases: Mutex::new(bases),
            _lock: lock,
        })
    }

    /// The stages of the workspace at `root`, oldest first.
    pub fn list(store: &Store, root: &Path) -> io::Result<Vec<StageInfo>> {
        let all = match stages_of(store, root) {
            Ok(all) => all,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let entries = match std::fs::read_dir(&all) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let Some(id) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let Ok(meta) = read_json(&entry.path().join("meta.json")) else {
                continue;
            };
            let files = read_json(&entry.path().join("bases.json"))
                .ok()
                .and_then(|b| b.as_object().map(|o| o.len()))
                .unwrap_or(0);
            let text = |key: &str| meta[key].as_str().unwrap_or("").to_string();
            out.push(StageInfo {
                group: meta["group"].as_str().map(str::to_string),
                id,
                state: text("state"),
                task: text("task"),
                files,
            });
        }
        // Ids start with the creation time in seconds.
        out.sort_by_key(|s| {
            let secs = s.id.split('-').next().and_then(|n| n.parse::<u64>().ok());
            (secs.unwrap_or(0), s.id.clone())
        });
        Ok(out)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The overlay-format upper folder (a run's top lower layer).
    pub fn upper_path(&self) -> PathBuf {
        self.dir.join("upper")
    }

    /// Its state and receipt, as last written.
    pub fn meta(&self) -> Value {
        read_json(&self.dir.join("meta.json")).unwrap_or(Value::Null)
    }

    /// Record the stage's state (`running`, `passed`, `failed`) and the
    /// receipt of the answer that ended its task.
    pub fn set_state(&self, state: &str, receipt: Option<Value>) -> io::Result<()> {
        let mut meta = self.meta();
        if !meta.is_object() {
            meta = json!({});
        }
        meta["state"] = json!(state);
        if let Some(receipt) = receipt {
            meta["receipt"] = receipt;
        }
        write_json(&self.dir.join("meta.json"), &meta)
    }

    /// Remove the stage and everything in it.
    pub fn discard(self) -> io::Result<()> {
        std::fs::remove_dir_all(&self.dir)
    }

    /// Whether the stage holds, deleted or changed, the path `rel`.
    pub fn lookup(&self, rel: &Path) -> Lookup {
        match self.upper.symlink_metadata(rel) {
            Ok(m) if m.is_file() => Lookup::File,
            Ok(m) if is_whiteout(&m) => Lookup::Deleted,
            _ => Lookup::NotStaged,
        }
    }

    /// Open a staged file for reading.
    pub fn open_file(&self, rel: &Path) -> io::Result<File> {
        let mut options = OpenOptions::new();
        options
            .read(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
        self.upper.open_with(rel, &options)
    }

    /// Metadata of a staged entry (a file, or a folder the stage made).
    pub fn metadata(&self, rel: &Path) -> io::Result<cap_std::fs::Metadata> {
        self.upper.symlink_metadata(rel)
    }

    /// Whether the stage has touched `rel` (its base is recorded).
    pub fn touched(&self, rel: &Path) -> bool {
        let key = rel.to_string_lossy();
        self.bases
            .lock()
            .is_ok_and(|bases| bases.contains_key(key.as_ref()))
    }

    /// Record `base` (the workspace's bytes now, `None`: absent) as the
    /// base of `rel`, unless the stage touched it before.
    fn remember_base(&self, rel: &Path, base: Option<&[u8]>) -> io::Result<()> {
        let key = rel.to_string_lossy().to_string();
        let mut bases = self
            .bases
            .lock()
            .map_err(|_| io::Error::other("poisoned"))?;
        if bases.contains_key(&key) {
            return Ok(());
        }
        bases.insert(key, base.map(hash));
        write_json(&self.dir.join("bases.json"), &bases_json(&bases))
    }

    /// Stage `bytes` as the content of `rel` (mode `mode`), `base` being
    /// the workspace's file now (read only for a path the stage has not
    /// touched yet; ignored otherwise).
    pub fn write(
        &self,
        rel: &Path,
        bytes: &[u8],
        mode: u32,
        base: Option<&[u8]>,
    ) -> io::Result<()> {
        self.remember_base(rel, base)?;
        let name = rel
            .file_name()
            .ok_or_else(|| io::Error::other("not a file path"))?;
        let parent = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => {
                self.upper.create_dir_all(p)?;
                self.upper.open_dir(p)?
            }
            None => self.upper.try_clone()?,
        };
        if parent.symlink_metadata(name).is_ok_and(|m| is_whiteout(&m)) {
            parent.remove_file(name)?;
        }
        let mut temp = cap_tempfile::TempFile::new(&parent)?;
        temp.write_all(bytes)?;
        use cap_std::fs::PermissionsExt;
        temp.as_file()
            .set_permissions(Permissions::from_mode(mode & 0o777))?;
        temp.as_file().sync_all()?;
        temp.replace(name)
    }

    /// Stage the deletion of `rel`: `in_workspace`, whether the workspace
    /// has it (if not, only the staged file goes); `base`, its bytes there
    /// (read only for a path the stage has not touched yet).
    pub fn delete(&self, rel: &Path, in_workspace: bool, base: Option<&[u8]>) -> io::Result<()> {
        self.remember_base(rel, base)?;
        match self.upper.remove_file(rel) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        if !in_workspace {
            return Ok(());
        }
        if let Some(p) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.upper.create_dir_all(p)?;
        }
        rustix::fs::mknodat(
            &self.upper,
            rel,
            rustix::fs::FileType::CharacterDevice,
            rustix::fs::Mode::empty(),
            0,
        )
        .map_err(io::Error::from)
    }

    /// Drop `rel` from the stage (it was written into the workspace).
    pub fn forget(&self, rel: &Path) -> io::Result<()> {
        match self.upper.remove_file(rel) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let key = rel.to_string_lossy().to_string();
        let mut bases = self
            .bases
            .lock()
            .map_err(|_| io::Error::other("poisoned"))?;
        bases.remove(&key);
        write_json(&self.dir.join("bases.json"), &bases_json(&bases))
    }

    /// Every staged path and whether the stage deleted it, sorted by path,
    /// without reading any content.
    pub fn paths(&self) -> Vec<(String, bool)> {
        let Ok(bases) = self.bases.lock() else {
            return Vec::new();
        };
        bases
            .keys()
            .filter_map(|path| match self.lookup(Path::new(path)) {
                Lookup::NotStaged => None,
                Lookup::Deleted => Some((path.clone(), true)),
                Lookup::File => Some((path.clone(), false)),
            })
            .collect()
    }

    /// Every staged path, with its content and base, sorted by path.
    pub fn entries(&self) -> io::Result<Vec<Staged>> {
        let bases = self
            .bases
            .lock()
            .map_err(|_| io::Error::other("poisoned"))?
            .clone();
        let mut out = Vec::new();
        for (path, base) in bases {
            let rel = Path::new(&path);
            let (content, mode) = match self.lookup(rel) {
                Lookup::NotStaged => continue,
                Lookup::Deleted => (None, 0),
                Lookup::File => {
                    let mut file = self.open_file(rel)?;
                    let mut bytes = Vec::new();
                    io::Read::read_to_end(&mut file, &mut bytes)?;
                    use cap_std::fs::PermissionsExt;
                    (Some(bytes), file.metadata()?.permissions().mode())
                }
            };
            out.push(Staged {
                path,
                content,
                base,
                mode,
            });
        }
        Ok(out)
    }
}

fn bases_json(bases: &BTreeMap<String, Option<String>>) -> Value {
    let value: serde_json::Map<String, Value> = bases
        .iter()
        .map(|(k, v)| (k.clone(), v.as_ref().map_or(Value::Null, |h| json!(h))))
        .collect();
    Value::Object(value)
}

fn is_whiteout(m: &cap_std::fs::Metadata) -> bool {
    use cap_std::fs::{FileTypeExt, MetadataExt};
    m.file_type().is_char_device() && m.rdev() == 0
}

fn read_json(path: &Path) -> io::Result<Value> {
    let bytes = std::fs::read(path)?;
    serde_json::from_slice(&bytes).map_err(io::Error::other)
}

/// Write `value` to `path` atomically (a temporary file renamed over it).
fn write_json(path: &Path, value: &Value) -> io::Result<()> {
    let temp = path.with_extension("tmp");
    {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(value.to_string().as_bytes())?;
        file.sync_all()?;
    }
    std::fs::rename(temp, path)
}
