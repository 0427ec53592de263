//! The two layers a sandboxed run writes into instead of the project, and
//! planning them for a run (`layer_plan`, the overlay's spelling of paths):
//! - the **run's layer**, an overlay's upper folder on the run's own disk
//!   (see `linux::overlay`) or else in its temporary folder, gone with the
//!   run: every file the run creates, changes, renames or deletes in the
//!   workspace lands there, and `tools::layer` reads it afterwards;
//! - the **build layer**, a folder per workspace in the user's cache
//!   (`~/.cache/stepwise/build/<hash of the workspace's path>`), kept
//!   between runs so that incremental builds stay fast, and never merged
//!   into the project: it is bound over each build output folder
//!   (`target/` of a Cargo project, and `[sandbox] build_outputs`), and it
//!   holds the run's `CARGO_TARGET_DIR` and `GOCACHE`, so nothing a run
//!   builds is shared with another project or with the user's own builds.
//!
//! What must stay true: a build output is a plain relative path inside the
//! workspace (no `..`, no link on the way); other workspaces' build layers
//! are hidden from the run; the build layer's folder is the user's alone
//! (mode 0700); a path is spelt in the overlay's options escaped, never cut.

use super::{Policy, State};
use std::path::{Component, Path, PathBuf};

/// Where a run's writes go, prepared before it starts.
#[derive(Debug, Clone)]
pub struct LayerPlan {
    /// The folder that holds the overlay's `upper` and `work` folders.
    pub dir: PathBuf,
    /// The build layer and the build output folders (relative) bound from
    /// it; `None`: no build layer could be made (outputs land in the run's
    /// layer and are thrown away).
    pub build: Option<BuildLayer>,
    /// The size of the run's private `/tmp` (its disk budget), in MiB.
    pub tmp_mb: u64,
    /// A staged task's stage: the overlay's top lower layer, above the
    /// workspace (see `tools::stage`).
    pub stage: Option<PathBuf>,
}

impl LayerPlan {
    /// The overlay's upper folder: what the run wrote.
    pub fn upper(&self) -> PathBuf {
        self.dir.join("upper")
    }
}

/// `path` as the overlay's options spell it: a backslash before each `\`,
/// `,` and `:` (the kernel splits options at commas and layers at colons,
/// and takes a backslash as escaping the next character); bytes, so that a
/// name that is not UTF-8 is spelt too.
#[cfg(unix)]
pub fn spelt(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = Vec::new();
    for &byte in path.as_os_str().as_bytes() {
        if matches!(byte, b'\\' | b',' | b':') {
            out.push(b'\\');
        }
        out.push(byte);
    }
    out
}

/// Whether `path` fits in the overlay's options with three others (the
/// kernel takes one page of them).
#[cfg(unix)]
pub fn spellable(path: &Path) -> bool {
    spelt(path).len() <= 1000
}

#[cfg(not(unix))]
pub fn spellable(_: &Path) -> bool {
    false
}

/// The persistent folder of one workspace's build outputs.
#[derive(Debug, Clone)]
pub struct BuildLayer {
    pub dir: PathBuf,
    /// Build output folders of the workspace, relative, each bound from
    /// `dir/<the same path>`.
    pub outputs: Vec<PathBuf>,
}

/// The folder holding every workspace's build layer.
pub fn all_build_layers() -> Option<PathBuf> {
    let base = directories::BaseDirs::new()?;
    Some(base.cache_dir().join("stepwise").join("build"))
}

/// The build output folders of the workspace at `root`: `target` in a
/// Cargo project, and the configured ones that are plain relative paths.
pub fn build_outputs(root: &Path, configured: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if root.join("Cargo.toml").is_file() {
        out.push(PathBuf::from("target"));
    }
    for path in configured {
        let path = PathBuf::from(path.trim_end_matches('/'));
        let plain = !path.as_os_str().is_empty()
            && path.components().all(|c| matches!(c, Component::Normal(_)));
        if plain && !out.contains(&path) {
            out.push(path);
        }
    }
    // A build output behind a link (or a file) of the workspace would be
    // bound wherever the link leads: it gets no build layer.
    out.retain(|rel| {
        let mut at = root.to_path_buf();
        rel.components().all(|c| {
            at.push(c);
            std::fs::symlink_metadata(&at).map_or(true, |m| m.is_dir())
        })
    });
    out
}

/// The workspace's build layer (made if missing), holding `outputs`.
pub fn build_layer(root: &Path, outputs: Vec<PathBuf>) -> Option<BuildLayer> {
    use sha2::{Digest, Sha256};
    let all = all_build_layers()?;
    let id = hex::encode(&Sha256::digest(root.as_os_str().as_encoded_bytes())[..8]);
    let dir = all.join(id);
    let own = [dir.join("go-build"), dir.join("cargo-target")];
    for folder in outputs.iter().map(|o| dir.join(o)).chain(own) {
        std::fs::create_dir_all(folder).ok()?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for folder in [&all, &dir] {
            std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700)).ok()?;
        }
    }
    Some(BuildLayer { dir, outputs })
}

/// Whether a run in `root` under `policy` writes into a layer (the
/// sandbox mounts one, and the paths can be spelt in its options).
pub fn layered(root: &Path, policy: &Policy) -> bool {
    let state = super::state(policy);
    if state.off || !state.layer {
        return false;
    }
    let Ok(root) = std::fs::canonicalize(root) else {
        return false;
    };
    spellable(&root)
        && spellable(&std::env::temp_dir())
        && policy.stage.as_deref().is_none_or(spellable)
}

/// The run's layer (and the workspace's build layer) where the sandbox
/// can mount it; the build layer is granted to the run, every other
/// workspace's is hidden from it.
pub(super) fn layer_plan(
    root: &Path,
    temp: &Path,
    state: &State,
    policy: &mut Policy,
) -> Option<LayerPlan> {
    if state.off || !state.layer {
        return None;
    }
    let root = std::fs::canonicalize(root).ok()?;
    if !spellable(&root) || !spellable(temp) {
        return None;
    }
    let outputs = build_outputs(&root, &policy.build_outputs);
    let build = build_layer(&root, outputs);
    if let Some(build) = &build {
        if let Some(all) = all_build_layers() {
            policy.hidden.push(all);
        }
        policy.writable.push(build.dir.clone());
    }
    if let Some(stage) = &policy.stage {
        if !spellable(stage) {
            return None;
        }
        // Every stage is hidden from the run; its own is a layer already.
        if let Some(all) = crate::tools::stage::all_stages() {
            policy.hidden.push(all);
        }
    }
    Some(LayerPlan {
        stage: policy.stage.clone(),
        dir: temp.join("workspace-layer"),
        build,
        tmp_mb: policy.limits.disk_bytes / (1024 * 1024),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_and_backslashes_are_escaped_in_the_overlays_options() {
        use std::os::unix::ffi::OsStrExt;
        let odd = Path::new(std::ffi::OsStr::from_bytes(b"/w/a,b:c\\d\xff"));
        assert_eq!(spelt(odd), b"/w/a\\,b\\:c\\\\d\xff".to_vec());
        assert!(spellable(odd));
        assert!(!spellable(&Path::new("/").join("x".repeat(1001))));
    }

    #[test]
    fn build_outputs_are_plain_folders_of_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("Cargo.toml"), "[package]\n").unwrap();
        std::fs::create_dir(root.join("dist")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("linked")).unwrap();
        let configured = [
            "dist/".to_string(),
            "../outside".into(),
            "/abs".into(),
            "linked/out".into(),
            "new/build".into(),
            "target".into(),
        ];
        assert_eq!(
            build_outputs(root, &configured),
            [
                PathBuf::from("target"),
                PathBuf::from("dist"),
                PathBuf::from("new/build")
            ]
        );
        std::fs::remove_file(root.join("Cargo.toml")).unwrap();
        assert_eq!(build_outputs(root, &[]), Vec::<PathBuf>::new());
    }
}
