//! The stale-write guard: an edit is refused when the file changed on disk
//! since the model last read it (before approval and after it), or when it
//! would overwrite a file the model never read; the user's edit survives.

use std::path::Path;
use stepwise::tools::Workspace;
use stepwise::tools::edits::edit::{apply_edit, prepare_replace, prepare_write};
use stepwise::tools::reading::files;

fn ws_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let tmp = tempfile::tempdir().unwrap();
    for (path, content) in files {
        std::fs::write(tmp.path().join(path), content).unwrap();
    }
    let ws = Workspace::open(tmp.path()).unwrap();
    (tmp, ws)
}

fn read(ws: &Workspace, path: &str) {
    let out = files::read_file(ws, path);
    assert!(out.success, "{:?}", out.body);
}

fn on_disk(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

#[test]
fn overwriting_a_file_never_read_is_refused_until_it_is_read() {
    let (tmp, ws) = ws_with(&[("a.py", "mine = 1\n")]);
    let write = prepare_write(&ws, "a.py", "theirs = 1\n").unwrap_err().0;
    assert!(
        write.contains("not read it") && write.contains("read_file"),
        "{write}"
    );
    let replace = prepare_replace(&ws, "a.py", "mine", "theirs")
        .unwrap_err()
        .0;
    assert!(replace.contains("read_file"), "{replace}");
    assert_eq!(on_disk(tmp.path(), "a.py"), "mine = 1\n");
    read(&ws, "a.py");
    let edit = prepare_write(&ws, "a.py", "theirs = 1\n").unwrap();
    assert!(apply_edit(&ws, &edit).success);
    assert_eq!(on_disk(tmp.path(), "a.py"), "theirs = 1\n");
}

#[test]
fn a_file_edited_since_the_last_read_is_refused_and_the_edit_survives() {
    let (tmp, ws) = ws_with(&[("a.py", "x = 1\n")]);
    read(&ws, "a.py");
    std::fs::write(tmp.path().join("a.py"), "x = 1\nuser = 2\n").unwrap();
    for result in [
        prepare_write(&ws, "a.py", "x = 3\n"),
        prepare_replace(&ws, "a.py", "x = 1", "x = 3"),
    ] {
        let error = result.unwrap_err().0;
        assert!(
            error.contains("changed on disk") && error.contains("read_file"),
            "{error}"
        );
    }
    assert_eq!(on_disk(tmp.path(), "a.py"), "x = 1\nuser = 2\n");
    // Reading again shows the user's edit and lifts the refusal.
    read(&ws, "a.py");
    let edit = prepare_replace(&ws, "a.py", "x = 1", "x = 3").unwrap();
    assert!(apply_edit(&ws, &edit).success);
    assert_eq!(on_disk(tmp.path(), "a.py"), "x = 3\nuser = 2\n");
}

#[test]
fn an_edit_made_while_approval_is_pending_is_not_overwritten() {
    let (tmp, ws) = ws_with(&[("a.py", "x = 1\n"), ("b.py", "y = 1\n")]);
    read(&ws, "a.py");
    read(&ws, "b.py");
    let write = prepare_write(&ws, "a.py", "x = 2\n").unwrap();
    let replace = prepare_replace(&ws, "b.py", "y = 1", "y = 2").unwrap();
    // The user edits both files in their editor while the prompt is open.
    std::fs::write(tmp.path().join("a.py"), "x = 1  # user\n").unwrap();
    std::fs::write(tmp.path().join("b.py"), "y = 1  # user\n").unwrap();
    for edit in [&write, &replace] {
        let out = apply_edit(&ws, edit);
        assert!(!out.success);
        let error = out.body["error"].as_str().unwrap();
        assert!(
            error.contains("while this edit waited for approval") && error.contains("read_file"),
            "{error}"
        );
    }
    assert_eq!(on_disk(tmp.path(), "a.py"), "x = 1  # user\n");
    assert_eq!(on_disk(tmp.path(), "b.py"), "y = 1  # user\n");
}

#[test]
fn what_stepwise_wrote_counts_as_read() {
    let (tmp, ws) = ws_with(&[("a.py", "x = 1\n")]);
    read(&ws, "a.py");
    let first = prepare_replace(&ws, "a.py", "x = 1", "x = 2").unwrap();
    assert!(apply_edit(&ws, &first).success);
    let second = prepare_replace(&ws, "a.py", "x = 2", "x = 3").unwrap();
    assert!(apply_edit(&ws, &second).success);
    let created = prepare_write(&ws, "new.py", "n = 1\n").unwrap();
    assert!(apply_edit(&ws, &created).success);
    let again = prepare_write(&ws, "new.py", "n = 2\n").unwrap();
    assert!(apply_edit(&ws, &again).success);
    assert_eq!(on_disk(tmp.path(), "a.py"), "x = 3\n");
    assert_eq!(on_disk(tmp.path(), "new.py"), "n = 2\n");
    // ...until someone else changes it.
    std::fs::write(tmp.path().join("new.py"), "user = 1\n").unwrap();
    assert!(prepare_write(&ws, "new.py", "n = 3\n").is_err());
}

#[test]
fn new_files_may_be_created_but_not_over_one_that_appeared_meanwhile() {
    let (tmp, ws) = ws_with(&[]);
    let edit = prepare_write(&ws, "fresh.py", "agent = 1\n").unwrap();
    std::fs::write(tmp.path().join("fresh.py"), "user = 1\n").unwrap();
    let out = apply_edit(&ws, &edit);
    assert!(!out.success, "{:?}", out.body);
    assert_eq!(on_disk(tmp.path(), "fresh.py"), "user = 1\n");
    let other = prepare_write(&ws, "other.py", "agent = 1\n").unwrap();
    assert!(apply_edit(&ws, &other).success);
}

#[test]
fn a_file_deleted_since_the_read_is_not_silently_recreated() {
    let (tmp, ws) = ws_with(&[("a.py", "x = 1\n")]);
    read(&ws, "a.py");
    std::fs::remove_file(tmp.path().join("a.py")).unwrap();
    let error = prepare_write(&ws, "a.py", "x = 2\n").unwrap_err().0;
    assert!(error.contains("deleted"), "{error}");
    assert!(!tmp.path().join("a.py").exists());
    // Seeing that it is gone lets the model create it again.
    assert!(!files::read_file(&ws, "a.py").success);
    let edit = prepare_write(&ws, "a.py", "x = 2\n").unwrap();
    assert!(apply_edit(&ws, &edit).success);
}

#[test]
fn the_guard_knows_files_by_their_normalized_path() {
    let (tmp, ws) = ws_with(&[("a.py", "x = 1\n")]);
    std::fs::create_dir(tmp.path().join("sub")).unwrap();
    read(&ws, "./sub/../a.py");
    let edit = prepare_write(&ws, "a.py", "x = 2\n").unwrap();
    assert!(apply_edit(&ws, &edit).success);
}
