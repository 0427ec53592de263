//! A look at the workspace's git state for `/diff`: the branch, and files
//! changed outside stepwise's own edits. Runs `git` as an argument array with
//! a short timeout; no git, or not a repository, simply gives no status.
//!
//! What must stay true: the repository is hostile. git runs with a minimal
//! environment (no key, no `GIT_*` from ours) and with everything a
//! repository's config can make it execute switched off on the command line
//! (`core.fsmonitor`, hooks, pager, external diff, textconv, the filter
//! drivers it names, protocols), and without submodules.

use serde::Serialize;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;
use tokio::process::Command;

/// The only variables git sees: enough to find itself and the user's own config.
const PASSED_VARS: [&str; 5] = ["PATH", "HOME", "XDG_CONFIG_HOME", "LANG", "TZ"];

/// Settings that make git run a program, switched off whatever the repository says.
const NEUTRAL_CONFIG: [&str; 9] = [
    "core.fsmonitor=",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.untrackedCache=false",
    "diff.external=",
    "diff.textconv=",
    "protocol.allow=never",
    "credential.helper=",
    "core.sshCommand=false",
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

/// git with a minimal environment and nothing the repository configures that executes.
fn command(root: &Path, neutral: &[String]) -> Command {
    let mut cmd = Command::new("git");
    cmd.env_clear()
        .envs(minimal_env(std::env::vars_os()))
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .arg("--no-pager")
        .arg("-C")
        .arg(root);
    for setting in NEUTRAL_CONFIG
        .iter()
        .map(|s| s.to_string())
        .chain(neutral.iter().cloned())
    {
        cmd.arg("-c").arg(setting);
    }
    cmd.kill_on_drop(true);
    cmd
}

async fn run(root: &Path, neutral: &[String], args: &[&str]) -> Option<String> {
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
async fn neutral_filters(root: &Path) -> Vec<String> {
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
        .flat_map(|d| ["clean", "smudge", "process"].map(|k| format!("filter.{d}.{k}=")))
        .collect()
}

async fn git(root: &Path, args: &[&str]) -> Option<String> {
    let neutral = neutral_filters(root).await;
    run(root, &neutral, args).await
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
}
