//! Writes that fail: a write cut off half-way by the OS (`EFBIG` under an
//! `RLIMIT_FSIZE`, the same failure path as a full disk), a read-only file, a
//! parent that is a file. The original is intact, no temporary file is left,
//! and the error names the cause.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use stepwise::tools::Workspace;
use stepwise::tools::edits::edit::{apply_edit, prepare_write};
use stepwise::tools::reading::files;

/// Set in the child process that runs the write under a file-size limit.
const CHILD_ENV: &str = "STEPWISE_TEST_FSIZE_CHILD";
const ORIGINAL: &str = "keep = 1\n";

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// The test's name as the harness knows it (its module path without the crate).
fn this_test_name() -> String {
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    format!("{module}::a_write_cut_off_half_way_keeps_the_original_and_reports_the_os_error")
}

/// Runs twice: as the test, which re-runs itself in a child process limited
/// to 4 KiB files with `SIGXFSZ` ignored; and as that child, which makes the
/// write. Permission bits do not stop root, a file-size limit does.
#[test]
fn a_write_cut_off_half_way_keeps_the_original_and_reports_the_os_error() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        let ws = Workspace::open(Path::new(&dir)).unwrap();
        assert!(files::read_file(&ws, "big.py").success);
        let edit = prepare_write(&ws, "big.py", &"x = 1\n".repeat(15_000)).unwrap();
        let out = apply_edit(&ws, &edit);
        assert!(!out.success, "{:?}", out.body);
        println!("CHILD-ERROR: {}", out.body["error"].as_str().unwrap());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("big.py"), ORIGINAL).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 8 && trap '' XFSZ && exec \"$0\" \"$@\"")
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &this_test_name(),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let error = stdout
        .lines()
        .find_map(|l| l.split_once("CHILD-ERROR: ").map(|(_, e)| e))
        .unwrap_or_else(|| panic!("no report from the child:\n{stdout}"));
    assert!(
        error.contains("nothing changed") && error.contains("File too large"),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("big.py")).unwrap(),
        ORIGINAL
    );
    assert_eq!(names(tmp.path()), ["big.py"], "no temporary file is left");
}

#[test]
fn a_read_only_file_is_not_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("frozen.py");
    std::fs::write(&path, ORIGINAL).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let ws = Workspace::open(tmp.path()).unwrap();
    assert!(files::read_file(&ws, "frozen.py").success);
    let edit = prepare_write(&ws, "frozen.py", "gone = 1\n").unwrap();
    let out = apply_edit(&ws, &edit);
    assert!(!out.success);
    let error = out.body["error"].as_str().unwrap();
    assert!(
        error.contains("nothing changed") && error.contains("read-only"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), ORIGINAL);
    assert_eq!(names(tmp.path()), ["frozen.py"]);
}

#[test]
fn a_parent_that_is_a_file_fails_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("pkg.py"), ORIGINAL).unwrap();
    let ws = Workspace::open(tmp.path()).unwrap();
    let error = match prepare_write(&ws, "pkg.py/inner.py", "x = 1\n") {
        Err(e) => e.0,
        Ok(edit) => apply_edit(&ws, &edit).body["error"]
            .as_str()
            .unwrap()
            .to_string(),
    };
    assert!(error.contains("is a file, not a folder"), "{error}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("pkg.py")).unwrap(),
        ORIGINAL
    );
}
