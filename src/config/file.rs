//! The optional `stepwise.toml`: in the user's config folder (e.g.
//! `~/.config/stepwise/`) and in the workspace's `.stepwise/`, the workspace
//! file winning. Flags beat environment beat these files beat defaults.

use crate::config::Protocol;
use crate::config::models::ModelInfo;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "stepwise.toml";

/// Every setting a file may hold; all optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub max_steps: Option<u32>,
    pub test_timeout: Option<u64>,
    pub protocol: Option<Protocol>,
    pub max_retries: Option<u32>,
    pub stream_idle_timeout: Option<u64>,
    pub context_budget: Option<u8>,
    pub context_window: Option<u64>,
    pub max_cost: Option<f64>,
    /// Tools that "approve for the rest of the task" may never cover, e.g. `["run_tests"]`.
    #[serde(default)]
    pub no_auto_approve: Vec<String>,
    /// Paths (globs) whose edits always ask, e.g. `["*.toml", "migrations/**"]`.
    #[serde(default)]
    pub no_auto_approve_paths: Vec<String>,
    /// Model table entries to add or override (see `assets/models.toml`).
    #[serde(default)]
    pub models: BTreeMap<String, ModelInfo>,
}

/// A setting's value together with the file it came from.
#[derive(Debug, Clone, Default)]
pub struct LoadedFiles {
    pub config: FileConfig,
    /// For each key set by a file, that file.
    pub origin: BTreeMap<&'static str, PathBuf>,
    pub files: Vec<PathBuf>,
}

/// Where the files are looked for, lowest precedence first.
pub fn candidate_paths(workspace: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Some(dirs) = directories::ProjectDirs::from("", "", "stepwise") {
        paths.push(dirs.config_dir().join(FILE_NAME));
    }
    paths.push(workspace.join(".stepwise").join(FILE_NAME));
    paths
}

/// Read every file that exists, later files overriding earlier ones.
pub fn load(paths: &[PathBuf]) -> Result<LoadedFiles, String> {
    let mut loaded = LoadedFiles::default();
    for path in paths {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let file: FileConfig =
            toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        overlay(&mut loaded, file, path);
        loaded.files.push(path.clone());
    }
    Ok(loaded)
}

fn overlay(loaded: &mut LoadedFiles, file: FileConfig, path: &Path) {
    macro_rules! take {
        ($($field:ident),*) => {$(
            if file.$field.is_some() {
                loaded.config.$field = file.$field;
                loaded.origin.insert(stringify!($field), path.to_path_buf());
            }
        )*};
    }
    take!(
        model,
        base_url,
        max_steps,
        test_timeout,
        protocol,
        max_retries,
        stream_idle_timeout,
        context_budget,
        context_window,
        max_cost
    );
    if !file.no_auto_approve.is_empty() {
        loaded.config.no_auto_approve = file.no_auto_approve;
    }
    if !file.no_auto_approve_paths.is_empty() {
        loaded.config.no_auto_approve_paths = file.no_auto_approve_paths;
    }
    for (name, info) in file.models {
        loaded.config.models.insert(name, info);
        loaded.origin.insert("models", path.to_path_buf());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_files_win_and_origins_are_kept() {
        let dir = std::env::temp_dir().join(format!("stepwise-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let user = dir.join("user.toml");
        let ws = dir.join("ws.toml");
        std::fs::write(
            &user,
            "model = \"a\"\nmax_steps = 5\n[models.\"a\"]\ncontext_window = 1000\n",
        )
        .unwrap();
        std::fs::write(&ws, "model = \"b\"\nprotocol = \"json\"\n").unwrap();
        let loaded = load(&[user.clone(), ws.clone(), dir.join("missing.toml")]).unwrap();
        assert_eq!(loaded.config.model.as_deref(), Some("b"));
        assert_eq!(loaded.config.max_steps, Some(5));
        assert_eq!(loaded.config.protocol, Some(Protocol::Json));
        assert_eq!(loaded.origin["model"], ws);
        assert_eq!(loaded.origin["max_steps"], user);
        assert_eq!(loaded.config.models["a"].context_window, Some(1000));
        assert_eq!(loaded.files, [user, ws]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unknown_keys_and_bad_values_are_clear_errors() {
        let dir = std::env::temp_dir().join(format!("stepwise-cfg-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.toml");
        std::fs::write(&bad, "modle = \"x\"\n").unwrap();
        let err = load(std::slice::from_ref(&bad)).unwrap_err();
        assert!(err.contains("bad.toml") && err.contains("modle"), "{err}");
        std::fs::write(&bad, "max_steps = \"many\"\n").unwrap();
        assert!(load(std::slice::from_ref(&bad)).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
