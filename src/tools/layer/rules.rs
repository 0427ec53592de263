//! The rules that decide what of a run's layer may reach the workspace,
//! one entry at a time, each with the reason that is shown:
//! - **thrown away unsaid**: the runners' own caches (`.pytest_cache`,
//!   `.hypothesis`, coverage data, …), writes inside folders of installed
//!   packages the workspace already has, build outputs (which live in the
//!   persistent build layer), empty folders;
//! - **thrown away and named**: git metadata (any `.git`, and any folder
//!   that holds `HEAD`, `objects/` and `refs/`: git takes it for a
//!   repository), stepwise's own folder, compiled Python (`__pycache__`,
//!   `.pyc`), a new folder of installed packages, a file on the deny list,
//!   links, devices, binary files, files too large to show, names that are
//!   not UTF-8;
//! - **offered**: every other file, with its diff; [`is_code`] marks the
//!   ones that change what runs (source, build and test configuration,
//!   importable files, anything executable), which no automatic approval
//!   keeps.
//!
//! What must stay true: a rule looks at a path's every component, never
//! only at its first; anything not known to be harmless data is code.

use super::{Entry, Written};
use crate::tools::workspace::deny::DenyList;
// The runners' data folders and the package folders: the sandbox's own lists.
use crate::tools::sandbox::plants::{PACKAGES, TOOL_DATA as RUN_CACHES};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

/// What becomes of one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Shown to the user, kept if accepted; `code`: only an explicit choice keeps it.
    Offer { code: bool },
    /// Thrown away, and the result names it with this reason.
    Discard(Why),
    /// Thrown away without a word (caches, build outputs, package writes).
    Drop,
}

/// Why an entry was thrown away and named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    NotUtf8,
    OwnFolder,
    GitMetadata,
    GitFolder,
    NewPackages,
    CompiledPython,
    Importable,
    Link,
    Special,
    DenyList,
    TooLarge,
    Binary,
    OutsideWorkspace,
    WorkspaceNotText,
    WorkspaceUnreadable,
    Flood,
}

impl Why {
    /// The reason as the result and the receipt say it.
    pub fn text(self) -> &'static str {
        match self {
            Why::NotUtf8 => "a name that is not UTF-8",
            Why::OwnFolder => "stepwise's own folder",
            Why::GitMetadata => "git metadata",
            Why::GitFolder => "git metadata (a folder git takes for a repository)",
            Why::NewPackages => "a new folder of installed packages",
            Why::CompiledPython => "compiled Python",
            Why::Importable => "a compiled or importable module",
            Why::Link => "a symbolic link",
            Why::Special => "not a regular file",
            Why::DenyList => "on the deny list",
            Why::TooLarge => "too large to show",
            Why::Binary => "a binary file",
            Why::OutsideWorkspace => "a path outside the workspace",
            Why::WorkspaceNotText => "the workspace's file is not text",
            Why::WorkspaceUnreadable => "the workspace's file cannot be read",
            Why::Flood => "written with more files than can be reviewed at once",
        }
    }

    /// Whether the entry is what a later command would run (git's config,
    /// bytecode, a module, a link, a name no walk sees): the run that
    /// wrote it does not count as clean.
    pub fn runs_later(self) -> bool {
        matches!(
            self,
            Why::NotUtf8
                | Why::OwnFolder
                | Why::GitMetadata
                | Why::GitFolder
                | Why::NewPackages
                | Why::CompiledPython
                | Why::Importable
                | Why::Link
                | Why::Special
        )
    }
}

/// Extensions of files that an interpreter or a loader runs or imports
/// (or that steer one), beyond source code.
const IMPORTABLE: [&str; 16] = [
    "so", "pyd", "dylib", "dll", "pth", "pyc", "pyo", "node", "a", "o", "exe", "jar", "class",
    "wasm", "egg", "whl",
];

/// Extensions of source code and build or test configuration.
const SOURCE: [&str; 36] = [
    "py", "pyi", "pyx", "rs", "js", "mjs", "cjs", "ts", "mts", "cts", "tsx", "jsx", "go", "java",
    "kt", "c", "h", "cc", "cpp", "hpp", "rb", "php", "sh", "bash", "swift", "cs", "scala", "lua",
    "pl", "toml", "cfg", "ini", "mk", "cmake", "gradle", "bat",
];

/// Names that steer a build, a test run, git or an interpreter.
const STEERING: [&str; 12] = [
    "Makefile",
    "makefile",
    "GNUmakefile",
    "Dockerfile",
    ".gitattributes",
    ".gitmodules",
    ".gitignore",
    "package.json",
    "tox.ini",
    "noxfile.py",
    ".envrc",
    "Justfile",
];

/// Whether `path` (relative) is code: a file whose change changes what
/// runs (source, build and test configuration, importable files).
pub fn is_code(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    ext.as_deref()
        .is_some_and(|e| SOURCE.contains(&e) || IMPORTABLE.contains(&e))
        // `calculator.cpython-311-x86_64-linux-gnu.so.1`, `lib.so.2`
        || name.contains(".so.")
        || STEERING.contains(&name)
        || crate::tools::testing::test_infra::infra_change(path, Some("a"), Some("b")).is_some()
}

/// Whether a path's file is one a loader imports or runs as it is.
fn importable(name: &str) -> bool {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    ext.as_deref().is_some_and(|e| IMPORTABLE.contains(&e)) || name.contains(".so.")
}

/// The rules' view of the workspace and its configuration.
pub struct Context<'a> {
    /// The workspace (the lower layer), for what the run did not write.
    root: &'a Path,
    deny: &'a DenyList,
    /// Build output folders, relative (kept in the build layer instead).
    build_outputs: &'a [PathBuf],
    /// Every entry of the layer by path, to see folders as the run left them.
    written: BTreeMap<&'a Path, &'a Written>,
    /// Folders already asked whether git takes them for a repository.
    git_folders: RefCell<HashMap<PathBuf, bool>>,
}

impl<'a> Context<'a> {
    pub fn new(
        root: &'a Path,
        deny: &'a DenyList,
        build_outputs: &'a [PathBuf],
        entries: &'a [Entry],
    ) -> Self {
        Context {
            root,
            deny,
            build_outputs,
            written: entries
                .iter()
                .map(|e| (e.path.as_path(), &e.written))
                .collect(),
            git_folders: RefCell::default(),
        }
    }

    /// Whether the folder `dir` (relative), as the run left it, holds
    /// `name`: written by the run, or in the workspace and not deleted.
    fn holds(&self, dir: &Path, name: &str) -> bool {
        let path = dir.join(name);
        // The entry itself, or the first one below it (paths sort by
        // component, so those come right after it).
        match self.written.range(path.as_path()..).next() {
            Some((p, w)) if *p == path => !matches!(w, Written::Deleted),
            Some((p, _)) if p.starts_with(&path) => true,
            _ => std::fs::symlink_metadata(self.root.join(&path)).is_ok(),
        }
    }

    /// Whether git would take the folder `dir` for a repository.
    fn git_folder(&self, dir: &Path) -> bool {
        if let Some(known) = self.git_folders.borrow().get(dir) {
            return *known;
        }
        let is = self.holds(dir, "HEAD") && self.holds(dir, "objects") && self.holds(dir, "refs");
        self.git_folders.borrow_mut().insert(dir.to_path_buf(), is);
        is
    }

    /// Whether the folder `dir` (relative) exists in the workspace.
    fn in_workspace(&self, dir: &Path) -> bool {
        std::fs::symlink_metadata(self.root.join(dir)).is_ok_and(|m| m.is_dir())
    }

    /// The verdict on one entry.
    pub fn verdict(&self, entry: &Entry) -> Verdict {
        let path = entry.path.as_path();
        if self
            .build_outputs
            .iter()
            .any(|b| !b.as_os_str().is_empty() && path.starts_with(b))
        {
            return Verdict::Drop;
        }
        let Some(text) = entry.utf8() else {
            return Verdict::Discard(Why::NotUtf8);
        };
        let names: Vec<&str> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => n.to_str(),
                _ => None,
            })
            .collect();
        let Some((&name, folders)) = names.split_last() else {
            return Verdict::Drop;
        };
        if names.first() == Some(&crate::tools::workspace::PRIVATE_DIR) {
            return Verdict::Discard(Why::OwnFolder);
        }
        if names.contains(&".git") {
            return Verdict::Discard(Why::GitMetadata);
        }
        // Any folder on the way (or the entry itself, if a folder) that
        // git would take for a repository: `git status` there would read
        // its config and run what it names.
        let mut dir = PathBuf::new();
        let mut ancestors = vec![dir.clone()];
        for folder in folders {
            dir.push(folder);
            ancestors.push(dir.clone());
        }
        if matches!(entry.written, Written::Folder) {
            ancestors.push(path.to_path_buf());
        }
        if ancestors.iter().any(|d| self.git_folder(d)) {
            return Verdict::Discard(Why::GitFolder);
        }
        if names.iter().any(|n| RUN_CACHES.contains(n)) || name.starts_with(".coverage") {
            return Verdict::Drop;
        }
        let mut dir = PathBuf::new();
        for folder in folders {
            dir.push(folder);
            let package = PACKAGES.contains(folder)
                || (folder.contains("venv") && self.holds(&dir, "pyvenv.cfg"));
            if package {
                return match self.in_workspace(&dir) {
                    true => Verdict::Drop,
                    false => Verdict::Discard(Why::NewPackages),
                };
            }
        }
        if names.contains(&"__pycache__") || name.ends_with(".pyc") || name.ends_with(".pyo") {
            return Verdict::Discard(Why::CompiledPython);
        }
        if self.deny.denies(path) {
            return Verdict::Discard(Why::DenyList);
        }
        match &entry.written {
            Written::Folder => Verdict::Drop,
            Written::Link { .. } => Verdict::Discard(Why::Link),
            Written::Special => Verdict::Discard(Why::Special),
            Written::File { bytes: None, .. } => Verdict::Discard(Why::TooLarge),
            Written::File {
                bytes: Some(bytes),
                executable,
                ..
            } => {
                if importable(name) {
                    return Verdict::Discard(Why::Importable);
                }
                if bytes.contains(&0) || std::str::from_utf8(bytes).is_err() {
                    return Verdict::Discard(Why::Binary);
                }
                Verdict::Offer {
                    code: *executable || is_code(text),
                }
            }
            Written::Deleted => Verdict::Offer {
                code: is_code(text),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> Entry {
        Entry {
            path: PathBuf::from(path),
            written: Written::File {
                bytes: Some(text.as_bytes().to_vec()),
                size: text.len() as u64,
                executable: false,
                existed: false,
            },
        }
    }

    #[test]
    fn each_entry_gets_the_verdict_its_every_component_calls_for() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("web/node_modules/left-pad")).unwrap();
        std::fs::create_dir_all(root.join("vendor/objects")).unwrap();
        std::fs::create_dir_all(root.join("vendor/refs")).unwrap();
        let entries = vec![
            file("report.txt", "ok\n"),
            file("gen/api.py", "x = 1\n"),
            file("sub/.git/config", "[core]\n"),
            // With `objects/` and `refs/` already there, `HEAD` makes a repository.
            file("vendor/HEAD", "ref: refs/heads/main\n"),
            file("vendor/config", "[core]\n"),
            file(".pytest_cache/v/lastfailed", "{}"),
            file(".coverage", "data"),
            file("web/node_modules/left-pad/index.js", "cache"),
            file("lib/node_modules/evil/index.js", "planted"),
            file("pkg/__pycache__/m.cpython-311.pyc", "planted"),
            file("target/debug/out", "built"),
            file(".env", "KEY=1"),
            file(".stepwise/stepwise.toml", "[sandbox]"),
            file("image.png", "\u{0}PNG"),
            Entry {
                path: PathBuf::from("run.sh"),
                written: Written::File {
                    bytes: Some(b"echo\n".to_vec()),
                    size: 5,
                    executable: true,
                    existed: false,
                },
            },
        ];
        let deny = DenyList::new(&[]).unwrap();
        let outputs = [PathBuf::from("target")];
        let ctx = Context::new(root, &deny, &outputs, &entries);
        let verdicts: Vec<(String, Verdict)> = entries
            .iter()
            .map(|e| (e.shown(), ctx.verdict(e)))
            .collect();
        let git = Why::GitFolder;
        assert_eq!(
            verdicts,
            [
                ("report.txt".into(), Verdict::Offer { code: false }),
                ("gen/api.py".into(), Verdict::Offer { code: true }),
                ("sub/.git/config".into(), Verdict::Discard(Why::GitMetadata)),
                ("vendor/HEAD".into(), Verdict::Discard(git)),
                ("vendor/config".into(), Verdict::Discard(git)),
                (".pytest_cache/v/lastfailed".into(), Verdict::Drop),
                (".coverage".into(), Verdict::Drop),
                ("web/node_modules/left-pad/index.js".into(), Verdict::Drop),
                (
                    "lib/node_modules/evil/index.js".into(),
                    Verdict::Discard(Why::NewPackages)
                ),
                (
                    "pkg/__pycache__/m.cpython-311.pyc".into(),
                    Verdict::Discard(Why::CompiledPython)
                ),
                ("target/debug/out".into(), Verdict::Drop),
                (".env".into(), Verdict::Discard(Why::DenyList)),
                (
                    ".stepwise/stepwise.toml".into(),
                    Verdict::Discard(Why::OwnFolder)
                ),
                ("image.png".into(), Verdict::Discard(Why::Binary)),
                ("run.sh".into(), Verdict::Offer { code: true }),
            ]
        );
    }

    #[test]
    fn code_is_source_configuration_and_whatever_a_loader_imports() {
        for code in [
            "calculator.py",
            "src/lib.rs",
            "calculator.cpython-311-x86_64-linux-gnu.so",
            "native.pyd",
            "site.pth",
            "conftest.py",
            "pytest.ini",
            "Makefile",
            "sub/.gitattributes",
            "package.json",
        ] {
            assert!(is_code(code), "{code}");
        }
        for data in [
            "report.txt",
            "Cargo.lock",
            "snapshots/x.snap",
            "out.json",
            "README.md",
        ] {
            assert!(!is_code(data), "{data}");
        }
    }
}
