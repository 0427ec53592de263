//! `/diff` on a stranger's repository, in the full-screen UI: the escape
//! was a repository with no entry named `.git` (`HEAD`, `config`,
//! `objects/`, `refs/` and an index at the workspace's root, with
//! `core.worktree = .`) whose filter driver is named `x=y`; stepwise's own
//! `git status` for `/diff` ran the driver outside any sandbox, because
//! `-c filter.x=y.clean=` is split at its first `=` and neutralised nothing.

use crate::support::MockModel;
use crate::support::pty::Tui;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_diff_runs_nothing_a_bare_layout_with_an_x_equals_y_driver_names() {
    let outside = tempfile::tempdir().unwrap();
    let scratch = outside.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    if !git(&scratch, &["init", "-q"]) {
        eprintln!("skipped: git is not installed here");
        return;
    }
    std::fs::write(scratch.join(".gitattributes"), "*.txt filter=x=y\n").unwrap();
    std::fs::write(scratch.join("a.txt"), "same\n").unwrap();
    assert!(git(&scratch, &["add", "."]) && git(&scratch, &["commit", "-q", "-m", "x"]));
    // The repository's folder becomes the workspace's root itself.
    let ws = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(scratch.join(".git")).unwrap() {
        let entry = entry.unwrap();
        std::fs::rename(entry.path(), ws.path().join(entry.file_name())).unwrap();
    }
    for name in [".gitattributes", "a.txt"] {
        std::fs::rename(scratch.join(name), ws.path().join(name)).unwrap();
    }
    let marker = outside.path().join("ran");
    let script = outside.path().join("driver.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho ran >> '{}'\ncat\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = ws.path().join("config");
    let set = |key: &str, value: &str| {
        let file = config.to_str().unwrap();
        assert!(git(ws.path(), &["config", "--file", file, key, value]));
    };
    set("core.bare", "false");
    set("core.worktree", ".");
    set("filter.x=y.clean", script.to_str().unwrap());
    // Same size, a new time: status hashes the file through its driver.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(ws.path().join("a.txt"), "same\n").unwrap();

    let mock = MockModel::start(Vec::new()).await;
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send("/diff\r");
    tui.wait_for("stepwise has not changed any file in this session")
        .await;
    tui.send("\x1b");
    assert!(
        !marker.exists(),
        "the repository's driver ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}
