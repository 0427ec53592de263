//! Confinement matrix: every way out of the workspace is refused for reads and
//! writes alike, and nothing is ever created outside the root.

use std::os::unix::fs::symlink;
use std::path::Path;
use stepwise::tools::edits::edit;
use stepwise::tools::edits::edit::{prepare_replace, prepare_write};
use stepwise::tools::reading::files;
use stepwise::tools::{ToolOutput, Workspace};

struct Fixture {
    _tmp: tempfile::TempDir,
    outside: std::path::PathBuf,
    ws: Workspace,
}

/// `tmp/root` is the workspace; `tmp/outside` holds a secret file and a folder.
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    std::fs::write(outside.join("secret.py"), "SECRET = 1\n").unwrap();
    std::fs::write(outside.join("dir/x.py"), "X = 1\n").unwrap();
    std::fs::write(root.join("inside.py"), "ok = True\n").unwrap();
    symlink(outside.join("secret.py"), root.join("link_file.py")).unwrap();
    symlink(outside.join("dir"), root.join("link_dir")).unwrap();
    // A chain: link_a -> link_b -> outside/secret.py
    symlink(outside.join("secret.py"), root.join("sub/link_b.py")).unwrap();
    symlink(root.join("sub/link_b.py"), root.join("link_a.py")).unwrap();
    // Relative symlink escaping by `..`.
    symlink("../outside/secret.py", root.join("rel_link.py")).unwrap();
    // A link inside pointing inside is fine.
    symlink("inside.py", root.join("alias.py")).unwrap();
    let ws = Workspace::open(&root).unwrap();
    Fixture {
        _tmp: tmp,
        outside,
        ws,
    }
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in walk(dir) {
        let data = std::fs::read(&entry).unwrap_or_default();
        out.push((entry.display().to_string(), data));
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

const ESCAPES: [&str; 9] = [
    "../x.py",
    "/etc/passwd",
    "sub/../../x.py",
    "link_file.py",
    "link_dir/x.py",
    "link_a.py",
    "rel_link.py",
    "link_dir/new_file.py",
    "link_dir/deeper/new.py",
];

fn refused(out: &ToolOutput, what: &str) {
    assert!(!out.success, "{what} should be refused: {:?}", out.body);
    let error = out.body["error"].as_str().unwrap_or("");
    assert!(!error.is_empty(), "{what}: refusal carries an error");
}

#[test]
fn reads_outside_are_refused() {
    let f = fixture();
    for path in ESCAPES {
        refused(&files::read_file(&f.ws, path), &format!("read {path}"));
    }
}

#[test]
fn writes_outside_are_refused_and_create_nothing() {
    let f = fixture();
    let before = snapshot(&f.outside);
    for path in ESCAPES {
        let result = prepare_write(&f.ws, path, "pwned = 1\n");
        match result {
            Err(_) => {}
            Ok(edit) => refused(&edit::apply_edit(&f.ws, &edit), &format!("write {path}")),
        }
        assert!(
            prepare_replace(&f.ws, path, "SECRET = 1", "SECRET = 2").is_err(),
            "replace {path} should be refused"
        );
    }
    assert_eq!(snapshot(&f.outside), before, "nothing outside changed");
    assert!(!f.outside.join("dir/new_file.py").exists());
    assert!(!f.outside.join("dir/deeper").exists());
    assert!(!f.outside.parent().unwrap().join("x.py").exists());
}

#[test]
fn escape_errors_explain_the_refusal() {
    let f = fixture();
    let error = |p: &str| {
        files::read_file(&f.ws, p).body["error"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(error("../x.py").contains("outside the workspace"));
    assert!(error("/etc/passwd").contains("absolute"));
    assert!(
        error("link_file.py").contains("outside the workspace"),
        "{}",
        error("link_file.py")
    );
    assert!(
        error("link_dir/x.py").contains("outside the workspace"),
        "{}",
        error("link_dir/x.py")
    );
}

#[test]
fn listing_does_not_follow_links_out() {
    let f = fixture();
    let out = files::list_files(&f.ws, ".");
    assert!(out.success);
    let listed = out.body["files"].to_string();
    assert!(
        !listed.contains("x.py"),
        "walked into a symlinked folder: {listed}"
    );
    refused(&files::list_files(&f.ws, "link_dir"), "list link_dir");
    refused(&files::list_files(&f.ws, ".."), "list ..");
}

#[test]
fn paths_that_stay_inside_work() {
    let f = fixture();
    assert!(files::read_file(&f.ws, "sub/../inside.py").success);
    assert!(files::read_file(&f.ws, "./inside.py").success);
    let alias = files::read_file(&f.ws, "alias.py");
    assert!(alias.success, "{:?}", alias.body);
    assert_eq!(alias.body["content"], "ok = True\n");
    let edit = prepare_write(&f.ws, "sub/new/deep.py", "x = 1\n").unwrap();
    assert!(edit::apply_edit(&f.ws, &edit).success);
    assert_eq!(
        std::fs::read_to_string(f.ws.root().join("sub/new/deep.py")).unwrap(),
        "x = 1\n"
    );
}

#[test]
fn dot_env_is_never_readable_but_any_other_text_file_is() {
    let f = fixture();
    std::fs::write(f.ws.root().join(".env"), "OPENAI_API_KEY=sk-x\n").unwrap();
    std::fs::write(f.ws.root().join(".env.json"), "{}").unwrap();
    std::fs::write(f.ws.root().join("run.sh"), "echo\n").unwrap();
    for p in [".env", ".env.json", "sub/.env"] {
        refused(&files::read_file(&f.ws, p), p);
        assert!(prepare_write(&f.ws, p, "x").is_err(), "write {p}");
    }
    // Text is decided by content, not by suffix.
    assert!(files::read_file(&f.ws, "run.sh").success);
}

/// Model-written test code runs with the user's rights and can plant
/// symlinks; the next tool call must still not follow them out.
#[tokio::test]
async fn a_symlink_planted_by_a_test_run_cannot_be_used_to_escape() {
    use std::time::Duration;
    use stepwise::tools::testing::test_runner::run_tests;
    let f = fixture();
    let body = format!(
        "import os, unittest\n\
         class T(unittest.TestCase):\n\
         \x20   def test_plant(self):\n\
         \x20       os.symlink({:?}, 'escape')\n\
         \x20       os.symlink({:?}, 'planted.py')\n\
         \x20       os.symlink('../outside', 'sub/up')\n",
        f.outside.display().to_string(),
        f.outside.join("secret.py").display().to_string(),
    );
    let edit = prepare_write(&f.ws, "test_plant.py", &body).unwrap();
    assert!(edit::apply_edit(&f.ws, &edit).success);
    let run = run_tests(
        f.ws.root(),
        &stepwise::tools::TestCommands::detect(&f.ws, &[])
            .get("unittest")
            .cloned()
            .unwrap(),
        Duration::from_secs(60),
        &tokio_util::sync::CancellationToken::new(),
    )
    .await;
    assert!(run.success, "{:?}", run.body);
    let root = f.ws.root();
    if stepwise::tools::sandbox::layered(root, &Default::default()) {
        // The run wrote into its layer: none of its links reached the
        // workspace. Made here as a run without a layer would leave them,
        // to hold the file tools against them all the same.
        assert!(!root.join("escape").exists(), "{:?}", run.body);
        std::os::unix::fs::symlink(&f.outside, root.join("escape")).unwrap();
        std::os::unix::fs::symlink(f.outside.join("secret.py"), root.join("planted.py")).unwrap();
        std::os::unix::fs::symlink("../outside", root.join("sub/up")).unwrap();
    }
    assert!(f.ws.root().join("escape").is_symlink());
    let before = snapshot(&f.outside);
    for path in [
        "escape/secret.py",
        "escape/pwned.py",
        "escape/dir/x.py",
        "escape/new/deep.py",
        "planted.py",
        "sub/up/secret.py",
        "sub/up/pwned.py",
    ] {
        refused(&files::read_file(&f.ws, path), &format!("read {path}"));
        if let Ok(edit) = prepare_write(&f.ws, path, "pwned = 1\n") {
            refused(&edit::apply_edit(&f.ws, &edit), &format!("write {path}"));
        }
        assert!(prepare_replace(&f.ws, path, "SECRET = 1", "SECRET = 2").is_err());
    }
    refused(&files::list_files(&f.ws, "escape"), "list escape");
    assert_eq!(snapshot(&f.outside), before, "nothing outside changed");
    assert!(!f.outside.join("pwned.py").exists() && !f.outside.join("new").exists());
}
