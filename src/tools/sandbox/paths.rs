//! The paths of a policy: the build output folders a test run may write,
//! the code caches it may only read, and the secrets it may not read at
//! all, `~/` expanded against `HOME`.
//!
//! What must stay true: the hidden list always holds stepwise's own config
//! folder, whatever the configuration says; no cache of downloaded code
//! (cargo registry and git checkouts, pip, npm/npx, go modules) is on the
//! writable list by default.

use std::path::PathBuf;

/// Build output folders the common runners write, under `HOME`: what is
/// in them is rebuilt from sources, never taken for a source itself.
const OUTPUTS: &[&str] = &["~/.cache/go-build"];

/// Build output folders named by the environment; created before the run
/// when they do not exist yet (a fresh CI container), since the run could
/// not create them itself.
const OUTPUT_VARS: &[&str] = &["CARGO_TARGET_DIR", "GOCACHE"];

/// Caches of downloaded code that later programs run outside any sandbox
/// (a planted `build.rs`, a changed wheel or npx package would run on the
/// next unsandboxed build): read-only in test runs, with what fills them.
const CODE_CACHES: &[(&str, &str)] = &[
    ("~/.cargo/registry", "cargo fetch"),
    ("~/.cargo/git", "cargo fetch"),
    ("~/.cache/pip", "pip download (or pip install)"),
    ("~/.npm", "npm ci"),
    ("~/go/pkg/mod", "go mod download"),
];

/// Code caches named by the environment.
const CODE_CACHE_VARS: &[(&str, &str)] = &[
    ("GOMODCACHE", "go mod download"),
    ("npm_config_cache", "npm ci"),
    ("PIP_CACHE_DIR", "pip download (or pip install)"),
];

/// `~/x` against `HOME`; other paths as written.
pub fn expand(path: &str) -> Option<PathBuf> {
    match path.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|home| PathBuf::from(home).join(rest)),
        None => Some(PathBuf::from(path)),
    }
}

fn from_env(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The folders a run may write besides the workspace and its temporary
/// folder: the build outputs and the configured extra ones.
pub fn writable(extra: &[String]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = OUTPUTS.iter().filter_map(|p| expand(p)).collect();
    out.extend(outputs_to_create());
    out.extend(extra.iter().filter_map(|p| expand(p)));
    out
}

/// The build output folders named by the environment (created first).
pub fn outputs_to_create() -> Vec<PathBuf> {
    OUTPUT_VARS.iter().filter_map(|v| from_env(v)).collect()
}

/// The code caches (read-only to runs) and the command that fills each.
pub fn code_caches() -> Vec<(PathBuf, &'static str)> {
    let mut out: Vec<(PathBuf, &'static str)> = CODE_CACHES
        .iter()
        .filter_map(|(p, fill)| Some((expand(p)?, *fill)))
        .collect();
    if let Some(home) = from_env("CARGO_HOME") {
        out.push((home.join("registry"), "cargo fetch"));
        out.push((home.join("git"), "cargo fetch"));
    }
    out.extend(
        CODE_CACHE_VARS
            .iter()
            .filter_map(|(v, fill)| Some((from_env(v)?, *fill))),
    );
    out
}

/// Secrets hidden by default: keys, credentials and tokens of the common
/// tools (git, package registries, clouds, containers, coding agents), and
/// shell and REPL histories (commands typed with secrets in them).
const HIDDEN: &[&str] = &[
    "~/.ssh",
    "~/.gnupg",
    "~/.netrc",
    "~/.aws",
    "~/.config/gh",
    "~/.config/hub",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.npmrc",
    "~/.yarnrc.yml",
    "~/.pypirc",
    "~/.config/pip/pip.conf",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.docker",
    "~/.kube",
    "~/.config/gcloud",
    "~/.azure",
    "~/.oci",
    "~/.terraform.d",
    "~/.vault-token",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.codex",
    "~/.claude",
    "~/.claude.json",
    "~/.gemini",
    "~/.config/github-copilot",
    "~/.aider.conf.yml",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.zhistory",
    "~/.history",
    "~/.sh_history",
    "~/.local/share/fish/fish_history",
    "~/.python_history",
    "~/.node_repl_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.sqlite_history",
    "~/.lesshst",
];

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
    fn code_caches_are_not_writable_by_default() {
        let writable = writable(&[]);
        for (cache, _) in code_caches() {
            assert!(!writable.contains(&cache), "{}", cache.display());
        }
        assert!(
            code_caches()
                .iter()
                .any(|(p, fill)| p.ends_with(".cargo/registry") && *fill == "cargo fetch")
        );
    }

    #[test]
    fn the_config_folder_is_always_hidden() {
        let list = hidden(Some(&["/srv/secret".to_string()]));
        assert_eq!(list[0], PathBuf::from("/srv/secret"));
        assert!(list.iter().any(|p| p.ends_with("stepwise")), "{list:?}");
        let defaults = hidden(None);
        for name in [
            ".git-credentials",
            ".npmrc",
            ".pypirc",
            ".bash_history",
            ".codex",
        ] {
            assert!(defaults.iter().any(|p| p.ends_with(name)), "{name}");
        }
    }
}
