//! The paths of a policy: the build output folders a test run may write,
//! the code caches it may only read, and the secrets it may not read at
//! all, `~/` expanded against `HOME`.
//!
//! The hidden list covers the user's credentials where the environment
//! moves them (`$DOCKER_CONFIG`, `$KUBECONFIG`, `$CARGO_HOME`, the XDG
//! folders, …), and, when stepwise runs as root, the same files in the other
//! home folders of the machine (`/home/*`, `/root`): root's test run reads
//! them all otherwise.
//!
//! `HOME` itself is an allow-list ([`home_hidden`]): a run sees in it only
//! what toolchains need ([`HOME_ALLOWED`], the `PATH` entries and the
//! toolchain folders the environment names inside it) and the folders the
//! run is given (the workspace, its temporary folder, the build layer,
//! `[sandbox] writable`); every other entry of `HOME`, and of each folder
//! on the way to an allowed one, is hidden, whatever its name (a deny list
//! of credential files always misses the next tool's).
//!
//! What must stay true: the hidden list always holds stepwise's own config
//! folder, whatever the configuration says; no cache of downloaded code
//! (cargo registry and git checkouts, pip, npm/npx, go modules) is on the
//! writable list by default; nothing in `HOME` is visible to a run unless
//! the allow-list or the run's own folders name it (or lead to it); a link
//! in `HOME` is never hidden by where it leads (its target may be a
//! system file) but only granted where that target is visible anyway.

use std::path::{Path, PathBuf};

/// Build output folders the common runners write, under `HOME`: what is
/// in them is rebuilt from sources, never taken for a source itself.
const OUTPUTS: &[&str] = &["~/.cache/go-build"];

/// Build output folders named by the environment; created before the run
/// when they do not exist yet (a fresh CI container), since the run could
/// not create them itself.
const OUTPUT_VARS: &[&str] = &["CARGO_TARGET_DIR", "GOCACHE"];

/// Caches of downloaded code that later programs run outside any sandbox
/// (a planted `build.rs`, a changed wheel or npx package would run on the
/// next unsandboxed build): read-only in test runs, with what fills them.
const CODE_CACHES: &[(&str, &str)] = &[
    ("~/.cargo/registry", "cargo fetch"),
    ("~/.cargo/git", "cargo fetch"),
    ("~/.cache/pip", "pip download (or pip install)"),
    ("~/.npm", "npm ci"),
    ("~/go/pkg/mod", "go mod download"),
];

/// Code caches named by the environment.
const CODE_CACHE_VARS: &[(&str, &str)] = &[
    ("GOMODCACHE", "go mod download"),
    ("npm_config_cache", "npm ci"),
    ("PIP_CACHE_DIR", "pip download (or pip install)"),
];

/// `~/x` against `HOME`; other paths as written.
pub fn expand(path: &str) -> Option<PathBuf> {
    match path.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|home| PathBuf::from(home).join(rest)),
        None => Some(PathBuf::from(path)),
    }
}

fn from_env(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The folders a run may write besides the workspace and its temporary
/// folder: the build outputs and the configured extra ones.
pub fn writable(extra: &[String]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = OUTPUTS.iter().filter_map(|p| expand(p)).collect();
    out.extend(outputs_to_create());
    out.extend(extra.iter().filter_map(|p| expand(p)));
    out
}

/// The build output folders named by the environment (created first).
pub fn outputs_to_create() -> Vec<PathBuf> {
    OUTPUT_VARS.iter().filter_map(|v| from_env(v)).collect()
}

/// The code caches (read-only to runs) and the command that fills each.
pub fn code_caches() -> Vec<(PathBuf, &'static str)> {
    let mut out: Vec<(PathBuf, &'static str)> = CODE_CACHES
        .iter()
        .filter_map(|(p, fill)| Some((expand(p)?, *fill)))
        .collect();
    if let Some(home) = from_env("CARGO_HOME") {
        out.push((home.join("registry"), "cargo fetch"));
        out.push((home.join("git"), "cargo fetch"));
    }
    out.extend(
        CODE_CACHE_VARS
            .iter()
            .filter_map(|(v, fill)| Some((from_env(v)?, *fill))),
    );
    out
}

/// Secrets hidden by default: keys, credentials and tokens of the common
/// tools (git, package registries, clouds, containers, coding agents), and
/// shell and REPL histories (commands typed with secrets in them).
const HIDDEN: &[&str] = &[
    "~/.ssh",
    "~/.gnupg",
    "~/.netrc",
    "~/.aws",
    "~/.config/gh",
    "~/.config/hub",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.npmrc",
    "~/.yarnrc.yml",
    "~/.pypirc",
    "~/.config/pip/pip.conf",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.docker",
    "~/.kube",
    "~/.config/gcloud",
    "~/.azure",
    "~/.oci",
    "~/.terraform.d",
    "~/.vault-token",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.codex",
    "~/.claude",
    "~/.claude.json",
    "~/.gemini",
    "~/.config/github-copilot",
    "~/.aider.conf.yml",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.zhistory",
    "~/.history",
    "~/.sh_history",
    "~/.local/share/fish/fish_history",
    "~/.python_history",
    "~/.node_repl_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.sqlite_history",
    "~/.lesshst",
];

/// Credentials and histories where a variable moves them: the variable,
/// and the path below it (`""`: the variable names the path itself).
const HIDDEN_VARS: &[(&str, &str)] = &[
    ("CARGO_HOME", "credentials"),
    ("CARGO_HOME", "credentials.toml"),
    ("DOCKER_CONFIG", ""),
    ("GNUPGHOME", ""),
    ("AWS_SHARED_CREDENTIALS_FILE", ""),
    ("AWS_CONFIG_FILE", ""),
    ("CLOUDSDK_CONFIG", ""),
    ("GOOGLE_APPLICATION_CREDENTIALS", ""),
    ("AZURE_CONFIG_DIR", ""),
    ("GH_CONFIG_DIR", ""),
    ("NPM_CONFIG_USERCONFIG", ""),
    ("npm_config_userconfig", ""),
    ("PIP_CONFIG_FILE", ""),
    ("PASSWORD_STORE_DIR", ""),
    ("TF_CLI_CONFIG_FILE", ""),
    ("NETRC", ""),
    ("CODEX_HOME", ""),
    ("CLAUDE_CONFIG_DIR", ""),
    ("HISTFILE", ""),
    ("XDG_CONFIG_HOME", "gh"),
    ("XDG_CONFIG_HOME", "hub"),
    ("XDG_CONFIG_HOME", "git/credentials"),
    ("XDG_CONFIG_HOME", "gcloud"),
    ("XDG_CONFIG_HOME", "github-copilot"),
    ("XDG_CONFIG_HOME", "pip/pip.conf"),
    ("XDG_DATA_HOME", "keyrings"),
    ("XDG_DATA_HOME", "fish/fish_history"),
];

/// Most other home folders whose credentials are hidden too (a shared
/// machine with hundreds of users would make every run's rules long).
const MAX_OTHER_HOMES: usize = 32;

/// The paths the environment names for credentials (`KUBECONFIG` is a list).
fn hidden_by_env(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = HIDDEN_VARS
        .iter()
        .filter_map(|(name, below)| {
            let base = PathBuf::from(var(name).filter(|v| !v.is_empty())?);
            Some(if below.is_empty() {
                base
            } else {
                base.join(below)
            })
        })
        .collect();
    if let Some(list) = var("KUBECONFIG") {
        out.extend(std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()));
    }
    out.retain(|p| p.is_absolute());
    out
}

/// The home folders in `homes` (e.g. `/home`) and `/root` other than `home`.
fn other_homes(homes: &Path, root: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(homes)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.sort();
    out.truncate(MAX_OTHER_HOMES);
    out.push(root.to_path_buf());
    out.retain(|h| Some(h.as_path()) != home && h.is_dir());
    out
}

/// The default list: [`HIDDEN`] in this home and the other home folders,
/// and what the environment names.
fn default_hidden() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = HIDDEN.iter().filter_map(|p| expand(p)).collect();
    let home = from_env("HOME");
    // Only root reads other users' files regardless of their modes; for
    // anyone else, hiding inside a home it cannot list would hide it whole
    // (Homebrew's `/home/linuxbrew`), since the rules grant its siblings.
    #[cfg(unix)]
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    #[cfg(not(unix))]
    let root = false;
    let others = match root {
        true => other_homes(Path::new("/home"), Path::new("/root"), home.as_deref()),
        false => Vec::new(),
    };
    for other in others {
        out.extend(
            HIDDEN
                .iter()
                .filter_map(|p| p.strip_prefix("~/"))
                .map(|rel| other.join(rel)),
        );
    }
    if root {
        // Root reads the password hashes; nobody else can anyway.
        out.extend(SHADOW.iter().map(PathBuf::from).filter(|p| p.exists()));
    }
    out.extend(hidden_by_env(|name| std::env::var_os(name)));
    out
}

/// The password and group hash files, hidden from root's runs.
const SHADOW: [&str; 4] = [
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
];

/// What a run may read in a home folder (read and execute only: the
/// caches among them are read-only, see [`CODE_CACHES`]): interpreters
/// and toolchains, user-installed packages, package caches. Not their
/// configuration (`~/.npmrc`, `~/.m2/settings.xml`,
/// `~/.gradle/gradle.properties`, `~/.config/`, `~/.gitconfig`: tokens live
/// there), except cargo's build configuration.
pub const HOME_ALLOWED: &[&str] = &[
    ".rustup",
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".cargo/env",
    ".cargo/config.toml",
    ".cargo/config",
    ".local/bin",
    ".local/lib",
    ".local/share/uv/python",
    ".local/share/uv/tools",
    ".local/share/pipx",
    ".local/share/virtualenvs",
    ".local/share/pnpm",
    ".local/share/fnm",
    ".local/share/mise/installs",
    ".pyenv",
    ".nvm",
    ".npm",
    ".volta",
    ".fnm",
    ".bun/bin",
    ".deno/bin",
    ".asdf/installs",
    ".asdf/shims",
    ".rbenv/versions",
    ".rbenv/shims",
    ".gem/ruby",
    ".virtualenvs",
    ".venv",
    ".pixi/envs",
    "miniconda3",
    "anaconda3",
    "miniforge3",
    ".conda/envs",
    ".cache/pip",
    ".cache/uv",
    ".cache/pypoetry/virtualenvs",
    ".cache/yarn",
    ".cache/ms-playwright",
    ".cache/puppeteer",
    "go/pkg/mod",
    "go/bin",
    "sdk",
    ".m2/repository",
    ".gradle/caches",
    ".gradle/wrapper",
    ".sdkman/candidates",
    ".nuget/packages",
    ".dotnet",
    ".ghcup",
    ".elan",
    // Homebrew on Linux, in its own home folder (`/home/linuxbrew`).
    ".linuxbrew",
];

/// Variables naming toolchain folders a run may read where they are inside
/// a home folder (`VIRTUAL_ENV`: an activated environment).
const HOME_ALLOWED_VARS: &[&str] = &[
    "RUSTUP_HOME",
    "PYENV_ROOT",
    "NVM_DIR",
    "VOLTA_HOME",
    "BUN_INSTALL",
    "PNPM_HOME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "GOROOT",
    "GOMODCACHE",
    "JAVA_HOME",
    "npm_config_cache",
    "PIP_CACHE_DIR",
    "UV_CACHE_DIR",
];

/// The folders a run may read in `home`: [`HOME_ALLOWED`], cargo's `bin`
/// under `$CARGO_HOME`, the toolchain folders the environment names, and
/// the `PATH` entries (an interpreter installed in the home folder).
pub fn home_allowed(home: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = HOME_ALLOWED.iter().map(|p| home.join(p)).collect();
    let mut named: Vec<PathBuf> = HOME_ALLOWED_VARS
        .iter()
        .filter_map(|v| from_env(v))
        .collect();
    if let Some(cargo) = from_env("CARGO_HOME") {
        for below in ["bin", "registry", "git", "env", "config.toml", "config"] {
            named.push(cargo.join(below));
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        named.extend(std::env::split_paths(&path));
    }
    for path in named.into_iter().filter(|p| p.is_absolute()) {
        // Spelt as the canonical home folder spells it.
        let real = std::fs::canonicalize(&path).unwrap_or(path);
        if real.starts_with(home) && real != home {
            out.push(real);
        }
    }
    out
}

/// The entries of `home` (canonical) a run may not see: every entry that is
/// neither one of `allowed` (or inside one) nor on the way to one, found by
/// listing `home` and each folder on the way. Links are left out (see the
/// module's doc), and so is what `hidden` hides whole already (the build
/// layers' folder, which holds one folder per workspace: listing it would
/// make each a rule and a mount of every run).
pub fn home_hidden(home: &Path, allowed: &[PathBuf], hidden: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut folders = vec![home.to_path_buf()];
    while let Some(dir) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if allowed.iter().any(|a| path.starts_with(a)) || hidden.contains(&path) {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                continue;
            }
            if kind.is_dir() && allowed.iter().any(|a| a.starts_with(&path)) {
                folders.push(path);
                continue;
            }
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The home folders whose content is an allow-list for a run (canonical):
/// `HOME` first (`None`: no `HOME`, or `/`), then, for root, the machine's
/// other ones, which root's run would read otherwise.
pub fn homes() -> (Option<PathBuf>, Vec<PathBuf>) {
    let home = from_env("HOME")
        .and_then(|h| std::fs::canonicalize(h).ok())
        .filter(|h| h.parent().is_some());
    #[cfg(unix)]
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    #[cfg(not(unix))]
    let root = false;
    let mut others = Vec::new();
    if root {
        let found = other_homes(Path::new("/home"), Path::new("/root"), home.as_deref());
        others.extend(found.iter().filter_map(|h| std::fs::canonicalize(h).ok()));
        others.retain(|h| Some(h) != home.as_ref() && h.parent().is_some());
    }
    (home, others)
}

pub fn hidden(configured: Option<&[String]>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = match configured {
        Some(list) => list.iter().filter_map(|p| expand(p)).collect(),
        None => default_hidden(),
    };
    if let Some(dirs) = directories::ProjectDirs::from("", "", "stepwise") {
        out.push(dirs.config_dir().to_path_buf());
        // stepwise's own log and what it keeps for the user.
        out.extend(dirs.state_dir().map(Path::to_path_buf));
        out.push(dirs.data_dir().to_path_buf());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_caches_are_not_writable_by_default() {
        let writable = writable(&[]);
        for (cache, _) in code_caches() {
            assert!(!writable.contains(&cache), "{}", cache.display());
        }
        assert!(
            code_caches()
                .iter()
                .any(|(p, fill)| p.ends_with(".cargo/registry") && *fill == "cargo fetch")
        );
    }

    #[test]
    fn credentials_the_environment_moves_are_hidden_where_it_says() {
        let vars = |name: &str| -> Option<std::ffi::OsString> {
            match name {
                "DOCKER_CONFIG" => Some("/srv/docker".into()),
                "CARGO_HOME" => Some("/opt/cargo".into()),
                "XDG_CONFIG_HOME" => Some("/cfg".into()),
                "KUBECONFIG" => Some("/k/one:/k/two::relative".into()),
                "HISTFILE" => Some("".into()),
                _ => None,
            }
        };
        let found = hidden_by_env(vars);
        for path in [
            "/srv/docker",
            "/opt/cargo/credentials.toml",
            "/cfg/gh",
            "/cfg/git/credentials",
            "/k/one",
            "/k/two",
        ] {
            assert!(found.contains(&PathBuf::from(path)), "{path}: {found:?}");
        }
        // Empty or relative values name nothing.
        assert!(found.iter().all(|p| p.is_absolute()), "{found:?}");
    }

    #[test]
    fn other_home_folders_are_covered_but_not_this_one() {
        let dir = tempfile::tempdir().unwrap();
        let (homes, root) = (dir.path().join("home"), dir.path().join("root"));
        for d in ["home/alice", "home/bob", "root"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let mine = homes.join("bob");
        let found = other_homes(&homes, &root, Some(&mine));
        assert_eq!(found, [homes.join("alice"), root]);
    }

    #[test]
    fn the_config_folder_is_always_hidden() {
        let list = hidden(Some(&["/srv/secret".to_string()]));
        assert_eq!(list[0], PathBuf::from("/srv/secret"));
        assert!(list.iter().any(|p| p.ends_with("stepwise")), "{list:?}");
        let defaults = hidden(None);
        for name in [
            ".git-credentials",
            ".npmrc",
            ".pypirc",
            ".bash_history",
            ".codex",
        ] {
            assert!(defaults.iter().any(|p| p.ends_with(name)), "{name}");
        }
    }

    #[test]
    fn home_shows_only_what_is_allowed_and_the_way_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap();
        for d in [
            ".cargo/bin",
            ".cargo/registry",
            ".config/git",
            "code/ws",
            "code/other",
        ] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        for f in [".gitconfig", ".pgpass", ".cargo/credentials.toml"] {
            std::fs::write(home.join(f), "x").unwrap();
        }
        // A link is never hidden by where it leads (a system file, say).
        std::os::unix::fs::symlink("/etc/hostname", home.join("link")).unwrap();
        let mut allowed = home_allowed(&home);
        allowed.push(home.join("code/ws"));
        std::fs::create_dir_all(home.join(".cache/layers/mine")).unwrap();
        std::fs::create_dir_all(home.join(".cache/layers/theirs")).unwrap();
        allowed.push(home.join(".cache/layers/mine"));
        let whole = [home.join(".cache/layers")];
        let hidden = home_hidden(&home, &allowed, &whole);
        let names: Vec<String> = hidden
            .iter()
            .map(|p| p.strip_prefix(&home).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                ".cargo/credentials.toml",
                ".config",
                ".gitconfig",
                ".pgpass",
                "code/other"
            ]
        );
    }
}
