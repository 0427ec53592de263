//! Files that are not what they seem: FIFOs and other special files, a
//! symlink or a hard link giving `.env` an innocent name, `deny_paths` from
//! the configuration. Each is refused for reading and for writing, and a
//! FIFO never hangs the tool (checked against a timeout).

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;
use stepwise::tools::Workspace;
use stepwise::tools::edits::edit::{prepare_replace, prepare_write};
use stepwise::tools::reading::files;
use stepwise::tools::reading::search::{SearchArgs, search_text};

fn ws_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let tmp = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let p = tmp.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    let ws = Workspace::open(tmp.path()).unwrap();
    (tmp, ws)
}

fn error_of(out: &stepwise::tools::ToolOutput) -> String {
    assert!(!out.success, "expected an error: {:?}", out.body);
    out.body["error"].as_str().unwrap().to_string()
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Run `f` on another thread; fail the test if it takes more than 10 s.
fn within_timeout<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the tool hung on a special file")
}

#[test]
fn a_fifo_is_refused_at_once_for_read_and_write() {
    let (tmp, ws) = ws_with(&[("a.txt", "x\n")]);
    mkfifo(&tmp.path().join("pipe.txt"));
    let ws = std::sync::Arc::new(ws);
    let w = ws.clone();
    let read = within_timeout(move || files::read_file(&w, "pipe.txt"));
    let error = error_of(&read);
    assert!(
        error.contains("named pipe") && error.contains("not a regular file"),
        "{error}"
    );
    let w = ws.clone();
    let write = within_timeout(move || prepare_write(&w, "pipe.txt", "x\n").map(|_| ()));
    assert!(write.unwrap_err().0.contains("named pipe"));
    let w = ws.clone();
    let replace = within_timeout(move || prepare_replace(&w, "pipe.txt", "x", "y").map(|_| ()));
    assert!(replace.is_err());
    // A search walks past it without hanging; a listing does not show it as a file.
    let w = ws.clone();
    let found = within_timeout(move || {
        search_text(
            &w,
            &SearchArgs {
                pattern: "x".into(),
                path: ".".into(),
                glob: None,
                ignore_case: false,
            },
        )
    });
    assert_eq!(found.body["total"], 1, "{:?}", found.body);
    let w = ws.clone();
    let listed = within_timeout(move || files::list_files(&w, "."));
    assert_eq!(listed.body["files"], serde_json::json!(["a.txt"]));
    // It is still a FIFO: nothing replaced it.
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(tmp.path().join("pipe.txt"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

#[test]
fn a_character_device_reached_through_the_workspace_is_never_read() {
    // /dev/zero is outside, so a symlink to it is refused by confinement;
    // a device node inside needs root to make, so the refusal by type is
    // checked on the FIFO above and here only that nothing is read.
    let (tmp, ws) = ws_with(&[]);
    symlink("/dev/zero", tmp.path().join("zero.txt")).unwrap();
    let out = within_timeout(move || files::read_file(&ws, "zero.txt"));
    assert!(!out.success);
}

#[test]
fn a_symlink_to_dot_env_with_an_innocent_name_is_refused() {
    let (tmp, ws) = ws_with(&[
        (".env", "DATABASE_URL=postgres://u:hunter2@db/x\n"),
        ("config/x.txt", ""),
    ]);
    symlink(".env", tmp.path().join("settings.txt")).unwrap();
    symlink("../.env", tmp.path().join("config/db.txt")).unwrap();
    for alias in ["settings.txt", "config/db.txt"] {
        let error = error_of(&files::read_file(&ws, alias));
        assert!(
            error.contains("leads to .env") && !error.contains("hunter2"),
            "{error}"
        );
        assert!(prepare_write(&ws, alias, "x\n").is_err(), "write {alias}");
        assert!(
            prepare_replace(&ws, alias, "hunter2", "y").is_err(),
            "replace {alias}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(tmp.path().join(".env")).unwrap(),
        "DATABASE_URL=postgres://u:hunter2@db/x\n"
    );
}

#[test]
fn a_hard_link_to_dot_env_with_an_innocent_name_is_refused() {
    let (tmp, ws) = ws_with(&[(".env", "DATABASE_URL=postgres://u:hunter2@db/x\n")]);
    std::fs::hard_link(tmp.path().join(".env"), tmp.path().join("notes.md")).unwrap();
    let error = error_of(&files::read_file(&ws, "notes.md"));
    assert!(
        error.contains("2 hard links") && error.contains(".env"),
        "{error}"
    );
    assert!(!error.contains("hunter2"));
    assert!(
        prepare_write(&ws, "notes.md", "x\n")
            .unwrap_err()
            .0
            .contains("hard links")
    );
    let found = search_text(
        &ws,
        &SearchArgs {
            pattern: "hunter2".into(),
            path: ".".into(),
            glob: None,
            ignore_case: false,
        },
    );
    assert_eq!(found.body["total"], 0, "{:?}", found.body);
}

#[test]
fn deny_paths_from_the_configuration_add_to_the_list() {
    let (_tmp, ws) = ws_with(&[("secrets/db.txt", "pw\n"), ("src/app.py", "x = 1\n")]);
    let globs = [globset::Glob::new("secrets/**").unwrap()];
    let ws = ws.with_deny_paths(&globs).unwrap();
    let error = error_of(&files::read_file(&ws, "secrets/db.txt"));
    assert!(
        error.contains("deny_paths") && error.contains("secrets/**"),
        "{error}"
    );
    assert!(prepare_write(&ws, "secrets/new.txt", "x\n").is_err());
    assert!(files::read_file(&ws, "src/app.py").success);
    let listed = files::list_files(&ws, ".").body["files"].to_string();
    assert!(!listed.contains("db.txt"), "{listed}");
}
