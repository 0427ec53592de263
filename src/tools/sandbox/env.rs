//! The environment a test run sees: an allowlist of names (paths, locale,
//! language tool homes) plus what `test_env = [...]` adds, never the API key,
//! and `TMPDIR`/`TMP`/`TEMP` pointing at the run's private temporary folder.
//!
//! What must stay true: a variable reaches a test only if its name is on the
//! list or named in `test_env`; a name matched only by a pattern (`LC_*`,
//! `PYTHON*`, `NODE_*`) is still dropped when it looks like a secret; the
//! API key variables (every provider's) are never passed, even when
//! `test_env` names them.

use std::ffi::OsString;
use std::path::Path;

/// Names passed as they are.
const EXACT: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "VIRTUAL_ENV",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TARGET_DIR",
    "GOPATH",
    "GOCACHE",
    "GOMODCACHE",
    "GOROOT",
];

/// Name prefixes passed unless the name looks like a secret.
const PREFIXES: &[&str] = &["LC_", "PYTHON", "NODE_PATH", "NODE_OPTIONS", "NODE_ENV"];

/// Set by stepwise itself for every run (the temporary folder).
const TEMP_VARS: &[&str] = &["TMPDIR", "TMP", "TEMP"];

/// The variable that holds the API key (never passed).
const KEY_VAR: &str = "OPENAI_API_KEY";

/// Whether a name looks like it holds a secret.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PWD",
        "CREDENTIAL",
        "AUTH",
        "DSN",
    ]
    .iter()
    .any(|word| upper.contains(word))
        && upper != "PWD"
}

/// Whether `name` may reach a test run, given the configured extra names.
pub fn allowed(name: &str, extra: &[String]) -> bool {
    if name.eq_ignore_ascii_case(KEY_VAR) || crate::config::providers::is_key_var(name) {
        return false;
    }
    if extra.iter().any(|e| e == name) || EXACT.contains(&name) {
        return true;
    }
    PREFIXES.iter().any(|p| name.starts_with(p)) && !looks_secret(name)
}

/// The whole environment of a run: the allowed part of `from`, then the
/// temporary folder under all three names.
pub fn build(
    from: impl IntoIterator<Item = (OsString, OsString)>,
    extra: &[String],
    temp: &Path,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = from
        .into_iter()
        .filter(|(k, _)| {
            k.to_str()
                .is_some_and(|k| allowed(k, extra) && !TEMP_VARS.contains(&k))
        })
        .collect();
    for var in TEMP_VARS {
        env.push((OsString::from(var), temp.as_os_str().to_owned()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(names: &[&str]) -> Vec<(OsString, OsString)> {
        names
            .iter()
            .map(|n| (OsString::from(n), OsString::from("v")))
            .collect()
    }

    #[test]
    fn only_listed_names_pass() {
        let env = build(
            pairs(&[
                "PATH",
                "HOME",
                "LC_ALL",
                "PYTHONPATH",
                "DATABASE_URL",
                "MYSQL_PWD",
                "GH_PAT",
                "HTTPS_PROXY",
                "SENTRY_DSN",
                "OPENAI_API_KEY",
                "PYTHON_KEYRING_TOKEN",
                "TMPDIR",
                "EXTRA_ONE",
            ]),
            &["EXTRA_ONE".into(), "OPENAI_API_KEY".into()],
            Path::new("/tmp/run"),
        );
        let names: Vec<_> = env.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "PATH",
                "HOME",
                "LC_ALL",
                "PYTHONPATH",
                "EXTRA_ONE",
                "TMPDIR",
                "TMP",
                "TEMP"
            ]
        );
        assert!(
            env.iter()
                .filter(|(k, _)| k == "TMPDIR")
                .all(|(_, v)| v == "/tmp/run")
        );
    }

    #[test]
    fn no_providers_key_passes_even_when_test_env_names_it() {
        for var in crate::config::providers::KEY_VARS {
            assert!(!allowed(var, &[var.to_string()]), "{var}");
        }
    }
}
