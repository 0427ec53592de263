//! A look at the workspace's git state for `/diff`: the branch, and files
//! changed outside stepwise's own edits. Runs `git` as an argument array with
//! a short timeout; no git, or not a repository, simply gives no status.
//!
//! What must stay true: the repository is hostile. git runs with a minimal
//! environment (no key, no `GIT_*` from ours) and with everything a
//! repository's config can make it execute switched off through
//! `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, which take
//! any key as it is (a driver named `x=y` included, which `-c` would split
//! at its first `=`): `core.fsmonitor`, hooks, pager, external diff,
//! textconv, the filter drivers it names, protocols; without submodules;
//! with `safe.bareRepository=explicit` (a folder holding `HEAD`,
//! `objects/` and `refs/` is no repository to it); and only when the
//! repository git finds is the one the workspace is in (its top folder
//! holds the workspace, and its `.git` is that folder's own).

use serde::Serialize;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;
use tokio::process::Command;

/// The only variables git sees: enough to find itself and the user's own config.
const PASSED_VARS: [&str; 5] = ["PATH", "HOME", "XDG_CONFIG_HOME", "LANG", "TZ"];

/// Settings that make git run a program, switched off whatever the repository says.
const NEUTRAL_CONFIG: [(&str, &str); 10] = [
    ("core.fsmonitor", ""),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.untrackedCache", "false"),
    ("diff.external", ""),
    ("diff.textconv", ""),
    ("protocol.allow", "never"),
    ("credential.helper", ""),
    ("core.sshCommand", "false"),
    ("safe.bareRepository", "explicit"),
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GitStatus {
    pub branch: Option<String>,
    /// Changed or untracked paths that stepwise did not change.
    pub other_dirty: Vec<String>,
}

/// The variables of `vars` that git may see.
fn minimal_env(vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
    vars.filter(|(name, _)| PASSED_VARS.iter().any(|p| name.as_os_str() == *p))
        .collect()
}

/// git with a minimal environment and nothing the repository configures
/// that executes; `neutral`: more keys to set, each with its value.
fn command(root: &Path, neutral: &[(String, String)]) -> Command {
    let mut cmd = Command::new("git");
    cmd.env_clear()
        .envs(minimal_env(std::env::vars_os()))
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .arg("--no-pager")
        .arg("-C")
        .arg(root);
    let settings: Vec<(String, String)> = NEUTRAL_CONFIG
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .chain(neutral.iter().cloned())
        .collect();
    cmd.env("GIT_CONFIG_COUNT", settings.len().to_string());
    for (i, (key, value)) in settings.iter().enumerate() {
        cmd.env(format!("GIT_CONFIG_KEY_{i}"), key);
        cmd.env(format!("GIT_CONFIG_VALUE_{i}"), value);
    }
    cmd.kill_on_drop(true);
    cmd
}

async fn run(root: &Path, neutral: &[(String, String)], args: &[&str]) -> Option<String> {
    let run = command(root, neutral).args(args).output();
    let out = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .ok()?
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Filter drivers the repository's config defines (reading config runs
/// nothing), each switched off: `git status` would run a driver's `clean`
/// command on files whose attributes name it.
async fn neutral_filters(root: &Path) -> Vec<(String, String)> {
    let listed = run(
        root,
        &[],
        &["config", "--name-only", "--get-regexp", r"^filter\."],
    )
    .await;
    let mut drivers: Vec<String> = listed
        .unwrap_or_default()
        .lines()
        .filter_map(|key| key.strip_prefix("filter."))
        .filter_map(|rest| rest.rsplit_once('.').map(|(name, _)| name.to_string()))
        .collect();
    drivers.dedup();
    drivers
        .iter()
        .flat_map(|d| {
            ["clean", "smudge", "process"].map(|k| (format!("filter.{d}.{k}"), String::new()))
        })
        .collect()
}

async fn git(root: &Path, args: &[&str]) -> Option<String> {
    let neutral = neutral_filters(root).await;
    run(root, &neutral, args).await
}

/// Whether the repository git finds from `root` is the one the workspace
/// is in: its top folder holds `root`, and its git folder is that top
/// folder's own `.git` (a folder, or a file naming a worktree's). A
/// repository found anywhere else (a bare layout a run left, a `GIT_DIR`
/// trick) is not looked at.
async fn expected_repository(root: &Path) -> bool {
    let Some(top) = run(root, &[], &["rev-parse", "--show-toplevel"]).await else {
        return false;
    };
    let Some(git_dir) = run(root, &[], &["rev-parse", "--absolute-git-dir"]).await else {
        return false;
    };
    let canonical = |p: &str| std::fs::canonicalize(p.trim_end_matches('\n')).ok();
    let (Some(top), Some(git_dir)) = (canonical(&top), canonical(&git_dir)) else {
        return false;
    };
    let Ok(root) = std::fs::canonicalize(root) else {
        return false;
    };
    let dot_git = top.join(".git");
    let own = match std::fs::symlink_metadata(&dot_git) {
        Ok(m) if m.is_dir() => std::fs::canonicalize(&dot_git).is_ok_and(|d| d == git_dir),
        // A worktree or a submodule: `.git` is a file naming its folder.
        Ok(m) if m.is_file() => true,
        _ => false,
    };
    own && root.starts_with(&top)
}

/// Each path of `git status --porcelain=v1 -z` (relative to the workspace)
/// with how it is shown: itself, or `old → new` for a rename or a copy.
/// With `-z` git neither quotes nor escapes names, so `é.py` stays `é.py`.
fn dirty_paths(z: &str, prefix: &str) -> Vec<(String, String)> {
    let local = |p: &str| p.strip_prefix(prefix).unwrap_or(p).to_string();
    let mut out = Vec::new();
    let mut entries = z.split('\0');
    while let Some(entry) = entries.next() {
        let (Some(xy), Some(path)) = (entry.get(..2), entry.get(3..)) else {
            continue;
        };
        let path = local(path);
        if xy.contains(['R', 'C']) {
            let from = local(entries.next().unwrap_or_default());
            out.push((path.clone(), format!("{from} \u{2192} {path}")));
        } else {
            out.push((path.clone(), path));
        }
    }
    out
}

/// The status, or `None` when the workspace is not in a git repository.
pub async fn status(root: &Path, ours: &[String]) -> Option<GitStatus> {
    if !expected_repository(root).await {
        return None;
    }
    let prefix = git(root, &["rev-parse", "--show-prefix"]).await?;
    let prefix = prefix.trim();
    let branch = git(root, &["rev-parse", "--abbrev-ref", "HEAD"])
        .await
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty());
    let porcelain = git(
        root,
        &[
            "-c",
            "core.quotepath=off",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignore-submodules=all",
            ".",
        ],
    )
    .await?;
    let other_dirty = dirty_paths(&porcelain, prefix)
        .into_iter()
        .filter(|(path, _)| !ours.contains(path) && !path.starts_with(".stepwise/"))
        .map(|(_, shown)| shown)
        .collect();
    Some(GitStatus {
        branch,
        other_dirty,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_read_as_renames_and_names_as_written() {
        let z = "R  sub/new.py\0sub/old.py\0?? sub/\u{e9}.py\0 M sub/a b.py\0";
        let shown: Vec<String> = dirty_paths(z, "sub/").into_iter().map(|(_, s)| s).collect();
        assert_eq!(shown, ["old.py \u{2192} new.py", "\u{e9}.py", "a b.py"]);
        assert_eq!(dirty_paths("", ""), Vec::<(String, String)>::new());
    }

    #[tokio::test]
    async fn branch_and_other_dirty_files_are_reported() {
        let dir = std::env::temp_dir().join(format!("stepwise-git-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sh = |args: &[&str]| {
            std::process::Command::new("git")
                .arg("-C")
                .arg(&dir)
                .args(args)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@example.com")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@example.com")
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        };
        if !sh(&["init", "-q", "-b", "trunk"]) {
            eprintln!("SKIPPED: git is not available");
            return;
        }
        std::fs::write(dir.join("a.py"), "a\n").unwrap();
        std::fs::write(dir.join("b.py"), "b\n").unwrap();
        assert!(sh(&["add", "."]) && sh(&["commit", "-q", "-m", "init"]));
        std::fs::write(dir.join("a.py"), "changed by stepwise\n").unwrap();
        std::fs::write(dir.join("b.py"), "changed by the user\n").unwrap();
        std::fs::write(dir.join("new.txt"), "untracked\n").unwrap();
        let st = status(&dir, &["a.py".to_string()])
            .await
            .expect("a repository");
        assert_eq!(st.branch.as_deref(), Some("trunk"));
        assert_eq!(st.other_dirty, ["b.py", "new.txt"]);
        let not_repo = std::env::temp_dir().join(format!("stepwise-nogit-{}", std::process::id()));
        std::fs::create_dir_all(&not_repo).unwrap();
        // A temp folder may itself sit inside some repository; only check when it does not.
        if git(&not_repo, &["rev-parse", "--show-prefix"])
            .await
            .is_none()
        {
            assert!(status(&not_repo, &[]).await.is_none());
        }
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&not_repo).unwrap();
    }

    #[tokio::test]
    async fn nothing_the_repository_configures_runs_and_git_never_sees_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .arg("-C")
                .arg(&root)
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args)
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        };
        if !git(&["init", "-q"]) {
            eprintln!("SKIPPED: git is not available");
            return;
        }
        std::fs::write(root.join("a.txt"), "same\n").unwrap();
        std::fs::write(root.join(".gitattributes"), "*.txt filter=evil\n").unwrap();
        assert!(git(&["add", "."]) && git(&["commit", "-q", "-m", "init"]));
        let marker = dir.path().join("marker");
        let script = dir.path().join("evil.sh");
        std::fs::write(
            &script,
            format!("#!/bin/sh\nenv >> '{}'\ncat\n", marker.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let script = script.to_str().unwrap();
        for (key, value) in [
            ("core.fsmonitor", script),
            ("filter.evil.clean", script),
            ("core.hooksPath", dir.path().to_str().unwrap()),
            ("core.pager", script),
        ] {
            assert!(git(&["config", key, value]));
        }
        // Same size, new mtime: status re-reads the file through its clean filter.
        std::thread::sleep(Duration::from_millis(1100));
        std::fs::write(root.join("a.txt"), "same\n").unwrap();
        let st = status(&root, &[]).await.expect("a repository");
        assert!(st.other_dirty.is_empty(), "{:?}", st.other_dirty);
        assert!(
            !marker.exists(),
            "the repository ran a program: {}",
            std::fs::read_to_string(&marker).unwrap_or_default()
        );
        let passed = minimal_env(
            [
                ("OPENAI_API_KEY", "sk-x"),
                ("PATH", "/bin"),
                ("GIT_DIR", "/x"),
            ]
            .into_iter()
            .map(|(k, v)| (k.into(), v.into())),
        );
        assert_eq!(passed, [(OsString::from("PATH"), OsString::from("/bin"))]);
    }

    /// Escape: a repository with no entry named `.git` (`HEAD`, `config`,
    /// `objects/`, `refs/` in a folder, `core.worktree = .`), chained with a
    /// filter driver named `x=y` (`-c` split it at the first `=`, so the
    /// neutral setting missed it): `/diff`'s status ran the driver.
    #[tokio::test]
    async fn a_bare_layout_and_a_driver_named_with_an_equals_sign_run_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("marker");
        let script = dir.path().join("evil.sh");
        std::fs::write(
            &script,
            format!("#!/bin/sh\necho ran >> '{}'\ncat\n", marker.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let script = script.to_str().unwrap();
        let git = |root: &Path, args: &[&str]| {
            std::process::Command::new("git")
                .arg("-C")
                .arg(root)
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args)
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        };
        // A real repository whose driver's name holds `=`.
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        if !git(&repo, &["init", "-q"]) {
            eprintln!("SKIPPED: git is not available");
            return;
        }
        std::fs::write(repo.join("a.txt"), "same\n").unwrap();
        std::fs::write(repo.join(".gitattributes"), "*.txt filter=x=y\n").unwrap();
        assert!(git(&repo, &["add", "."]) && git(&repo, &["commit", "-q", "-m", "init"]));
        assert!(git(&repo, &["config", "filter.x=y.clean", script]));
        std::thread::sleep(Duration::from_millis(1100));
        std::fs::write(repo.join("a.txt"), "same\n").unwrap();
        let st = status(&repo, &[]).await.expect("a repository");
        assert!(st.other_dirty.is_empty(), "{:?}", st.other_dirty);
        assert!(!marker.exists(), "the x=y driver ran");
        // A bare layout in a plain folder: no repository to stepwise's git.
        let bare = dir.path().join("bare");
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::create_dir_all(bare.join("refs/heads")).unwrap();
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(
            bare.join("config"),
            format!(
                "[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = {script}\n[filter \"x=y\"]\n\tclean = {script}\n"
            ),
        )
        .unwrap();
        std::fs::write(bare.join(".gitattributes"), "* filter=x=y\n").unwrap();
        std::fs::write(bare.join("b.txt"), "b\n").unwrap();
        assert!(status(&bare, &[]).await.is_none());
        assert!(!marker.exists(), "the bare layout's config ran");
    }
}
