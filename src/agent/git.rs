//! A look at the workspace's git state for `/diff`: the branch, and files
//! changed outside stepwise's own edits. Runs `git` as an argument array with
//! a short timeout; no git, or not a repository, simply gives no status.

use serde::Serialize;
use std::path::Path;
use std::time::Duration;
use tokio::process::Command;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GitStatus {
    pub branch: Option<String>,
    /// Changed or untracked paths that stepwise did not change.
    pub other_dirty: Vec<String>,
}

async fn git(root: &Path, args: &[&str]) -> Option<String> {
    let run = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env_remove("GIT_DIR")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .ok()?
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
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
        &["status", "--porcelain=v1", "--untracked-files=all", "."],
    )
    .await?;
    let other_dirty = porcelain
        .lines()
        .filter_map(|line| line.get(3..))
        .map(|path| path.trim_matches('"'))
        .map(|path| path.strip_prefix(prefix).unwrap_or(path).to_string())
        .filter(|path| !ours.contains(path) && !path.starts_with(".stepwise/"))
        .collect();
    Some(GitStatus {
        branch,
        other_dirty,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
