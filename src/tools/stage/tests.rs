use super::changeset::{Changeset, apply};
use super::*;
use crate::tools::workspace::Workspace;
use std::sync::Arc;

struct Fixture {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    root: PathBuf,
    store: Store,
}

fn fixture() -> Fixture {
    let ws = tempfile::tempdir().unwrap();
    let stages = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("calc.py"),
        "def add(a, b):\n    return a - b\n",
    )
    .unwrap();
    std::fs::write(ws.path().join("notes.txt"), "one\ntwo\n").unwrap();
    std::fs::create_dir(ws.path().join("pkg")).unwrap();
    std::fs::write(ws.path().join("pkg/old.py"), "x = 1\n").unwrap();
    let root = ws.path().canonicalize().unwrap();
    let store = Store(stages.path().join("stages"));
    Fixture {
        _dirs: (ws, stages),
        root,
        store,
    }
}

fn staged(f: &Fixture) -> (Workspace, Arc<Stage>) {
    let stage = Arc::new(Stage::create(&f.store, &f.root, "fix add").unwrap());
    let ws = Workspace::open(&f.root).unwrap().with_stage(stage.clone());
    (ws, stage)
}

fn rel(p: &str) -> crate::tools::workspace::RelPath {
    Workspace::check(p).unwrap()
}

#[test]
fn a_staged_workspace_reads_its_writes_and_the_project_keeps_its_bytes() {
    let f = fixture();
    let (ws, _stage) = staged(&f);
    ws.write_atomic(&rel("calc.py"), b"def add(a, b):\n    return a + b\n")
        .unwrap();
    ws.write_atomic(&rel("new/dir/made.py"), b"y = 2\n")
        .unwrap();
    ws.remove_file(&rel("pkg/old.py")).unwrap();
    let read = |p: &str| ws.read_bytes(&rel(p), 1 << 20).unwrap();
    assert_eq!(
        read("calc.py").as_deref(),
        Some(&b"def add(a, b):\n    return a + b\n"[..])
    );
    assert_eq!(read("new/dir/made.py").as_deref(), Some(&b"y = 2\n"[..]));
    assert_eq!(read("pkg/old.py"), None);
    assert!(ws.metadata(&rel("new/dir")).unwrap().unwrap().is_dir());
    assert_eq!(read("notes.txt").as_deref(), Some(&b"one\ntwo\n"[..]));
    // The project itself is as it was.
    assert_eq!(
        std::fs::read_to_string(f.root.join("calc.py")).unwrap(),
        "def add(a, b):\n    return a - b\n"
    );
    assert!(!f.root.join("new").exists());
    assert!(f.root.join("pkg/old.py").exists());
    // Writing a deleted file brings it back.
    ws.write_atomic(&rel("pkg/old.py"), b"x = 3\n").unwrap();
    assert_eq!(read("pkg/old.py").as_deref(), Some(&b"x = 3\n"[..]));
}

#[test]
fn the_changeset_offers_each_change_and_applies_only_what_is_chosen() {
    let f = fixture();
    let (ws, stage) = staged(&f);
    ws.write_atomic(&rel("calc.py"), b"def add(a, b):\n    return a + b\n")
        .unwrap();
    ws.write_atomic(&rel("added.py"), b"z = 0\n").unwrap();
    ws.remove_file(&rel("pkg/old.py")).unwrap();
    // A file written and written back is no change.
    ws.write_atomic(&rel("notes.txt"), b"changed\n").unwrap();
    ws.write_atomic(&rel("notes.txt"), b"one\ntwo\n").unwrap();
    let real = ws.unstaged().unwrap();
    let set = Changeset::compute(&stage, &real).unwrap();
    let mut paths: Vec<String> = set.patch.diffs().iter().map(|d| d.path.clone()).collect();
    paths.sort();
    assert_eq!(paths, ["added.py", "calc.py", "pkg/old.py"]);
    assert!(set.conflicts.is_empty());
    // Only calc.py chosen.
    let mut chosen = set.patch.clone();
    chosen.edits.retain(|e| e.path.display() == "calc.py");
    chosen.deletes.clear();
    let (written, refused) = apply(&real, &chosen);
    assert_eq!(written.len(), 1, "{refused:?}");
    assert!(refused.is_empty());
    assert!(
        std::fs::read_to_string(f.root.join("calc.py"))
            .unwrap()
            .contains("a + b")
    );
    assert!(!f.root.join("added.py").exists());
    assert!(f.root.join("pkg/old.py").exists());
}

#[test]
fn a_file_the_user_changed_meanwhile_is_a_conflict_and_is_never_written() {
    let f = fixture();
    let (ws, stage) = staged(&f);
    ws.write_atomic(&rel("calc.py"), b"staged\n").unwrap();
    ws.write_atomic(&rel("notes.txt"), b"staged notes\n")
        .unwrap();
    // The user edits calc.py in the project while the task runs.
    std::fs::write(f.root.join("calc.py"), "the user's own\n").unwrap();
    // A later staged write keeps the first base.
    ws.write_atomic(&rel("calc.py"), b"staged again\n").unwrap();
    let real = ws.unstaged().unwrap();
    let set = Changeset::compute(&stage, &real).unwrap();
    assert_eq!(set.conflicts, ["calc.py"]);
    let offered: Vec<String> = set.patch.diffs().iter().map(|d| d.path.clone()).collect();
    assert_eq!(offered, ["notes.txt"]);
    let (written, _) = apply(&real, &set.patch);
    assert_eq!(written.len(), 1);
    assert_eq!(
        std::fs::read_to_string(f.root.join("calc.py")).unwrap(),
        "the user's own\n"
    );
}

#[test]
fn a_stage_is_found_again_after_its_process_is_gone_and_discarding_removes_it() {
    let f = fixture();
    {
        let (ws, _stage) = staged(&f);
        ws.write_atomic(&rel("calc.py"), b"staged\n").unwrap();
    }
    let list = Stage::list(&f.store, &f.root).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].state.as_str(), list[0].files), ("running", 1));
    assert_eq!(list[0].task, "fix add");
    let stage = Stage::newest(&f.store, &f.root).unwrap().unwrap();
    let ws = Workspace::open(&f.root)
        .unwrap()
        .with_stage(Arc::new(stage));
    assert_eq!(
        ws.read_bytes(&rel("calc.py"), 100).unwrap().as_deref(),
        Some(&b"staged\n"[..])
    );
    drop(ws);
    let stage = Stage::newest(&f.store, &f.root).unwrap().unwrap();
    assert!(Stage::open(&f.store, &f.root, "../x").is_err());
    stage.discard().unwrap();
    assert!(Stage::list(&f.store, &f.root).unwrap().is_empty());
}

#[test]
fn the_patch_file_is_one_git_apply_takes_on_the_untouched_workspace() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: git is not installed");
        return;
    }
    let f = fixture();
    std::fs::write(f.root.join("crlf.txt"), "a\r\nb\r\n").unwrap();
    std::fs::write(f.root.join("tail.txt"), "no newline").unwrap();
    let (ws, stage) = staged(&f);
    ws.write_atomic(&rel("calc.py"), b"def add(a, b):\n    return a + b\n")
        .unwrap();
    ws.write_atomic(&rel("crlf.txt"), b"a\r\nB\r\n").unwrap();
    ws.write_atomic(&rel("tail.txt"), b"no newline, still")
        .unwrap();
    ws.write_atomic(&rel("sub/new.txt"), b"new\n").unwrap();
    ws.remove_file(&rel("notes.txt")).unwrap();
    let set = Changeset::compute(&stage, &ws.unstaged().unwrap()).unwrap();
    let patch = f.root.join("../change.patch");
    std::fs::write(&patch, set.patch_text()).unwrap();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(&f.root)
            .output()
            .unwrap()
    };
    let check = git(&["apply", "--check", patch.to_str().unwrap()]);
    assert!(
        check.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&check.stderr),
        set.patch_text()
    );
    assert!(git(&["apply", patch.to_str().unwrap()]).status.success());
    assert_eq!(
        std::fs::read(f.root.join("crlf.txt")).unwrap(),
        b"a\r\nB\r\n"
    );
    assert_eq!(
        std::fs::read(f.root.join("tail.txt")).unwrap(),
        b"no newline, still"
    );
    assert!(!f.root.join("notes.txt").exists());
    assert_eq!(std::fs::read(f.root.join("sub/new.txt")).unwrap(), b"new\n");
}

#[test]
fn search_and_listing_see_the_stage_not_the_project_below_it() {
    use crate::tools::reading::files::list_files;
    use crate::tools::reading::search::{SearchArgs, search_text};
    let f = fixture();
    std::fs::write(f.root.join("keep.py"), "needle = 1\n").unwrap();
    std::fs::write(f.root.join("pkg/old.py"), "needle = 2\n").unwrap();
    let (ws, _stage) = staged(&f);
    ws.write_atomic(&rel("calc.py"), b"needle = 3\n").unwrap();
    ws.write_atomic(&rel("keep.py"), b"no match now\n").unwrap();
    ws.write_atomic(&rel("fresh/new.py"), b"x = 0\nneedle = 4\n")
        .unwrap();
    ws.remove_file(&rel("pkg/old.py")).unwrap();
    let args = |path: &str| SearchArgs {
        pattern: "needle".into(),
        path: path.into(),
        glob: None,
        ignore_case: false,
    };
    let found = search_text(&ws, &args("."));
    assert!(found.success, "{:?}", found.body);
    let mut hits: Vec<(String, u64)> = found.body["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let path = m["path"].as_str().unwrap().to_string();
            (path, m["line"].as_u64().unwrap())
        })
        .collect();
    hits.sort();
    assert_eq!(
        hits,
        [("calc.py".to_string(), 1), ("fresh/new.py".to_string(), 2)],
        "{:?}",
        found.body
    );
    assert_eq!(
        hits,
        [("calc.py".to_string(), 1), ("fresh/new.py".to_string(), 2)]
    );
    // One file, staged: its staged content is searched.
    let one = search_text(&ws, &args("calc.py"));
    assert_eq!(one.body["total"], 1, "{:?}", one.body);
    // A folder only the stage has.
    let fresh = search_text(&ws, &args("fresh"));
    assert_eq!(fresh.body["total"], 1, "{:?}", fresh.body);
    let listed = list_files(&ws, ".");
    assert!(listed.success, "{:?}", listed.body);
    let staged = &listed.body["staged"];
    assert_eq!(
        staged["written"],
        serde_json::json!(["calc.py", "fresh/new.py", "keep.py"])
    );
    assert_eq!(staged["deleted"], serde_json::json!(["pkg/old.py"]));
    let only_staged = list_files(&ws, "fresh");
    assert_eq!(
        only_staged.body["files"],
        serde_json::json!(["fresh/new.py"])
    );
}

#[test]
fn a_stage_open_in_one_session_is_not_taken_up_by_another() {
    let f = fixture();
    let (_ws, first) = staged(&f);
    // A second session (an editor's second thread) gets a stage of its own.
    assert!(Stage::newest(&f.store, &f.root).unwrap().is_none());
    assert!(Stage::open(&f.store, &f.root, first.id()).is_err());
    drop(_ws);
    drop(first);
    assert!(Stage::newest(&f.store, &f.root).unwrap().is_some());
}
