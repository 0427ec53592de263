//! The optional `stepwise.toml`: in the user's config folder (e.g.
//! `~/.config/stepwise/`) and in the workspace's `.stepwise/`, the workspace
//! file winning. Flags beat environment beat these files beat defaults.
//!
//! This module finds, reads and layers the files; it does not interpret
//! values (the settings table does, for every file, in `layers`). What must
//! stay true: a key that is not a setting is an error naming the file; a
//! later file replaces an earlier file's value, except that tables (the
//! model table) merge entry by entry and an empty list counts as not set
//! (it leaves an earlier file's list in place).

use super::settings;
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "stepwise.toml";

/// The files that exist, lowest precedence first, each with its table.
#[derive(Debug, Clone, Default)]
pub struct LoadedFiles {
    pub each: Vec<(PathBuf, toml::Table)>,
}

/// Lists that only ever restrict what the tools or approvals may do: a
/// later file (the project's) adds to an earlier one's (the user's) instead
/// of replacing it, so a project file can never lift a user's restriction.
const RESTRICTIONS: [&str; 3] = ["deny_paths", "no_auto_approve", "no_auto_approve_paths"];

impl LoadedFiles {
    /// The files read.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.each.iter().map(|(path, _)| path.as_path())
    }

    /// The layered value of `key`, and the last file that set it.
    pub fn get(&self, key: &str) -> Option<(toml::Value, &Path)> {
        let mut found: Option<(toml::Value, &Path)> = None;
        for (path, table) in &self.each {
            let Some(value) = table.get(key) else {
                continue;
            };
            let value = match (&found, value) {
                (_, toml::Value::Array(items)) if items.is_empty() => continue,
                // A restriction in a later file adds to the earlier ones.
                (Some((toml::Value::Array(earlier), _)), toml::Value::Array(later))
                    if RESTRICTIONS.contains(&key) =>
                {
                    let mut all = earlier.clone();
                    all.extend(later.iter().filter(|v| !earlier.contains(v)).cloned());
                    toml::Value::Array(all)
                }
                (Some((toml::Value::Table(earlier), _)), toml::Value::Table(later)) => {
                    let mut merged = earlier.clone();
                    merged.extend(later.clone());
                    toml::Value::Table(merged)
                }
                _ => value.clone(),
            };
            found = Some((value, path.as_path()));
        }
        found
    }
}

/// Where the files are looked for, lowest precedence first.
pub fn candidate_paths(workspace: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Some(dirs) = directories::ProjectDirs::from("", "", "stepwise") {
        paths.push(dirs.config_dir().join(FILE_NAME));
    }
    paths.push(project_path(workspace));
    paths
}

/// The workspace's own file: a project file, which `trust` may hold back in part.
pub fn project_path(workspace: &Path) -> PathBuf {
    workspace.join(".stepwise").join(FILE_NAME)
}

/// Read every file that exists; a file that cannot be read or parsed, or
/// holds a key that is not a setting, is an error naming it.
pub fn load(paths: &[PathBuf]) -> Result<LoadedFiles, String> {
    let mut loaded = LoadedFiles::default();
    for path in paths {
        let Some(text) = super::read::config_text(path)? else {
            continue;
        };
        let table: toml::Table =
            toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some(key) = table.keys().find(|k| settings::by_key(k).is_none()) {
            return Err(format!(
                "{}: unknown key {key} (known keys: {})",
                path.display(),
                settings::keys()
            ));
        }
        loaded.each.push((path.clone(), table));
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_file_adds_to_the_users_restrictions_and_never_replaces_them() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user.toml");
        let ws = dir.path().join("ws.toml");
        std::fs::write(
            &user,
            "deny_paths = [\"secrets/**\"]\nno_auto_approve = [\"run_tests\"]\nno_auto_approve_paths = [\"*.toml\"]\nmodel = \"a\"\n",
        )
        .unwrap();
        std::fs::write(
            &ws,
            "deny_paths = [\"x\"]\nno_auto_approve = [\"list_files\", \"run_tests\"]\nno_auto_approve_paths = [\"y\"]\nmodel = \"b\"\n",
        )
        .unwrap();
        let loaded = load(&[user, ws]).unwrap();
        let list = |key| {
            let (value, _) = loaded.get(key).unwrap();
            value
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(list("deny_paths"), ["secrets/**", "x"]);
        assert_eq!(list("no_auto_approve"), ["run_tests", "list_files"]);
        assert_eq!(list("no_auto_approve_paths"), ["*.toml", "y"]);
        // Other settings still take the later file's value.
        assert_eq!(loaded.get("model").map(|(v, _)| v), Some("b".into()));
    }

    #[test]
    fn later_files_win_and_origins_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user.toml");
        let ws = dir.path().join("ws.toml");
        std::fs::write(
            &user,
            "model = \"a\"\nmax_steps = 5\nno_auto_approve = [\"run_tests\"]\n[models.\"a\"]\ncontext_window = 1000\n",
        )
        .unwrap();
        std::fs::write(
            &ws,
            "model = \"b\"\nprotocol = \"json\"\nno_auto_approve = []\n[models.\"b\"]\ninput = 1.0\n",
        )
        .unwrap();
        let loaded = load(&[user.clone(), ws.clone(), dir.path().join("missing.toml")]).unwrap();
        let value = |key| loaded.get(key).map(|(v, path)| (v, path.to_path_buf()));
        assert_eq!(value("model"), Some(("b".into(), ws.clone())));
        assert_eq!(value("max_steps"), Some((5.into(), user.clone())));
        assert_eq!(value("protocol"), Some(("json".into(), ws.clone())));
        let (list, origin) = loaded.get("no_auto_approve").unwrap();
        assert_eq!(
            list.as_array().map(Vec::len),
            Some(1),
            "an empty list keeps the earlier one"
        );
        assert_eq!(origin, user);
        let (models, _) = loaded.get("models").unwrap();
        let models = models.as_table().unwrap();
        assert_eq!(models["a"]["context_window"].as_integer(), Some(1000));
        assert_eq!(models["b"]["input"].as_float(), Some(1.0));
        assert_eq!(value("max_retries"), None);
        assert_eq!(loaded.files().collect::<Vec<_>>(), [&user, &ws]);
    }

    #[test]
    fn unknown_keys_and_bad_toml_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "modle = \"x\"\n").unwrap();
        let err = load(std::slice::from_ref(&bad)).unwrap_err();
        assert!(err.contains("bad.toml") && err.contains("modle"), "{err}");
        assert!(err.contains("max_steps"), "lists the known keys: {err}");
        std::fs::write(&bad, "max_steps = \n").unwrap();
        let err = load(std::slice::from_ref(&bad)).unwrap_err();
        assert!(err.contains("bad.toml"), "{err}");
    }
}
