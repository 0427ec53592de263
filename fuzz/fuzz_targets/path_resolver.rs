//! Fuzz the path resolver and the file tools: the input is a path given by the
//! model. `Workspace::check` either refuses it or yields a path with no `..`,
//! and reading, listing, writing and replacing through it never touch the
//! `outside` folder next to the workspace (which symlinks inside lead to).

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::os::unix::fs::symlink;
use std::path::{Component, PathBuf};
use std::sync::Mutex;
use stepwise::tools::Workspace;
use stepwise::tools::edits::edit::{apply_edit, prepare_replace, prepare_write};
use stepwise::tools::reading::files;

const OUTSIDE_TEXT: &str = "outside-only-7f3a";

struct Fixture {
    _tmp: tempfile::TempDir,
    outside: PathBuf,
    ws: Workspace,
}

/// `tmp/a/b/root` is the workspace; `tmp/outside` is what must stay untouched.
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("a/b/root");
    let outside = tmp.path().join("outside");
    for dir in [
        root.join("sub"),
        root.join(".stepwise"),
        outside.join("dir"),
    ] {
        std::fs::create_dir_all(dir).expect("folders");
    }
    let secret = format!("SECRET = '{OUTSIDE_TEXT}'\nok = True\n");
    std::fs::write(outside.join("secret.py"), &secret).expect("secret");
    std::fs::write(outside.join("dir/x.py"), &secret).expect("secret");
    std::fs::write(root.join(".stepwise/lock.txt"), OUTSIDE_TEXT).expect("lock");
    std::fs::write(root.join("inside.py"), "ok = True\n").expect("inside");
    let links = [
        (outside.join("secret.py"), "link_file.py"),
        (outside.join("dir"), "link_dir"),
        (PathBuf::from("/"), "link_root"),
        (PathBuf::from("../../../outside"), "rel_out"),
        (outside.join("ghost.py"), "dangling.py"),
        (PathBuf::from("inside.py"), "alias.py"),
        (PathBuf::from(".stepwise"), "private"),
    ];
    for (target, name) in links {
        symlink(target, root.join(name)).expect("symlink");
    }
    let ws = Workspace::open(&root).expect("workspace");
    Fixture {
        _tmp: tmp,
        outside,
        ws,
    }
}

fn outside_state(f: &Fixture) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![f.outside.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("outside folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            out.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
        }
    }
    out.sort();
    out
}

static FIXTURE: Mutex<Option<Fixture>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let path = String::from_utf8_lossy(data);
    if let Ok(rel) = Workspace::check(&path) {
        assert!(
            rel.as_path()
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir)),
            "{path:?} -> {rel:?}"
        );
    }
    let mut guard = FIXTURE.lock().unwrap_or_else(|e| e.into_inner());
    let f = guard.get_or_insert_with(fixture);
    let before = outside_state(f);
    let read = files::read_file(&f.ws, &path);
    assert!(!read.body.to_string().contains(OUTSIDE_TEXT), "{path:?}");
    let listed = files::list_files(&f.ws, &path);
    if listed.success {
        assert!(!listed.body["files"].to_string().contains("secret.py"));
    }
    let mut wrote = false;
    if let Ok(edit) = prepare_write(&f.ws, &path, "fuzz = 1\n") {
        wrote |= apply_edit(&f.ws, &edit).success;
    }
    if let Ok(edit) = prepare_replace(&f.ws, &path, "ok = True", "ok = False") {
        wrote |= apply_edit(&f.ws, &edit).success;
    }
    assert_eq!(
        outside_state(f),
        before,
        "{path:?} changed the outside folder"
    );
    if wrote {
        // Start the next input from a clean workspace.
        *guard = None;
    }
});
