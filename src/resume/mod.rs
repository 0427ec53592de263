//! Resuming a session from its transcript (`stepwise resume`, `--continue`,
//! `--resume NAME`): the signed checkpoints the transcript holds
//! (`writer`), reading them back (`reader`), the key that signs them
//! (`key`), and the list of this workspace's sessions (`list`).
//!
//! What a resumed session trusts: only checkpoints signed with this user's
//! key (in the user's config folder, never in the workspace). A transcript
//! that arrived with a repository (a stranger's `.stepwise/sessions/`), or
//! that was edited, has no valid MAC: it is not offered and not resumed, so
//! nothing the user did not see can be put into the model's history or the
//! undo log. Event records are never trusted for resuming at all.
//!
//! What must stay true: the transcript version is [`VERSION`]; a record with
//! a higher `"v"` is refused with [`LoadError::Newer`]; a session name is a
//! plain file name inside the sessions folder (checked by [`check_name`]).

pub mod key;
pub mod list;
pub mod reader;
pub mod writer;

#[cfg(test)]
mod reader_tests;

use crate::agent::history::saved::SavedState;

/// The transcript format's version (on the header and on every checkpoint).
pub const VERSION: u32 = 1;

/// A transcript's file name ends with this.
pub const SUFFIX: &str = ".jsonl";

/// A session read back from its transcript.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The transcript's name (its file name without `.jsonl`).
    pub name: String,
    /// The session's id (in every checkpoint).
    pub session: String,
    pub started: String,
    pub model: String,
    /// The number of the last checkpoint applied.
    pub seq: u64,
    pub state: SavedState,
    /// The file's last line was incomplete (and ignored).
    pub cut_off: bool,
}

/// Why a transcript cannot be resumed.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadError {
    /// Written by a newer stepwise (this transcript version).
    Newer(u64),
    /// A checkpoint without a valid MAC under this user's key.
    Untrusted,
    /// Signed, but not a consistent session.
    Damaged(String),
    TooLarge,
    /// No checkpoint at all (an older stepwise, or nothing happened yet).
    NothingToResume,
    Io(String),
}

impl LoadError {
    /// The message for the user, naming the transcript.
    pub fn explain(&self, name: &str) -> String {
        match self {
            LoadError::Newer(v) => format!(
                "session {name} was written by a newer stepwise (transcript version {v}; this one reads version {VERSION}): update stepwise to resume it"
            ),
            LoadError::Untrusted => format!(
                "session {name} was not written by your stepwise for this workspace (its checkpoints are not signed with your key for this folder: it came with the repository, was edited, or belongs to another workspace sharing the log folder): it is not resumed"
            ),
            LoadError::Damaged(what) => {
                format!("session {name} is damaged ({what}): it is not resumed")
            }
            LoadError::TooLarge => format!(
                "session {name} is larger than {} MiB: it is not resumed",
                reader::MAX_BYTES / 1024 / 1024
            ),
            LoadError::NothingToResume => {
                format!("session {name} has nothing to resume (no checkpoint in its transcript)")
            }
            LoadError::Io(e) => format!("session {name}: {e}"),
        }
    }
}

/// A session name as given by the user: a plain file name in the sessions
/// folder, with or without `.jsonl`. Returns the name without the suffix.
pub fn check_name(given: &str) -> Result<String, String> {
    let name = given.strip_suffix(SUFFIX).unwrap_or(given);
    let plain = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        Ok(name.to_string())
    } else {
        Err(format!(
            "{} is not a session name (see `stepwise resume` for the list)",
            crate::present::one_line(given)
        ))
    }
}

/// Single-quoted for a POSIX shell.
fn quoted(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./~:@+=,".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The options that find the same sessions again: `-C` when the workspace
/// was named, `--log-dir` when the transcripts live elsewhere.
pub fn locating_args(
    workspace: Option<&std::path::Path>,
    log_dir: Option<&std::path::Path>,
) -> String {
    let mut out = String::new();
    if let Some(ws) = workspace {
        out.push_str(&format!(" -C {}", quoted(&ws.display().to_string())));
    }
    if let Some(dir) = log_dir {
        out.push_str(&format!(
            " --log-dir {}",
            quoted(&dir.display().to_string())
        ));
    }
    out
}

/// The command that reopens session `name` in the UI.
pub fn ui_command(name: &str, locating: &str) -> String {
    format!("stepwise{locating} resume {}", quoted(name))
}

/// The command that continues session `name` headless.
pub fn exec_command(name: &str, locating: &str) -> String {
    format!(
        "stepwise{locating} exec --resume {} \"NEXT TASK\"",
        quoted(name)
    )
}

/// The session to resume in the sessions folder `dir` (`shown` is its path).
pub fn find(
    (dir, shown): &(cap_std::fs::Dir, std::path::PathBuf),
    from: &crate::config::ResumeFrom,
    workspace: &std::path::Path,
) -> Result<Loaded, String> {
    use crate::config::ResumeFrom;
    let key = key::SigningKey::for_workspace(workspace)?;
    match from {
        ResumeFrom::Named(given) => list::load(dir, &check_name(given)?, &key),
        ResumeFrom::Handed(given) => match find_handed(dir, given, &key)? {
            Some(loaded) => Ok(loaded),
            None => Err(LoadError::NothingToResume.explain(given)),
        },
        ResumeFrom::Newest => {
            let found = list::sessions(dir, &key);
            let skipped = match found.refused.len() {
                0 => String::new(),
                n => format!(
                    " ({n} transcript(s) there not written by your stepwise, or damaged, were skipped)"
                ),
            };
            found
                .trusted
                .into_iter()
                .next()
                .ok_or_else(|| format!("no session to continue in {}{skipped}", shown.display()))
        }
    }
}

/// The session an editor was handed, `None` when its transcript exists but
/// holds no checkpoint yet (it was never prompted: an empty session).
pub fn find_handed(
    dir: &cap_std::fs::Dir,
    given: &str,
    key: &key::SigningKey,
) -> Result<Option<Loaded>, String> {
    let name = check_name(given)?;
    let file = format!("{name}{SUFFIX}");
    match reader::read_capped(dir, &file).and_then(|b| reader::parse(&b, &name, key)) {
        Ok(loaded) => Ok(Some(loaded)),
        Err(LoadError::NothingToResume) => Ok(None),
        Err(e) => Err(e.explain(&name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_file_names() {
        assert_eq!(
            check_name("2026-12-01T09-40-00Z.jsonl").unwrap(),
            "2026-12-01T09-40-00Z"
        );
        assert_eq!(
            check_name("2026-12-01T09-40-00Z-2").unwrap(),
            "2026-12-01T09-40-00Z-2"
        );
        for bad in ["", "../x", "a/b", ".hidden", "a b", "x\x1b[2J"] {
            let err = check_name(bad).unwrap_err();
            assert!(!err.contains('\x1b'), "{err}");
        }
    }

    #[test]
    fn commands_quote_what_a_shell_would_split() {
        let loc = locating_args(Some(std::path::Path::new("/tmp/my proj")), None);
        assert_eq!(
            ui_command("s1", &loc),
            "stepwise -C '/tmp/my proj' resume s1"
        );
        assert_eq!(
            exec_command("s1", ""),
            "stepwise exec --resume s1 \"NEXT TASK\""
        );
        assert_eq!(quoted("it's"), "'it'\\''s'");
    }
}
