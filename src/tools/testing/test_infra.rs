//! Whether a change to a file changes how the tests run: the project's test
//! setup (`conftest.py`), a module that shadows the runner (`pytest.py`, a
//! `pytest/` package: `python -m pytest` imports it from the working folder
//! first, and it can print any result), runner configuration (pytest in
//! each file it reads, tox, jest, vitest, mocha), test scripts (`package.json` `scripts`, Makefile targets), the
//! build (`build.rs`, `.cargo/config.toml`, `Cargo.toml` profiles and
//! features) and stepwise's own `[test_commands]`. The receipt names such
//! changes on their own line, so a reviewer knows the green is the project's.
//!
//! What must stay true: it reads only the two texts it is given; a file is
//! named when the part that steers the tests differs, not when anything else
//! in it does (a version bump in `Cargo.toml` is not a test change). TOML
//! files are compared as parsed tables, so no spelling of a table
//! (`[ tool.pytest.ini_options ]`, a dotted key at the top level, quoted
//! keys) hides a change; one that does not parse is compared as text.

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
        _ if shadows_runner(path) => Some("a module in place of the test runner"),
        "pytest.ini" | ".pytest.ini" | "pytest.toml" | ".pytest.toml" | "tox.ini"
        | "noxfile.py" => Some("test configuration"),
        "setup.cfg" => {
            differs(&|t| sections(t, &["[tool:pytest"])).then_some("pytest configuration")
        }
        "pyproject.toml" => {
            differs(&|t| toml_parts(t, &[&["tool", "pytest"]])).then_some("pytest configuration")
        }
        "Makefile" | "makefile" | "GNUmakefile" => Some("make targets"),
        "package.json" => differs(&|t| scripts(t)).then_some("test scripts"),
        "build.rs" => Some("build script"),
        "Cargo.toml" => {
            differs(&|t| toml_parts(t, &[&["profile"], &["features"], &["package", "build"]]))
                .then_some("cargo profiles or features")
        }
        "stepwise.toml" => {
            differs(&|t| toml_parts(t, &[&["test_commands"]])).then_some("test commands")
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

/// The modules `python -m pytest` and `python -m unittest` import by name
/// (the runners and what pytest itself imports): the working folder comes
/// first on `sys.path`, so a file or package of that name there runs in
/// their place.
const RUNNER_MODULES: [&str; 7] = [
    "pytest",
    "_pytest",
    "py",
    "pluggy",
    "iniconfig",
    "unittest",
    "xdist",
];

/// Whether `path` is a module or package named like a runner module (at any
/// depth: a test command may start in any folder).
fn shadows_runner(path: &str) -> bool {
    let mut parts = path.split('/').peekable();
    while let Some(part) = parts.next() {
        let module = if parts.peek().is_some() {
            part // a folder: a package of that name
        } else if let Some(stem) = part.strip_suffix(".py") {
            stem
        } else {
            continue;
        };
        if RUNNER_MODULES.contains(&module) {
            return true;
        }
    }
    false
}

/// The values at each of `keys` (a path of table keys) in the TOML `text`,
/// normalised; the whole text when it does not parse.
fn toml_parts(text: &str, keys: &[&[&str]]) -> String {
    let Ok(table) = text.parse::<toml::Table>() else {
        return text.to_string();
    };
    let mut out = String::new();
    for path in keys {
        let mut value: Option<&toml::Value> = None;
        let mut at = Some(&table);
        for key in *path {
            value = at.and_then(|t| t.get(*key));
            at = value.and_then(toml::Value::as_table);
        }
        out.push_str(&format!("{path:?}={value:?}\n"));
    }
    out
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

    #[test]
    fn a_module_in_place_of_the_runner_is_named() {
        for path in [
            "pytest.py",
            "pytest/__init__.py",
            "_pytest/main.py",
            "sub/pluggy.py",
            "unittest/__main__.py",
            "py.py",
        ] {
            assert_eq!(
                what(path, None, Some("x")),
                Some("a module in place of the test runner"),
                "{path}"
            );
        }
        for path in [
            "pytest_helpers.py",
            "tests/test_pytest.py",
            "my_py.py",
            "pytest.txt",
        ] {
            assert_eq!(what(path, None, Some("x")), None, "{path}");
        }
    }

    #[test]
    fn every_spelling_of_the_pytest_table_counts() {
        let plain = "[project]\nname = \"x\"\n";
        for changed in [
            "[ tool.pytest.ini_options ]\naddopts = \"-p no:x\"\n",
            "[tool . pytest . ini_options]\naddopts = \"-p no:x\"\n",
            "tool.pytest.ini_options.addopts = \"-p no:x\"\n[project]\nname = \"x\"\n",
            "[\"tool\".'pytest']\nini_options = { addopts = \"-p no:x\" }\n",
            "[tool]\npytest.ini_options.addopts = \"-p no:x\"\n",
        ] {
            let after = if changed.contains("[project]") {
                changed.to_string()
            } else {
                format!("{plain}{changed}")
            };
            assert_eq!(
                what("pyproject.toml", Some(plain), Some(&after)),
                Some("pytest configuration"),
                "{changed}"
            );
        }
        // Reordering or respelling what does not steer the tests says nothing.
        let spaced = "[ project ]\nname = 'x'\n";
        assert_eq!(what("pyproject.toml", Some(plain), Some(spaced)), None);
        // A file that does not parse is compared whole.
        assert_eq!(
            what("pyproject.toml", Some(plain), Some("[tool.pytest\n")),
            Some("pytest configuration")
        );
        for name in [
            ".pytest.ini",
            "pytest.toml",
            ".pytest.toml",
            "sub/.pytest.ini",
        ] {
            assert_eq!(
                what(name, None, Some("[pytest]\n")),
                Some("test configuration"),
                "{name}"
            );
        }
        let cargo = "[package]\nname = \"x\"\n";
        for changed in [
            "profile.test.opt-level = 3\n",
            "[ profile.test ]\nopt-level = 3\n",
            "features.default = [\"x\"]\n",
        ] {
            let after = format!("{changed}{cargo}");
            let after = if changed.starts_with('[') {
                format!("{cargo}{changed}")
            } else {
                after
            };
            assert_eq!(
                what("Cargo.toml", Some(cargo), Some(&after)),
                Some("cargo profiles or features"),
                "{changed}"
            );
        }
        let build = "[package]\nname = \"x\"\nbuild = \"gen.rs\"\n";
        assert_eq!(
            what("Cargo.toml", Some(cargo), Some(build)),
            Some("cargo profiles or features")
        );
        assert_eq!(
            what(
                "stepwise.toml",
                Some(""),
                Some("test_commands.unit = [\"true\"]\n")
            ),
            Some("test commands")
        );
    }
}
