//! Trusted folders: which guarded values (see `guard`) the project files of a
//! folder set, whether the user has trusted exactly those values, and the
//! store of answers (`trusted.toml` in the user's config folder).
//!
//! What must stay true: a remembered answer covers only the values it was
//! given for (a digest of every guarded assignment of the folder), so a file
//! a test run plants or changes is asked about again; the store is written
//! atomically (a temporary file renamed over it); a store that cannot be
//! read trusts nothing; values are shown escaped, one per line.

use super::dotenv::DotEnv;
use super::settings::{self, Guard};
use clap::ArgMatches;
use clap::parser::ValueSource;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

pub const STORE_NAME: &str = "trusted.toml";

/// One guarded value a project file sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub file: PathBuf,
    /// `key = value` (TOML) or `NAME="value"` (`.env`), escaped.
    pub text: String,
    /// What the value decides.
    pub decides: &'static str,
}

/// A folder whose project files set guarded values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub folder: PathBuf,
    pub assignments: Vec<Assignment>,
}

impl Pending {
    /// What a remembered answer is bound to.
    pub fn digest(&self) -> String {
        let mut hash = Sha256::new();
        for a in &self.assignments {
            hash.update(a.file.to_string_lossy().as_bytes());
            hash.update([0]);
            hash.update(a.text.as_bytes());
            hash.update([b'\n']);
        }
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The lines naming each file and value.
    pub fn lines(&self) -> Vec<String> {
        self.assignments
            .iter()
            .map(|a| format!("  {}: {}  ({})", a.file.display(), a.text, a.decides))
            .map(|line| visible(&line))
            .collect()
    }
}

/// Control characters (a hostile file's escape sequences) shown as escapes.
fn visible(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            c if c.is_control() => c.escape_default().collect(),
            c => c.to_string(),
        })
        .collect()
}

/// A folder as the store names it: its canonical path when it has one.
pub fn folder_of(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Remove from a project file's table what an untrusted folder may not set
/// (keeping the open part of a split value), and return what was removed.
/// Values a flag or environment variable overrides are removed but not
/// returned: they would not apply anyway.
pub fn withhold(table: &mut toml::Table, path: &Path, matches: &ArgMatches) -> Vec<Assignment> {
    let mut withheld = Vec::new();
    let keys: Vec<String> = table.keys().cloned().collect();
    for key in keys {
        let Some(row) = settings::by_key(&key) else {
            continue;
        };
        let Some(decides) = row.guard.decides() else {
            continue;
        };
        let Some(value) = table.remove(&key) else {
            continue;
        };
        let split = row.guard.split(&value);
        if let Some(open) = split.open {
            table.insert(key.clone(), open);
        }
        let overridden = matches!(row.guard, Guard::Trusted(_))
            && row.flag.is_some_and(|id| {
                matches!(
                    matches.value_source(id),
                    Some(ValueSource::CommandLine | ValueSource::EnvVariable)
                )
            });
        if let (Some(guarded), false) = (split.guarded, overridden) {
            withheld.extend(leaves(&key, &guarded).into_iter().map(|text| Assignment {
                file: path.to_path_buf(),
                text,
                decides,
            }));
        }
    }
    withheld
}

/// `key = value` for each value inside `value`, so that a table shows in full.
pub(super) fn leaves(key: &str, value: &toml::Value) -> Vec<String> {
    match value {
        toml::Value::Table(table) => table
            .iter()
            .flat_map(|(name, inner)| {
                let bare = !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                let name = if bare {
                    name.clone()
                } else {
                    format!("{name:?}")
                };
                leaves(&format!("{key}.{name}"), inner)
            })
            .collect(),
        _ => vec![settings::assignment(key, value)],
    }
}

/// Every folder whose project files set guarded values that would apply:
/// the workspace's `stepwise.toml` (what the layered configuration of an
/// untrusted folder withheld from it, `project`), and the `.env` read from
/// `env_folder`.
pub fn pending(
    project: Vec<Assignment>,
    workspace: &Path,
    env: &DotEnv,
    env_folder: &Path,
) -> Vec<Pending> {
    let mut by_folder: BTreeMap<PathBuf, Vec<Assignment>> = BTreeMap::new();
    by_folder
        .entry(folder_of(workspace))
        .or_default()
        .extend(project);
    if let Some(path) = &env.path {
        let found = env.guarded().map(|(name, value, decides)| Assignment {
            file: path.clone(),
            text: format!("{name}={value:?}"),
            decides,
        });
        by_folder
            .entry(folder_of(env_folder))
            .or_default()
            .extend(found);
    }
    by_folder
        .into_iter()
        .filter(|(_, a)| !a.is_empty())
        .map(|(folder, assignments)| Pending {
            folder,
            assignments,
        })
        .collect()
}

/// What the user answered for a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Trusted,
    Declined,
}

/// The remembered answers, by folder.
#[derive(Debug, Clone, Default)]
pub struct TrustStore {
    path: Option<PathBuf>,
    answers: BTreeMap<String, (Answer, String)>,
}

#[derive(serde::Deserialize)]
struct StoreFile {
    #[serde(default)]
    folders: BTreeMap<String, Entry>,
}

#[derive(serde::Deserialize)]
struct Entry {
    answer: String,
    values: String,
}

impl TrustStore {
    /// The store in the user's config folder (empty when there is none).
    pub fn load() -> TrustStore {
        match directories::ProjectDirs::from("", "", "stepwise") {
            Some(dirs) => TrustStore::load_from(&dirs.config_dir().join(STORE_NAME)),
            None => TrustStore::default(),
        }
    }

    /// The store at `path`; an unreadable or broken file trusts nothing.
    pub fn load_from(path: &Path) -> TrustStore {
        let parsed = super::read::regular_text(path, super::read::MAX_CONFIG_BYTES)
            .ok()
            .flatten()
            .and_then(|text| toml::from_str::<StoreFile>(&text).ok());
        let answers = parsed
            .map(|f| f.folders)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(folder, e)| {
                let answer = match e.answer.as_str() {
                    "trusted" => Answer::Trusted,
                    "declined" => Answer::Declined,
                    _ => return None,
                };
                Some((folder, (answer, e.values)))
            })
            .collect();
        TrustStore {
            path: Some(path.to_path_buf()),
            answers,
        }
    }

    /// The remembered answer for exactly these values, if any.
    pub fn answer(&self, pending: &Pending) -> Option<Answer> {
        let (answer, digest) = self.answers.get(&key_of(&pending.folder))?;
        (*digest == pending.digest()).then_some(*answer)
    }

    /// Remember an answer for these values, replacing the file atomically.
    pub fn remember(&mut self, pending: &Pending, answer: Answer) -> std::io::Result<()> {
        self.answers
            .insert(key_of(&pending.folder), (answer, pending.digest()));
        let Some(path) = &self.path else {
            return Ok(());
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut text = String::from(
            "# Folders whose project files stepwise may follow (written by stepwise).\n",
        );
        for (folder, (answer, digest)) in &self.answers {
            let answer = match answer {
                Answer::Trusted => "trusted",
                Answer::Declined => "declined",
            };
            // A JSON string is a valid TOML basic string.
            let quoted = serde_json::to_string(folder).unwrap_or_default();
            text.push_str(&format!(
                "\n[folders.{quoted}]\nanswer = \"{answer}\"\nvalues = \"{digest}\"\n"
            ));
        }
        let tmp = dir.join(format!(".{STORE_NAME}.{}.tmp", std::process::id()));
        let mut out = std::fs::File::create(&tmp)?;
        out.write_all(text.as_bytes())?;
        out.sync_all()?;
        std::fs::rename(&tmp, path)
    }
}

fn key_of(folder: &Path) -> String {
    folder.to_string_lossy().into_owned()
}

/// Ask on the terminal whether to trust a folder's values; only `y`/`yes` trusts.
pub fn ask(
    pending: &Pending,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> std::io::Result<Answer> {
    writeln!(
        out,
        "stepwise: project files in {} set values that decide where requests (and your API key) go or what runs:",
        visible(&pending.folder.display().to_string())
    )?;
    for line in pending.lines() {
        writeln!(out, "{line}")?;
    }
    write!(
        out,
        "Trust this folder and apply them? Otherwise they are ignored; the other settings still apply. [y/N] "
    )?;
    out.flush()?;
    let mut line = String::new();
    input.read_line(&mut line)?;
    let yes = matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes");
    Ok(if yes {
        Answer::Trusted
    } else {
        Answer::Declined
    })
}

/// Why `exec` will not run in an untrusted folder, and the two ways on.
pub fn refusal(pending: &Pending) -> String {
    format!(
        "{} is not trusted, and its project files set values that decide where requests (and your API key) go or what runs:\n{}\nCheck them, then run again with --trust to trust the folder for this run, or with --untrusted to run without them on your own settings (the full-screen UI asks once and remembers).",
        visible(&pending.folder.display().to_string()),
        pending.lines().join("\n")
    )
}

/// What a run without the folder's guarded values says, naming each value
/// it did not apply (the answer "no" of the question, or `--untrusted`).
pub fn withheld(pending: &Pending) -> String {
    format!(
        "not applying what {} says about where requests go or what runs (folder not trusted):\n{}",
        visible(&pending.folder.display().to_string()),
        pending.lines().join("\n")
    )
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
