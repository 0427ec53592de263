//! `./.env`: read without touching the environment, keeping only the
//! variables stepwise documents (each row's variable and `guard::ENV_ONLY`),
//! and splitting them into those any `.env` may set and those that wait for
//! the folder to be trusted.
//!
//! What must stay true: nothing here sets a variable (the binary does, before
//! any thread exists); a variable already in the environment wins and is
//! dropped here; an undocumented variable is never passed on; a base URL is
//! open only when the key sent to it comes from this same file (the file
//! sets a key variable, the environment sets none of them).

use super::guard::Guard;
use super::providers::{KEY_VARS, is_key_var};
use std::path::{Path, PathBuf};

/// The variable of the base URL row, open when paired with the key in one file.
const BASE_URL_VAR: &str = "OPENAI_BASE_URL";

/// The documented variables of one `.env` that the environment does not already set.
#[derive(Debug, Clone, Default)]
pub struct DotEnv {
    /// The file, as found (`None`: there was none).
    pub path: Option<PathBuf>,
    /// Name, value and guard of each variable, in file order.
    vars: Vec<(String, String, Guarded)>,
    /// Names in the file that stepwise does not read.
    pub ignored: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Guarded {
    Open,
    Trusted(&'static str),
}

impl DotEnv {
    /// Read `path`; a missing file is an empty `DotEnv`, a broken one an error naming it.
    pub fn read(path: &Path) -> Result<DotEnv, String> {
        Self::read_with(path, |name| std::env::var_os(name).is_some())
    }

    /// `read`, asking `already_set` instead of the environment (for tests).
    pub fn read_with(path: &Path, already_set: impl Fn(&str) -> bool) -> Result<DotEnv, String> {
        let entries = match dotenvy::from_path_iter(path) {
            Ok(entries) => entries,
            Err(e) if e.not_found() => return Ok(DotEnv::default()),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let mut env = DotEnv {
            path: Some(path.to_path_buf()),
            ..DotEnv::default()
        };
        for entry in entries {
            let (name, value) =
                entry.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let Some(guard) = super::settings::env_guard(&name) else {
                env.ignored.push(name);
                continue;
            };
            if already_set(&name) || env.vars.iter().any(|(n, _, _)| *n == name) {
                continue; // the environment (or the file's first line) wins
            }
            let guarded = match guard {
                Guard::Open => Guarded::Open,
                Guard::Trusted(what) | Guard::Part(what, _) => Guarded::Trusted(what),
            };
            env.vars.push((name, value, guarded));
        }
        // Whichever provider is chosen, the key sent to the file's URL must be
        // the file's own: it sets a key and the environment sets none.
        let pairs_key = env.vars.iter().any(|(n, _, _)| is_key_var(n))
            && !KEY_VARS.iter().any(|v| already_set(v));
        for (name, _, guarded) in &mut env.vars {
            if pairs_key && name == BASE_URL_VAR {
                *guarded = Guarded::Open;
            }
        }
        Ok(env)
    }

    /// Variables any `.env` may set.
    pub fn open(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars
            .iter()
            .filter(|(_, _, g)| *g == Guarded::Open)
            .map(|(n, v, _)| (n.as_str(), v.as_str()))
    }

    /// Variables that wait for the folder to be trusted: name, value and what it decides.
    pub fn guarded(&self) -> impl Iterator<Item = (&str, &str, &'static str)> {
        self.vars.iter().filter_map(|(n, v, g)| match g {
            Guarded::Trusted(what) => Some((n.as_str(), v.as_str(), *what)),
            Guarded::Open => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, set: &[&str]) -> DotEnv {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(&path, text).unwrap();
        DotEnv::read_with(&path, |n| set.contains(&n)).unwrap()
    }

    fn names<'a>(it: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
        it.collect()
    }

    #[test]
    fn only_documented_variables_are_kept_and_redirecting_ones_wait() {
        let env = read(
            "OPENAI_BASE_URL=http://evil.example/v1\nHTTP_PROXY=http://p:1\nSTEPWISE_PYTHON=/tmp/x\nSTEPWISE_MODEL=m\nLD_PRELOAD=/tmp/evil.so\nPATH=/tmp\n",
            &[],
        );
        assert_eq!(names(env.open().map(|(n, _)| n)), ["STEPWISE_MODEL"]);
        assert_eq!(
            names(env.guarded().map(|(n, _, _)| n)),
            ["OPENAI_BASE_URL", "HTTP_PROXY", "STEPWISE_PYTHON"]
        );
        assert_eq!(env.ignored, ["LD_PRELOAD", "PATH"]);
    }

    #[test]
    fn a_base_url_next_to_its_key_needs_no_trust_unless_the_environment_sends_its_own_key() {
        let text = "OPENAI_API_KEY=sk-file\nOPENAI_BASE_URL=http://host.example/v1\n";
        let env = read(text, &[]);
        assert_eq!(
            names(env.open().map(|(n, _)| n)),
            ["OPENAI_API_KEY", "OPENAI_BASE_URL"]
        );
        assert_eq!(env.guarded().count(), 0);
        let env = read(text, &["OPENAI_API_KEY"]);
        assert_eq!(env.open().count(), 0);
        assert_eq!(names(env.guarded().map(|(n, _, _)| n)), ["OPENAI_BASE_URL"]);
    }

    #[test]
    fn any_providers_key_pairs_with_the_base_url_unless_the_environment_has_a_key() {
        let text = "ANTHROPIC_API_KEY=sk-ant-file\nOPENAI_BASE_URL=http://host.example\n";
        let env = read(text, &[]);
        assert_eq!(
            names(env.open().map(|(n, _)| n)),
            ["ANTHROPIC_API_KEY", "OPENAI_BASE_URL"]
        );
        // The environment's OpenAI key could be the one sent to the file's URL.
        let env = read(text, &["OPENAI_API_KEY"]);
        assert_eq!(names(env.guarded().map(|(n, _, _)| n)), ["OPENAI_BASE_URL"]);
        let env = read("GROQ_API_KEY=g\nSTEPWISE_PROVIDER=groq\n", &[]);
        assert_eq!(names(env.open().map(|(n, _)| n)), ["GROQ_API_KEY"]);
        assert_eq!(
            names(env.guarded().map(|(n, _, _)| n)),
            ["STEPWISE_PROVIDER"],
            "which key is sent where waits for trust"
        );
    }

    #[test]
    fn the_environment_wins_and_a_missing_file_is_empty() {
        let env = read("STEPWISE_PYTHON=/tmp/x\n", &["STEPWISE_PYTHON"]);
        assert_eq!(env.guarded().count(), 0);
        let none = DotEnv::read(Path::new("/nonexistent/.env")).unwrap();
        assert!(none.path.is_none() && none.open().count() == 0);
    }
}
