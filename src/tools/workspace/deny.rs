//! The deny list: files no tool may read, write, list or search, whatever the
//! configuration says. A fixed part (environment files, private keys,
//! credential files, anything inside `.git/` or `.stepwise/`) matched by name
//! in any folder and without regard to case (a case-insensitive file system
//! opens `.ENV` as `.env`), plus the globs of `deny_paths`, relative to the
//! workspace root.
//!
//! What must stay true: the list only ever refuses more; every tool asks it
//! about the path the model gave *and* about the path the file really has
//! (a symlink with an innocent name is judged by its target).

use crate::tools::workspace::path::{PathError, RelPath};
use globset::{Glob, GlobSet, GlobSetBuilder};
use std::path::{Component, Path};

/// File names never readable or writable, as globs on the last path
/// component (documentation; [`denied_name`] is the check).
pub const DENIED_NAMES: [&str; 17] = [
    ".env",
    ".env.*",
    ".envrc",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pypirc",
    ".npmrc",
    ".git-credentials",
    ".pgpass",
    "*.pgpass",
    "service-account*.json",
    "kubeconfig",
];

/// Folders whose whole content is denied, wherever they are (`.kube/`
/// holds cluster credentials).
pub const DENIED_DIRS: [&str; 3] = [".git", ".stepwise", ".kube"];

/// Whether a file name (any case) is on the fixed list. Written out rather
/// than matched as globs, and without allocating: it runs for every file a
/// listing or search walks.
pub fn denied_name(name: &str) -> bool {
    let n = name.as_bytes();
    let is = |word: &str| n.eq_ignore_ascii_case(word.as_bytes());
    let starts =
        |word: &str| n.len() >= word.len() && n[..word.len()].eq_ignore_ascii_case(word.as_bytes());
    let ends = |word: &str| {
        n.len() >= word.len() && n[n.len() - word.len()..].eq_ignore_ascii_case(word.as_bytes())
    };
    is(".env")
        || is(".envrc")
        || is(".netrc")
        || is(".pypirc")
        || is(".npmrc")
        || is(".git-credentials")
        || is("kubeconfig")
        || starts(".env.")
        || ends(".pem")
        || ends(".key")
        || ends(".pgpass")
        || starts("id_rsa")
        || starts("id_dsa")
        || starts("id_ecdsa")
        || starts("id_ed25519")
        || (starts("service-account") && ends(".json"))
}

/// The fixed names plus the configured globs.
#[derive(Debug, Clone, Default)]
pub struct DenyList {
    configured: GlobSet,
    patterns: Vec<String>,
}

/// Two lists are the same when their globs are.
impl PartialEq for DenyList {
    fn eq(&self, other: &Self) -> bool {
        self.patterns == other.patterns
    }
}

impl Eq for DenyList {}

impl DenyList {
    /// The fixed list plus `configured` globs (matched against the
    /// `/`-separated path from the workspace root).
    pub fn new(configured: &[Glob]) -> Result<Self, String> {
        let mut extra = GlobSetBuilder::new();
        for glob in configured {
            extra.add(glob.clone());
        }
        Ok(DenyList {
            configured: extra
                .build()
                .map_err(|e| format!("deny_paths cannot be used: {e}"))?,
            patterns: configured.iter().map(|g| g.glob().to_string()).collect(),
        })
    }

    /// Why `path` (relative to the workspace root) is denied, if it is.
    pub fn reason(&self, path: &Path) -> Option<String> {
        let parts: Vec<&str> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(p) => p.to_str(),
                _ => None,
            })
            .collect();
        let last = parts.last()?;
        if let Some(dir) = parts
            .iter()
            .find_map(|p| DENIED_DIRS.iter().find(|d| d.eq_ignore_ascii_case(p)))
        {
            return Some(format!("everything inside {dir}/ is off limits"));
        }
        if denied_name(last) {
            return Some(
                "environment files, private keys and credential files are never readable or writable"
                    .into(),
            );
        }
        if !self.configured.is_empty() && self.configured.is_match(parts.join("/")) {
            return Some(format!(
                "it matches deny_paths in the configuration ({})",
                self.patterns.join(", ")
            ));
        }
        None
    }

    /// Whether a file a walk found is denied: the walk never enters `.git/`
    /// or `.stepwise/`, so its name and the configured globs decide.
    pub fn denies_walked(&self, relative: &Path, name: &str) -> bool {
        denied_name(name) || (!self.configured.is_empty() && self.configured.is_match(relative))
    }

    /// Whether `deny_paths` names anything (else only the fixed names count).
    pub fn has_configured(&self) -> bool {
        !self.configured.is_empty()
    }

    /// The `deny_paths` globs, as written.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether `path` is denied.
    pub fn denies(&self, path: &Path) -> bool {
        self.reason(path).is_some()
    }

    /// Refuse `rel` (as the model named it) when it is denied.
    pub fn check(&self, rel: &RelPath) -> Result<(), PathError> {
        self.check_as(rel, rel.as_path())
    }

    /// Refuse `rel` when the file it really is (`real`, relative to the root)
    /// is denied; the message names both when they differ.
    pub fn check_as(&self, rel: &RelPath, real: &Path) -> Result<(), PathError> {
        let Some(why) = self.reason(real) else {
            return Ok(());
        };
        let shown = rel.display();
        let real_shown = real.to_string_lossy();
        Err(PathError(if real_shown == shown {
            format!("{shown} is refused: {why}")
        } else {
            format!("{shown} is refused: it leads to {real_shown}, and {why}")
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_names_in_any_folder_and_any_case() {
        let deny = DenyList::default();
        for denied in [
            ".env",
            ".env.local",
            "app/.ENV",
            "certs/server.pem",
            "tls.key",
            "home/id_rsa",
            "id_rsa.pub",
            "id_ecdsa",
            "id_ed25519_work",
            ".netrc",
            "pkg/.pypirc",
            ".npmrc",
            ".git-credentials",
            ".git/config",
            "vendor/lib/.git/HEAD",
            ".stepwise/lock",
            ".git",
            ".envrc",
            "home/.ssh/id_dsa",
            ".pgpass",
            "db/prod.pgpass",
            "service-account.json",
            "deploy/service-account-prod.json",
            "kubeconfig",
            ".kube/config",
        ] {
            assert!(deny.denies(Path::new(denied)), "{denied}");
        }
        for allowed in [
            "src/lib.rs",
            "environment.py",
            "keys.py",
            "monkey.txt",
            ".gitignore",
            "docs/git/notes.md",
            "env/.envrc.md",
            "service-account.md",
            "accounts.json",
        ] {
            assert!(!deny.denies(Path::new(allowed)), "{allowed}");
        }
    }

    #[test]
    fn configured_globs_add_more() {
        let globs = [
            Glob::new("secrets/**").unwrap(),
            Glob::new("*.sqlite").unwrap(),
        ];
        let deny = DenyList::new(&globs).unwrap();
        assert!(deny.denies(Path::new("secrets/db/password.txt")));
        assert!(deny.denies(Path::new("data/app.sqlite")));
        assert!(!deny.denies(Path::new("src/secrets.py")));
        let why = deny.reason(Path::new("secrets/a")).unwrap();
        assert!(
            why.contains("deny_paths") && why.contains("secrets/**"),
            "{why}"
        );
    }
}
