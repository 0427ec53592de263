//! The paths of a policy: the built-in tool caches a test run may write and
//! the secrets it may not read, `~/` expanded against `HOME`.
//!
//! What must stay true: the hidden list always holds stepwise's own config
//! folder, whatever the configuration says.

use std::path::PathBuf;

/// Tool caches the common runners write (cargo, npm, go, pip/pytest), under `HOME`.
const CACHES: &[&str] = &[
    "~/.cargo/registry",
    "~/.cargo/git",
    "~/.npm",
    "~/.cache/go-build",
    "~/go/pkg/mod",
    "~/.cache/pip",
];

/// Cache folders named by the environment.
const CACHE_VARS: &[&str] = &[
    "CARGO_TARGET_DIR",
    "GOCACHE",
    "GOMODCACHE",
    "npm_config_cache",
];

/// Secrets hidden by default.
const HIDDEN: &[&str] = &["~/.ssh", "~/.aws", "~/.config/gh", "~/.netrc", "~/.gnupg"];

/// `~/x` against `HOME`; other paths as written.
pub fn expand(path: &str) -> Option<PathBuf> {
    match path.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|home| PathBuf::from(home).join(rest)),
        None => Some(PathBuf::from(path)),
    }
}

pub fn writable(extra: &[String]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = CACHES.iter().filter_map(|p| expand(p)).collect();
    out.extend(
        CACHE_VARS
            .iter()
            .filter_map(std::env::var_os)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
    );
    out.extend(extra.iter().filter_map(|p| expand(p)));
    out
}

pub fn hidden(configured: Option<&[String]>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = match configured {
        Some(list) => list.iter().filter_map(|p| expand(p)).collect(),
        None => HIDDEN.iter().filter_map(|p| expand(p)).collect(),
    };
    if let Some(dirs) = directories::ProjectDirs::from("", "", "stepwise") {
        out.push(dirs.config_dir().to_path_buf());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_folder_is_always_hidden() {
        let list = hidden(Some(&["/srv/secret".to_string()]));
        assert_eq!(list[0], PathBuf::from("/srv/secret"));
        assert!(list.iter().any(|p| p.ends_with("stepwise")), "{list:?}");
    }
}
