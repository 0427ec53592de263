//! Tests of the test-run snapshot: what it sees, what counts as a change.

use super::*;

#[test]
fn files_in_ignored_folders_are_named_too() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join(".gitignore"), "generated/\n*.log\n").unwrap();
    std::fs::create_dir(p.join("generated")).unwrap();
    let ws = Workspace::open(p).unwrap();
    let before = Snapshot::take(&ws);
    std::fs::write(p.join("generated/ci-cache.txt"), "planted\n").unwrap();
    std::fs::write(p.join("run.log"), "log\n").unwrap();
    let changes = before.changes_to(&Snapshot::take(&ws));
    let seen: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(seen, ["generated/ci-cache.txt", "run.log"]);
}

#[test]
fn created_changed_and_deleted_files_are_found_even_with_the_same_size_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("keep.txt"), "same\n").unwrap();
    std::fs::write(p.join("edit.py"), "x = 1\n").unwrap();
    std::fs::write(p.join("gone.md"), "bye\n").unwrap();
    std::fs::create_dir(p.join("__pycache__")).unwrap();
    let ws = Workspace::open(p).unwrap();
    let before = Snapshot::take(&ws);
    let stamp = std::fs::metadata(p.join("edit.py"))
        .unwrap()
        .modified()
        .unwrap();
    std::fs::write(p.join("edit.py"), "x = 2\n").unwrap();
    // Same size, same modification time: the status-change time tells.
    let file = std::fs::File::options()
        .write(true)
        .open(p.join("edit.py"))
        .unwrap();
    file.set_modified(stamp).unwrap();
    std::fs::remove_file(p.join("gone.md")).unwrap();
    std::fs::write(p.join("new.txt"), "hi\n").unwrap();
    std::fs::write(p.join("__pycache__/x.pyc"), "cache").unwrap();
    std::fs::write(p.join(".hidden"), "h").unwrap();
    let changes = before.changes_to(&Snapshot::take(&ws));
    let seen: Vec<(&str, Touch)> = changes
        .iter()
        .map(|c| (c.path.as_str(), c.change))
        .collect();
    assert_eq!(
        seen,
        [
            (".hidden", Touch::Created),
            // A planted `.pyc` runs instead of the reviewed source: named.
            ("__pycache__/x.pyc", Touch::Created),
            ("edit.py", Touch::Changed),
            ("gone.md", Touch::Deleted),
            ("new.txt", Touch::Created)
        ]
    );
    assert_eq!(changes[2].before.as_deref(), Some("x = 1\n"));
    assert_eq!(changes[2].after.as_deref(), Some("x = 2\n"));
    assert!(changes.iter().all(|c| c.contents_known));
    assert_eq!(
        describe(&changes),
        "created .hidden, created __pycache__/x.pyc, changed edit.py, deleted gone.md, created new.txt"
    );
}

#[test]
fn nothing_changed_is_no_change_and_a_rewrite_with_the_same_text_neither() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let before = Snapshot::take(&ws);
    assert!(
        before
            .changes_to(&Snapshot::take_after(&ws, Some(&before)))
            .is_empty()
    );
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let after = Snapshot::take_after(&ws, Some(&before));
    assert!(before.changes_to(&after).is_empty());
    std::fs::write(dir.path().join("a.txt"), "b").unwrap();
    let again = Snapshot::take_after(&ws, Some(&after));
    assert_eq!(after.changes_to(&again)[0].after.as_deref(), Some("b"));
}

#[test]
fn planted_dotfiles_count_but_git_and_stepwise_do_not_and_denied_files_stay_unread() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for d in [".git/hooks", ".stepwise", ".github", "node_modules/x"] {
        std::fs::create_dir_all(p.join(d)).unwrap();
    }
    std::fs::write(p.join(".env"), "KEY=old\n").unwrap();
    let ws = Workspace::open(p).unwrap();
    let before = Snapshot::take(&ws);
    std::fs::create_dir_all(p.join(".github/workflows")).unwrap();
    std::fs::write(p.join(".github/workflows/x.yml"), "on: push\n").unwrap();
    std::fs::write(p.join(".gitattributes"), "* text\n").unwrap();
    std::fs::write(p.join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
    std::fs::write(p.join(".stepwise/x"), "x").unwrap();
    std::fs::write(p.join("node_modules/x/i.js"), "x").unwrap();
    std::fs::write(p.join(".coverage"), "data").unwrap();
    std::fs::create_dir_all(p.join(".hypothesis/examples")).unwrap();
    std::fs::write(p.join(".hypothesis/examples/1"), "x").unwrap();
    std::fs::write(p.join(".env"), "KEY=new-value\n").unwrap();
    let changes = before.changes_to(&Snapshot::take(&ws));
    let seen: Vec<(&str, Touch)> = changes
        .iter()
        .map(|c| (c.path.as_str(), c.change))
        .collect();
    assert_eq!(
        seen,
        [
            (".env", Touch::Changed),
            (".gitattributes", Touch::Created),
            (".github/workflows/x.yml", Touch::Created)
        ]
    );
    // The denied file is known changed by its metadata; its text is never read.
    assert_eq!(
        (changes[0].before.as_deref(), changes[0].after.as_deref()),
        (None, None)
    );
    assert!(!changes[0].contents_known);
    assert_eq!(changes[2].after.as_deref(), Some("on: push\n"));
}

#[test]
fn binary_files_are_compared_by_hash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.bin"), b"\0one").unwrap();
    std::fs::write(dir.path().join("b.bin"), b"\0two").unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let before = Snapshot::take(&ws);
    assert!(
        before
            .files
            .values()
            .all(|e| e.text.is_none() && e.hash.is_some())
    );
    // Rewritten with the same bytes: no change; with other bytes: changed.
    std::fs::write(dir.path().join("a.bin"), b"\0one").unwrap();
    std::fs::write(dir.path().join("b.bin"), b"\0TWO").unwrap();
    let changes = before.changes_to(&Snapshot::take(&ws));
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (changes[0].path.as_str(), changes[0].change),
        ("b.bin", Touch::Changed)
    );
    assert!(!changes[0].contents_known);
}
