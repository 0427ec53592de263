//! The test commands of a workspace: found from the project's files
//! (`pytest`/`unittest` for Python, `cargo`, `npm`, `go`, `make`) plus the
//! `[test_commands]` of the configuration, which add or replace names.
//! `npm test` is read in the summary format of the runner its script names
//! (mocha, jest, vitest, ava, `node --test`), else of the one runner the
//! package depends on, else by its exit code alone.
//!
//! What must stay true: every command is an argument array run without a
//! shell; the model can only name one of these (the `run_tests` schema lists
//! exactly them); project files are read through the workspace capability.

use crate::tools::testing::test_summary::SummaryKind;
use crate::tools::workspace::Workspace;
use serde_json::{Value, json};
use std::path::PathBuf;

/// One named command `run_tests` may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCommand {
    /// What the model calls it (`cargo`, `unit`).
    pub name: String,
    /// The argument array, program first.
    pub argv: Vec<String>,
    /// Whose summary its output is read in.
    pub kind: SummaryKind,
}

/// The test commands of one workspace, the default first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestCommands {
    list: Vec<TestCommand>,
}

/// Bytes of a project file read to detect commands.
const PROJECT_FILE_LIMIT: u64 = 256 * 1024;
/// Entries looked at when searching for Python test files.
const PY_SEARCH_LIMIT: usize = 5_000;

impl TestCommands {
    /// Detect the commands from the project's files, then apply the
    /// configured ones (same name: replaced; new name: added).
    pub fn detect(ws: &Workspace, configured: &[(String, Vec<String>)]) -> Self {
        let mut list = Vec::new();
        let python = resolve_python();
        if is_python_project(ws) {
            let py = |args: &[&str]| {
                std::iter::once(python.as_str())
                    .chain(args.iter().copied())
                    .map(String::from)
                    .collect()
            };
            list.push(command(
                "pytest",
                py(&["-m", "pytest", "-q"]),
                SummaryKind::Pytest,
            ));
            list.push(command(
                "unittest",
                py(&["-m", "unittest", "discover", "-v"]),
                SummaryKind::Unittest,
            ));
        }
        if read(ws, "Cargo.toml").is_some() {
            list.push(command(
                "cargo",
                argv(&["cargo", "test"]),
                SummaryKind::Cargo,
            ));
        }
        if let Some(kind) = npm_test(ws) {
            list.push(command("npm", argv(&["npm", "test"]), kind));
        }
        if read(ws, "go.mod").is_some() {
            list.push(command(
                "go",
                argv(&["go", "test", "./..."]),
                SummaryKind::Go,
            ));
        }
        if has_make_test(ws) {
            list.push(command(
                "make",
                argv(&["make", "test"]),
                SummaryKind::Unknown,
            ));
        }
        for (name, args) in configured {
            let entry = command(name, args.clone(), kind_of(ws, args));
            match list.iter_mut().find(|c| c.name == *name) {
                Some(slot) => *slot = entry,
                None => list.push(entry),
            }
        }
        TestCommands { list }
    }

    pub fn get(&self, name: &str) -> Option<&TestCommand> {
        self.list.iter().find(|c| c.name == name.trim())
    }

    /// The command run when the model names none.
    pub fn default_command(&self) -> Option<&TestCommand> {
        self.list.first()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn names(&self) -> Vec<&str> {
        self.list.iter().map(|c| c.name.as_str()).collect()
    }

    /// `name` (`argv…`) for each command, for the schema and the prompt.
    pub fn listing(&self) -> String {
        let each: Vec<String> = self
            .list
            .iter()
            .map(|c| format!("`{}` (runs `{}`)", c.name, c.argv.join(" ")))
            .collect();
        each.join(", ")
    }

    /// The `run_tests` description.
    pub fn description(&self) -> String {
        if self.is_empty() {
            return "This workspace has no test command (no project file names one and stepwise.toml sets no [test_commands]); calling this fails.".into();
        }
        format!(
            "Run the project's tests in the workspace root with one of these commands: {}. Needs the user's approval.",
            self.listing()
        )
    }

    /// The `run_tests` parameters: `command`, an `enum` of exactly these names.
    pub fn parameters(&self) -> Value {
        let mut command = json!({"type": "string"});
        if let Some(first) = self.default_command() {
            command["enum"] = json!(self.names());
            command["description"] = json!(format!(
                "Which test command to run; default \"{}\"",
                first.name
            ));
        }
        json!({"type": "object", "properties": {"command": command}, "required": [], "additionalProperties": false})
    }

    /// Why a name is not one of these, for the model.
    pub fn unknown(&self, name: &str) -> String {
        if self.is_empty() {
            return "this workspace has no test command, so run_tests cannot run anything; finish with a final answer that says how the change can be checked".into();
        }
        let names: Vec<String> = self.names().iter().map(|n| format!("{n:?}")).collect();
        format!(
            "run_tests command {name:?} is not allowed here; use one of {}",
            names.join(", ")
        )
    }
}

/// `STEPWISE_PYTHON`, else `python3` on PATH, else `python`.
pub fn resolve_python() -> String {
    if let Some(p) = std::env::var("STEPWISE_PYTHON")
        .ok()
        .filter(|p| !p.trim().is_empty())
    {
        return p;
    }
    if find_on_path("python3").is_some() {
        "python3".into()
    } else {
        "python".into()
    }
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

fn command(name: &str, argv: Vec<String>, kind: SummaryKind) -> TestCommand {
    TestCommand {
        name: name.to_string(),
        argv,
        kind,
    }
}

fn argv(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// A project file's text at the root, read through the capability.
fn read(ws: &Workspace, name: &str) -> Option<String> {
    let rel = Workspace::check(name).ok()?;
    let bytes = ws.read_bytes(&rel, PROJECT_FILE_LIMIT).ok()??;
    String::from_utf8(bytes).ok()
}

fn is_python_project(ws: &Workspace) -> bool {
    let markers = [
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "pytest.ini",
        "tox.ini",
    ];
    if markers.iter().any(|m| read(ws, m).is_some()) {
        return true;
    }
    // Test files anywhere the file tools would look (no symlinks followed).
    let walker = crate::tools::reading::walk::walker(ws.root(), ws.root())
        .max_depth(Some(6))
        .build();
    walker.flatten().take(PY_SEARCH_LIMIT).any(|e| {
        let name = e.file_name().to_string_lossy();
        e.file_type().is_some_and(|t| t.is_file())
            && name.ends_with(".py")
            && (name.starts_with("test_") || name.ends_with("_test.py"))
    })
}

/// `package.json` with a real `scripts.test`: whose output it prints.
fn npm_test(ws: &Workspace) -> Option<SummaryKind> {
    let package: Value = serde_json::from_str(&read(ws, "package.json")?).ok()?;
    let script = package["scripts"]["test"].as_str()?;
    if script.trim().is_empty() || script.contains("no test specified") {
        return None;
    }
    Some(script_kind(&package, script))
}

/// JavaScript test runners by the program's name, and whose summary each prints.
const JS_RUNNERS: [(&str, SummaryKind); 5] = [
    ("mocha", SummaryKind::Mocha),
    ("_mocha", SummaryKind::Mocha),
    ("jest", SummaryKind::Jest),
    ("vitest", SummaryKind::Vitest),
    ("ava", SummaryKind::Ava),
];

/// Whose summary `npm test` prints: the one runner its script names (through
/// `npm run other` too), else the one runner among the package's
/// dependencies; none, or more than one, is judged by the exit code.
fn script_kind(package: &Value, script: &str) -> SummaryKind {
    let mut named = Vec::new();
    runners_in_script(package, script, 0, &mut named);
    match distinct(named).as_slice() {
        [one] => *one,
        [] => dependency_runner(package).unwrap_or(SummaryKind::Unknown),
        _ => SummaryKind::Unknown,
    }
}

/// The runners a script names, following `npm run X` (and yarn's and pnpm's
/// `run X`) into the other scripts, a few levels deep.
fn runners_in_script(package: &Value, script: &str, depth: usize, out: &mut Vec<SummaryKind>) {
    let words: Vec<&str> = script
        .split(|c: char| c.is_whitespace() || matches!(c, '&' | '|' | ';' | '(' | ')'))
        .filter(|w| !w.is_empty())
        .collect();
    out.extend(runners_named(&words));
    for w in words.windows(3) {
        let runs = matches!(w[0], "npm" | "yarn" | "pnpm") && matches!(w[1], "run" | "run-script");
        if runs
            && depth < 3
            && let Some(other) = package["scripts"][w[2]].as_str()
        {
            runners_in_script(package, other, depth + 1, out);
        }
    }
}

/// The runners among these words, by the program's file name
/// (`./node_modules/.bin/mocha` is mocha), `node --test` included.
fn runners_named(words: &[&str]) -> Vec<SummaryKind> {
    let mut found = Vec::new();
    for (at, word) in words.iter().enumerate() {
        let program = word.rsplit('/').next().unwrap_or(word);
        if program == "node" && words.get(at + 1) == Some(&"--test") {
            found.push(SummaryKind::Node);
        }
        if let Some((_, kind)) = JS_RUNNERS.iter().find(|(name, _)| *name == program) {
            found.push(*kind);
        }
    }
    found
}

/// The one JavaScript test runner the package depends on, if exactly one.
fn dependency_runner(package: &Value) -> Option<SummaryKind> {
    let kinds: Vec<SummaryKind> = ["devDependencies", "dependencies"]
        .iter()
        .filter_map(|field| package[*field].as_object())
        .flat_map(|deps| deps.keys())
        .filter_map(|name| JS_RUNNERS.iter().find(|(n, _)| n == name))
        .map(|(_, kind)| *kind)
        .collect();
    match distinct(kinds).as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// Each kind once, in the order first met.
fn distinct(kinds: Vec<SummaryKind>) -> Vec<SummaryKind> {
    let mut seen = Vec::new();
    for kind in kinds {
        if !seen.contains(&kind) {
            seen.push(kind);
        }
    }
    seen
}

fn has_make_test(ws: &Workspace) -> bool {
    ["Makefile", "makefile", "GNUmakefile"]
        .iter()
        .filter_map(|name| read(ws, name))
        .any(|text| {
            text.lines().any(|l| {
                l.strip_prefix("test")
                    .is_some_and(|rest| rest.trim_start().starts_with(':'))
            })
        })
}

/// Whose summary a configured argument array prints.
fn kind_of(ws: &Workspace, argv: &[String]) -> SummaryKind {
    let program = argv
        .first()
        .map(|p| p.rsplit('/').next().unwrap_or(p))
        .unwrap_or("");
    let has = |word: &str| argv.iter().skip(1).any(|a| a == word);
    let module = |m: &str| argv.windows(2).any(|w| w[0] == "-m" && w[1] == m);
    match program {
        "cargo" if has("test") => SummaryKind::Cargo,
        "go" if has("test") => SummaryKind::Go,
        "node" if has("--test") => SummaryKind::Node,
        "pytest" => SummaryKind::Pytest,
        "npm" if has("test") => npm_test(ws).unwrap_or(SummaryKind::Unknown),
        _ if module("pytest") => SummaryKind::Pytest,
        _ if module("unittest") => SummaryKind::Unittest,
        // `mocha …`, `npx jest …`: the one runner named.
        _ => {
            let words: Vec<&str> = argv.iter().map(String::as_str).collect();
            match distinct(runners_named(&words)).as_slice() {
                [one] => *one,
                _ => SummaryKind::Unknown,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn commands_are_found_from_the_project_files() {
        let (_d, ws) = ws_with(&[
            ("Cargo.toml", "[package]\nname = \"x\"\n"),
            ("package.json", r#"{"scripts": {"test": "node --test"}}"#),
            ("go.mod", "module x\n"),
            ("Makefile", "build:\n\tcc x.c\ntest: build\n\t./x\n"),
            ("pkg/foo_test.py", "def test_x(): pass\n"),
        ]);
        let found = TestCommands::detect(&ws, &[]);
        assert_eq!(
            found.names(),
            ["pytest", "unittest", "cargo", "npm", "go", "make"]
        );
        assert_eq!(found.get("npm").unwrap().kind, SummaryKind::Node);
        assert_eq!(found.get("go").unwrap().argv, ["go", "test", "./..."]);
        assert_eq!(found.get("make").unwrap().kind, SummaryKind::Unknown);
    }

    /// The kind `npm test` is read as, for this `package.json`.
    fn npm_kind(package: &str) -> Option<SummaryKind> {
        let (_d, ws) = ws_with(&[("package.json", package)]);
        TestCommands::detect(&ws, &[]).get("npm").map(|c| c.kind)
    }

    #[test]
    fn the_javascript_runner_is_known_from_the_test_script_or_the_dependencies() {
        use SummaryKind::*;
        for (script, kind) in [
            ("mocha", Mocha),
            ("nyc --reporter=lcov mocha 'test/**/*.js'", Mocha),
            ("./node_modules/.bin/_mocha -R spec", Mocha),
            ("cross-env NODE_ENV=test jest --config jest.config.js", Jest),
            ("vitest run", Vitest),
            ("npm run lint && ava --verbose", Ava),
            ("c8 node --test test/", Node),
            ("tsc -p . && node dist/test.js", Unknown),
            ("mocha && jest", Unknown),
        ] {
            let package = json!({"scripts": {"test": script}}).to_string();
            assert_eq!(npm_kind(&package), Some(kind), "{script}");
        }
        // Through another script, as `npm test` runs it.
        let indirect = r#"{"scripts": {"test": "npm run lint && npm run unit", "lint": "eslint .", "unit": "vitest run"}}"#;
        assert_eq!(npm_kind(indirect), Some(Vitest));
        // A script naming no runner: the one the package depends on.
        let by_dependency = r#"{"scripts": {"test": "gulp test"}, "devDependencies": {"gulp": "^4", "mocha": "^10"}}"#;
        assert_eq!(npm_kind(by_dependency), Some(Mocha));
        let two = r#"{"scripts": {"test": "gulp test"}, "devDependencies": {"jest": "^29", "mocha": "^10"}}"#;
        assert_eq!(npm_kind(two), Some(Unknown));
        // The script's own word wins over a dependency.
        let named = r#"{"scripts": {"test": "jest"}, "devDependencies": {"mocha": "^10"}}"#;
        assert_eq!(npm_kind(named), Some(Jest));
        // A configured command names its runner too.
        let (_d, ws) = ws_with(&[]);
        let configured = [("js".to_string(), argv(&["npx", "mocha", "--exit"]))];
        let found = TestCommands::detect(&ws, &configured);
        assert_eq!(found.get("js").map(|c| c.kind), Some(Mocha));
    }

    #[test]
    fn nothing_is_found_where_nothing_names_a_test_command() {
        let (_d, ws) = ws_with(&[
            (
                "package.json",
                r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
            ),
            ("Makefile", "build:\n\tcc x.c\n"),
            ("notes.md", "hello\n"),
            ("node_modules/x/test_y.py", ""),
        ]);
        let found = TestCommands::detect(&ws, &[]);
        assert!(found.is_empty(), "{:?}", found.names());
        assert!(found.unknown("pytest").contains("no test command"));
        assert!(
            found.parameters()["properties"]["command"]
                .get("enum")
                .is_none()
        );
    }

    #[test]
    fn configured_commands_add_and_replace_names() {
        let (_d, ws) = ws_with(&[("Cargo.toml", "")]);
        let configured = [
            ("cargo".to_string(), argv(&["cargo", "test", "--lib"])),
            ("smoke".to_string(), argv(&["./smoke.sh"])),
        ];
        let found = TestCommands::detect(&ws, &configured);
        assert_eq!(found.names(), ["cargo", "smoke"]);
        assert_eq!(found.get("cargo").unwrap().argv, ["cargo", "test", "--lib"]);
        assert_eq!(found.get("cargo").unwrap().kind, SummaryKind::Cargo);
        assert_eq!(found.get("smoke").unwrap().kind, SummaryKind::Unknown);
        let params = found.parameters();
        assert_eq!(
            params["properties"]["command"]["enum"],
            json!(["cargo", "smoke"])
        );
        assert!(found.description().contains("`smoke` (runs `./smoke.sh`)"));
        assert!(found.unknown("rm").contains("\"cargo\", \"smoke\""));
    }
}
