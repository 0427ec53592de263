//! Glob patterns in a call's arguments (`/WS/.en[v]`, `*`, `sub/**/id_*`),
//! as a server that expands them would read them: which files of a folder
//! a pattern matches, and whether a pattern's names alone could match a
//! file the deny list refuses wherever it is.
//!
//! What must stay true: matching is never narrower than a server's (case is
//! ignored, `*` also crosses `/`, hidden files match, symlinked folders are
//! followed); a walk visits at most [`MAX_VISITED`] entries and stops below
//! the pattern's own depth, so no workspace (symlink loops, huge folders)
//! makes it run long; a pattern it cannot finish checking is reported as
//! such, never passed.

use crate::tools::workspace::deny::{DENIED_DIRS, DENIED_NAMES, denied_name};
use globset::{GlobBuilder, GlobMatcher};
use std::path::{Path, PathBuf};

/// How many folder entries one pattern may make the check visit.
pub const MAX_VISITED: usize = 20_000;

/// How deep a pattern with `**` is followed.
const MAX_DEPTH: usize = 32;

/// Whether `text` holds glob syntax a server could expand: `*`, `?`,
/// `[…]`, `{a,b}`, or a backslash escape.
pub fn is_pattern(text: &str) -> bool {
    text.contains(['*', '?', '[', '{', '\\'])
}

/// Whether `text` holds an extended glob (`@(…)`, `+(…)`, `!(…)`, `?(…)`,
/// `*(…)`), which the matcher here does not read as such servers do.
pub fn is_extended_pattern(text: &str) -> bool {
    ["@(", "+(", "!(", "?(", "*("]
        .iter()
        .any(|open| text.contains(open))
}

/// A pattern split at its first component holding glob syntax: the literal
/// folder it starts in and the pattern below it.
pub struct Pattern {
    /// The folder part before any glob syntax (`""` for none).
    pub base: String,
    /// The rest, `/`-separated, starting with a component holding glob syntax.
    pub rest: String,
    matcher: GlobMatcher,
}

impl Pattern {
    /// `None` when `text` holds no glob syntax or no glob reads it (an
    /// unclosed `[`): it is then only a name.
    pub fn parse(text: &str) -> Option<Pattern> {
        let parts: Vec<&str> = text.split('/').collect();
        let first = parts.iter().position(|p| is_pattern(p))?;
        let base = if first == 0 {
            String::new()
        } else if first == 1 && parts[0].is_empty() {
            "/".to_string()
        } else {
            parts[..first].join("/")
        };
        let rest = parts[first..]
            .iter()
            .filter(|p| !p.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("/");
        Some(Pattern {
            base,
            matcher: matcher(&rest)?,
            rest,
        })
    }

    /// How many folder levels below `base` the pattern can reach.
    fn depth(&self) -> usize {
        if self.rest.contains("**") {
            MAX_DEPTH
        } else {
            self.rest.split('/').count()
        }
    }

    /// Visit every entry below `base` (a folder on disk) the pattern
    /// matches, as a path relative to `base`, until `visit` says why one is
    /// refused. `Err`: more entries than [`MAX_VISITED`] had to be looked at.
    pub fn each_match(
        &self,
        base: &Path,
        mut visit: impl FnMut(&Path) -> Option<String>,
    ) -> Result<Option<String>, TooMany> {
        let depth = self.depth();
        let mut visited = 0usize;
        let mut folders = vec![(base.to_path_buf(), PathBuf::new(), 1usize)];
        while let Some((folder, relative, level)) = folders.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                visited += 1;
                if visited > MAX_VISITED {
                    return Err(TooMany);
                }
                let below = relative.join(entry.file_name());
                if self.matcher.is_match(&below)
                    && let Some(why) = visit(&below)
                {
                    return Ok(Some(why));
                }
                // Followed through symlinks, as a server's expansion would.
                let path = entry.path();
                if level < depth && std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
                    folders.push((path, below, level + 1));
                }
            }
        }
        Ok(None)
    }
}

/// A pattern that would have taken too long to check.
#[derive(Debug)]
pub struct TooMany;

/// Why a pattern's names alone could match a file refused wherever it is
/// (used for patterns outside the workspace, where nothing is walked).
pub fn could_name_denied(pattern: &str) -> Option<&'static str> {
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    for (i, part) in parts.iter().enumerate() {
        if !is_pattern(part) {
            continue;
        }
        let Some(one) = matcher(part) else {
            continue;
        };
        if DENIED_DIRS.iter().any(|d| one.is_match(d)) {
            return Some("it is a pattern that could match .git/, .stepwise/ or .kube/");
        }
        let last = i + 1 == parts.len();
        if last && denied_examples().iter().any(|n| one.is_match(n)) {
            return Some(
                "it is a pattern that could match an environment file, a private key or a credential file",
            );
        }
    }
    None
}

/// One or two names each entry of the fixed deny list refuses (`*` as
/// nothing and as one letter).
fn denied_examples() -> Vec<String> {
    DENIED_NAMES
        .iter()
        .flat_map(|glob| [glob.replace('*', ""), glob.replace('*', "x")])
        .filter(|name| denied_name(name))
        .collect()
}

/// The widest reading of a glob: any case, `*` crossing `/`, `\` escaping.
fn matcher(glob: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(glob)
        .case_insensitive(true)
        .literal_separator(false)
        .backslash_escape(true)
        .empty_alternates(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_starts_at_its_first_glob_component() {
        let p = Pattern::parse("/ws/src/*.py").unwrap();
        assert_eq!((p.base.as_str(), p.rest.as_str()), ("/ws/src", "*.py"));
        let p = Pattern::parse("/.en[v]").unwrap();
        assert_eq!((p.base.as_str(), p.rest.as_str()), ("/", ".en[v]"));
        let p = Pattern::parse("a/**/b?").unwrap();
        assert_eq!(
            (p.base.as_str(), p.rest.as_str(), p.depth()),
            ("a", "**/b?", MAX_DEPTH)
        );
        assert!(Pattern::parse("plain/path.txt").is_none());
        assert!(Pattern::parse("unclosed[").is_none(), "no glob reads it");
    }

    #[test]
    fn matches_are_found_below_the_base_and_no_deeper_than_the_pattern() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b/c")).unwrap();
        std::fs::write(dir.path().join(".env"), "").unwrap();
        std::fs::write(dir.path().join("a/b/c/deep.txt"), "").unwrap();
        let found = |glob: &str| {
            let mut seen = Vec::new();
            let pattern = Pattern::parse(glob).unwrap();
            pattern
                .each_match(&dir.path().join(&pattern.base), |p| {
                    seen.push(p.display().to_string());
                    None
                })
                .unwrap();
            seen.sort();
            seen
        };
        assert_eq!(found(".EN[v]"), [".env"]);
        assert_eq!(found("*"), [".env", "a"]);
        assert_eq!(found("?/*"), ["a/b"]);
        assert_eq!(found("**/*.txt"), ["a/b/c/deep.txt"]);
        assert_eq!(found("a/{x,b}"), ["b"]);
        assert_eq!(found("a/b/c/dee\\p.txt"), ["deep.txt"]);
    }

    #[test]
    fn a_symlink_loop_ends_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..4 {
            std::os::unix::fs::symlink(".", dir.path().join(format!("l{i}"))).unwrap();
        }
        let result = Pattern::parse("**/nothing")
            .unwrap()
            .each_match(dir.path(), |_| None);
        assert!(result.is_err(), "a loop under ** is too many, not a hang");
    }

    #[test]
    fn names_alone_decide_outside_the_workspace() {
        for pattern in [
            "/home/u/.ssh/id_*",
            "/srv/app/.en?",
            "/srv/*",
            "/srv/.gi[t]/config",
            "/srv/**",
            "/srv/*.PE[M]",
            "/srv/src/**/*.rs",
            "/srv/src/*/*.rs",
        ] {
            assert!(could_name_denied(pattern).is_some(), "{pattern}");
        }
        for pattern in ["/srv/*.py", "/srv/src/a?/*.rs", "/srv/data?.csv"] {
            assert_eq!(could_name_denied(pattern), None, "{pattern}");
        }
    }
}
