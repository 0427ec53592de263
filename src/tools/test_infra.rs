//! Whether a change to a file changes how the tests run: the project's test
//! setup (`conftest.py`), runner configuration (pytest, tox, jest, vitest,
//! mocha), test scripts (`package.json` `scripts`, Makefile targets), the
//! build (`build.rs`, `.cargo/config.toml`, `Cargo.toml` profiles and
//! features) and stepwise's own `[test_commands]`. The receipt names such
//! changes on their own line, so a reviewer knows the green is the project's.
//!
//! What must stay true: it reads only the two texts it is given; a file is
//! named when the part that steers the tests differs, not when anything else
//! in it does (a version bump in `Cargo.toml` is not a test change).

use serde::Serialize;

/// One changed file that changes how tests run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InfraChange {
    pub path: String,
    /// What it is, e.g. `test setup`, `pytest configuration`.
    pub what: &'static str,
}

/// What changing `path` from `before` to `after` (`None`: absent) does to
/// the tests, if anything.
pub fn infra_change(path: &str, before: Option<&str>, after: Option<&str>) -> Option<InfraChange> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (old, new) = (before.unwrap_or(""), after.unwrap_or(""));
    let differs = |section: &dyn Fn(&str) -> String| section(old) != section(new);
    let what = match name {
        "conftest.py" => Some("test setup"),
        "pytest.ini" | "tox.ini" | "noxfile.py" => Some("test configuration"),
        "setup.cfg" => {
            differs(&|t| sections(t, &["[tool:pytest"])).then_some("pytest configuration")
        }
        "pyproject.toml" => {
            differs(&|t| sections(t, &["[tool.pytest"])).then_some("pytest configuration")
        }
        "Makefile" | "makefile" | "GNUmakefile" => Some("make targets"),
        "package.json" => differs(&|t| scripts(t)).then_some("test scripts"),
        "build.rs" => Some("build script"),
        "Cargo.toml" => differs(&|t| sections(t, &["[profile", "[features]"]))
            .then_some("cargo profiles or features"),
        "stepwise.toml" => {
            differs(&|t| sections(t, &["[test_commands]"])).then_some("test commands")
        }
        _ if path.starts_with(".cargo/config") || path.contains("/.cargo/config") => {
            Some("cargo configuration")
        }
        _ if runner_config(name) => Some("test runner configuration"),
        _ => None,
    }?;
    Some(InfraChange {
        path: path.to_string(),
        what,
    })
}

/// jest, vitest, mocha, karma and playwright configuration files.
fn runner_config(name: &str) -> bool {
    [
        "jest.config.",
        "vitest.config.",
        "vitest.workspace.",
        "karma.conf.",
        "playwright.config.",
    ]
    .iter()
    .any(|prefix| name.starts_with(prefix))
        || name.starts_with(".mocharc")
}

/// The text of the TOML/INI sections whose header starts with one of
/// `headers`, each from its header to the next header.
fn sections(text: &str, headers: &[&str]) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            inside = headers.iter().any(|h| trimmed.starts_with(h));
        }
        if inside {
            out.push_str(trimmed);
            out.push('\n');
        }
    }
    out
}

/// `package.json`'s `scripts`, normalised (a file that does not parse is
/// compared as text).
fn scripts(text: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) => value
            .get("scripts")
            .map(|s| s.to_string())
            .unwrap_or_default(),
        Err(_) => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn what(path: &str, before: Option<&str>, after: Option<&str>) -> Option<&'static str> {
        infra_change(path, before, after).map(|c| c.what)
    }

    #[test]
    fn files_that_steer_the_tests_are_named() {
        assert_eq!(what("conftest.py", None, Some("x")), Some("test setup"));
        assert_eq!(
            what("tests/conftest.py", Some("a"), Some("b")),
            Some("test setup")
        );
        assert_eq!(what("Makefile", Some("a"), Some("b")), Some("make targets"));
        assert_eq!(
            what("build.rs", None, Some("fn main(){}")),
            Some("build script")
        );
        assert_eq!(
            what(".cargo/config.toml", None, Some("")),
            Some("cargo configuration")
        );
        assert_eq!(
            what("web/jest.config.js", Some("a"), Some("b")),
            Some("test runner configuration")
        );
        assert_eq!(
            what(".mocharc.yml", Some("a"), Some("b")),
            Some("test runner configuration")
        );
        assert_eq!(what("calculator.py", Some("a"), Some("b")), None);
    }

    #[test]
    fn in_shared_files_only_the_part_that_steers_tests_counts() {
        let cargo =
            "[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n[profile.test]\nopt-level = 0\n";
        let bumped = cargo.replace("0.1.0", "0.2.0");
        assert_eq!(what("Cargo.toml", Some(cargo), Some(&bumped)), None);
        let profiled = cargo.replace("opt-level = 0", "opt-level = 3");
        assert_eq!(
            what("Cargo.toml", Some(cargo), Some(&profiled)),
            Some("cargo profiles or features")
        );
        let py = "[project]\nname = \"x\"\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
        let other = py.replace("name = \"x\"", "name = \"y\"");
        assert_eq!(what("pyproject.toml", Some(py), Some(&other)), None);
        let opts = py.replace("-q", "-q -p no:cacheprovider --deselect t.py");
        assert_eq!(
            what("pyproject.toml", Some(py), Some(&opts)),
            Some("pytest configuration")
        );
        let pkg = r#"{"name": "a", "version": "1.0.0", "scripts": {"test": "node --test"}}"#;
        let version = pkg.replace("1.0.0", "1.0.1");
        assert_eq!(what("package.json", Some(pkg), Some(&version)), None);
        let script = pkg.replace("node --test", "exit 0");
        assert_eq!(
            what("package.json", Some(pkg), Some(&script)),
            Some("test scripts")
        );
        let toml = "model = \"m\"\n[test_commands]\nunit = [\"true\"]\n";
        assert_eq!(
            what("stepwise.toml", None, Some(toml)),
            Some("test commands")
        );
    }
}
