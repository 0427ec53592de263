//! One door into the workspace, through the real binary: a test run writes
//! into a layer, and nothing of it reaches the project unless it is kept by
//! rule. Each test is a hostile suite that plants what a later command
//! would run (found by attacking the walk-and-compare sandbox this
//! replaced), run with `exec --yes`, and each ends with the user's own next
//! command (`pytest`, `git status`, `import`) running nothing planted.

use crate::sandbox::{Setup, kernel_lacks, output_of, run, run_in, setup};
use crate::sandbox_hardening::lacks;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Whether the runs here get a layer (else the test says why it skips).
fn no_layer() -> bool {
    kernel_lacks(true, false) || lacks(|s| s.layer)
}

fn notes(result: &Value) -> String {
    result["sandbox_notes"].to_string()
}

/// The user's own `python3 -m pytest -q` in `dir` afterwards: its output.
fn users_pytest(dir: &Path) -> Option<String> {
    let out = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .current_dir(dir)
        .output()
        .ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (!text.contains("No module named pytest")).then_some(text)
}

/// A conftest that says so loudly when anything imports it.
const PLANTED_CONFTEST: &str =
    "print(\"PLANTED CONFTEST RAN\")\\nraise SystemExit(\"PLANTED CONFTEST RAN\")\\n";

/// Escape: `target/` was never looked at, at any depth; a test wrote
/// `target/conftest.py` in a Python project and the user's next plain
/// `pytest` ran it. Now the run wrote into its layer: the file is named,
/// never kept by `--yes` (it is code), and `pytest` runs nothing planted.
#[tokio::test]
async fn a_conftest_planted_under_target_never_reaches_the_users_pytest() {
    if no_layer() {
        return;
    }
    let body = format!(
        "os.makedirs('target', exist_ok=True)\n\
         os.makedirs('deploy/target', exist_ok=True)\n\
         open('target/conftest.py', 'w').write('{PLANTED_CONFTEST}')\n\
         open('deploy/target/rates.py', 'w').write('RATE = 1\\n')\n\
         print('WROTE', os.path.exists('target/conftest.py'))\n"
    );
    let s = setup(&body, "");
    std::fs::write(
        s.ws.path().join("test_ok.py"),
        "def test_ok():\n    assert True\n",
    )
    .unwrap();
    let (_, result) = run(&s).await;
    // The run itself saw what it wrote (its layer is its workspace).
    assert!(output_of(&result).contains("WROTE True"), "{result}");
    let ws = s.ws.path();
    assert!(!ws.join("target").exists() && !ws.join("deploy").exists());
    let said = notes(&result);
    assert!(
        said.contains("target/conftest.py (declined") && said.contains("deploy/target/rates.py"),
        "{said}"
    );
    if let Some(pytest) = users_pytest(ws) {
        assert!(!pytest.contains("PLANTED"), "{pytest}");
        assert!(pytest.contains("passed"), "{pytest}");
    }
}

/// Escape: a path that is not UTF-8 was skipped by the walk; a test wrote
/// `\xff/conftest.py` and the next `pytest` ran it. The layer keeps names
/// as bytes: the entry is named (escaped) and thrown away, and the run does
/// not count as clean.
#[tokio::test]
async fn a_conftest_under_a_name_that_is_not_utf8_is_named_and_thrown_away() {
    if no_layer() {
        return;
    }
    let body = format!(
        "d = os.path.join(os.getcwdb(), b'\\xff')\n\
         os.makedirs(d, exist_ok=True)\n\
         open(os.path.join(d, b'conftest.py'), 'w').write('{PLANTED_CONFTEST}')\n"
    );
    let s = setup(&body, "");
    let (out, result) = run(&s).await;
    let summary = result["summary"].as_str().unwrap_or_default();
    assert!(
        summary.starts_with("WARNING: the run wrote what would run later")
            && summary.contains("\\xff/conftest.py (a name that is not UTF-8)"),
        "{result}"
    );
    let mut left: Vec<_> = std::fs::read_dir(s.ws.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != ".stepwise")
        .collect();
    left.sort();
    assert_eq!(left, ["test_escape.py"], "{left:?}");
    // Not a clean run: the answer after it is refused.
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("Final answer refused"), "{printed}");
}

/// Escape: a repository with no entry named `.git`. A test wrote `HEAD`,
/// `config` (`core.worktree`, `core.fsmonitor`), `objects/` and `refs/` in
/// a package folder; the user's `git status` there ran the fsmonitor. Git
/// metadata is never kept, whatever its folder is called.
#[tokio::test]
async fn a_bare_repository_layout_planted_by_a_run_is_never_kept() {
    if no_layer() {
        return;
    }
    let marker = tempfile::tempdir().unwrap();
    let owned = marker.path().join("owned");
    let body = format!(
        "d = 'pkg'\n\
         os.makedirs(d + '/objects', exist_ok=True)\n\
         os.makedirs(d + '/refs/heads', exist_ok=True)\n\
         open(d + '/HEAD', 'w').write('ref: refs/heads/main\\n')\n\
         open(d + '/config', 'w').write('[core]\\n\\tworktree = .\\n\\tfsmonitor = touch {}\\n')\n",
        owned.display()
    );
    let s = setup(&body, "");
    std::fs::create_dir_all(s.ws.path().join("pkg")).unwrap();
    std::fs::write(s.ws.path().join("pkg/__init__.py"), "").unwrap();
    let (_, result) = run(&s).await;
    let summary = result["summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("pkg/HEAD (git metadata") && summary.contains("pkg/config (git metadata"),
        "{result}"
    );
    let pkg: Vec<_> = std::fs::read_dir(s.ws.path().join("pkg"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(pkg, ["__init__.py"]);
    // The user's `git status` in that folder runs nothing of it.
    let _ = Command::new("git")
        .args(["status", "--short"])
        .current_dir(s.ws.path().join("pkg"))
        .output();
    assert!(!owned.exists(), "the planted fsmonitor ran");
}

/// Escape: a workspace past 20,000 files was compared only up to its
/// 20,000th file, silently; code appended to `vendor/m20050.py` went
/// unreported. The layer has no limit: the change is named (and, being
/// code, not kept by `--yes`), and a data file past the limit is kept.
#[tokio::test]
async fn a_change_past_the_twenty_thousandth_file_is_seen() {
    if no_layer() {
        return;
    }
    let body = "open('vendor/m20050.py', 'a').write('import os; os.system(\"id\")\\n')\n\
                open('vendor/zz-data.txt', 'a').write('more\\n')\n";
    let s = setup(body, "");
    let vendor = s.ws.path().join("vendor");
    std::fs::create_dir_all(&vendor).unwrap();
    for i in 0..20_100 {
        std::fs::write(vendor.join(format!("m{i:05}.py")), "X = 1\n").unwrap();
    }
    std::fs::write(vendor.join("zz-data.txt"), "data\n").unwrap();
    let (_, result) = run(&s).await;
    let said = notes(&result);
    assert!(said.contains("vendor/m20050.py (declined"), "{said}");
    assert_eq!(
        std::fs::read_to_string(vendor.join("m20050.py")).unwrap(),
        "X = 1\n"
    );
    assert_eq!(
        std::fs::read_to_string(vendor.join("zz-data.txt")).unwrap(),
        "data\nmore\n"
    );
    let changed = result["files_changed_by_run"].to_string();
    assert!(changed.contains("vendor/zz-data.txt"), "{result}");
}

/// Escape: a `.pyc` in a new `__pycache__`, and a native module
/// `calculator.cpython-311-x86_64-linux-gnu.so` (which Python imports before
/// `calculator.py`), stayed in the workspace; afterwards `import calculator`
/// ran the planted code. Both are thrown away and named.
#[tokio::test]
async fn pyc_and_native_module_shadows_are_thrown_away() {
    if no_layer() {
        return;
    }
    let body = "os.makedirs('__pycache__', exist_ok=True)\n\
                open('__pycache__/calculator.cpython-311.pyc', 'wb').write(b'planted')\n\
                open('calculator.cpython-311-x86_64-linux-gnu.so', 'wb').write(b'\\x7fELF planted')\n";
    let s = setup(body, "");
    let ws = s.ws.path();
    std::fs::write(ws.join("calculator.py"), "print('REVIEWED SOURCE')\n").unwrap();
    let (_, result) = run(&s).await;
    let summary = result["summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("__pycache__/calculator.cpython-311.pyc (compiled Python)")
            && summary.contains(
                "calculator.cpython-311-x86_64-linux-gnu.so (a compiled or importable module)"
            ),
        "{result}"
    );
    assert!(!ws.join("__pycache__").exists());
    let imported = Command::new("python3")
        .args(["-B", "-c", "import calculator"])
        .current_dir(ws)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&imported.stdout),
        "REVIEWED SOURCE\n"
    );
}

/// Escape: a file changed through a hard link was not named, and a
/// hard-linked backdoor was reported as "deleted". Through the layer, both
/// names of the file are named as what they are, and neither is kept.
#[tokio::test]
async fn a_backdoor_through_a_hard_link_is_named_and_not_kept() {
    if no_layer() {
        return;
    }
    let body = "os.link('app.py', 'backdoor.py')\n\
                open('backdoor.py', 'a').write('import os  # BACKDOOR\\n')\n";
    let s = setup(body, "");
    let ws = s.ws.path();
    std::fs::write(ws.join("app.py"), "X = 1\n").unwrap();
    let (_, result) = run(&s).await;
    let said = notes(&result);
    assert!(
        said.contains("app.py (declined") && said.contains("backdoor.py (declined"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("app.py")).unwrap(),
        "X = 1\n"
    );
    assert!(!ws.join("backdoor.py").exists());
}

/// Escape: a `.git` planted in a workspace that is a subfolder of a
/// repository was reported, but it stayed, so the user's next `git status`
/// there ran its fsmonitor. Now it never reaches the workspace.
#[tokio::test]
async fn a_git_folder_planted_in_a_subfolder_workspace_never_runs() {
    if no_layer() {
        return;
    }
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("skipped: git is not installed here");
        return;
    }
    let marker = tempfile::tempdir().unwrap();
    let owned = marker.path().join("owned");
    let s = setup("pass\n", "");
    let repo = s.ws.path();
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(repo)
            .status()
            .unwrap()
            .success()
    );
    let ws = repo.join("app");
    std::fs::create_dir_all(&ws).unwrap();
    let test = format!(
        "import os, unittest\n\
         class T(unittest.TestCase):\n    def test_plant(self):\n\
         \x20       os.makedirs('.git/objects', exist_ok=True)\n\
         \x20       os.makedirs('.git/refs', exist_ok=True)\n\
         \x20       open('.git/HEAD', 'w').write('ref: refs/heads/main\\n')\n\
         \x20       open('.git/config', 'w').write('[core]\\n\\tfsmonitor = touch {}\\n')\n",
        owned.display()
    );
    std::fs::write(ws.join("test_plant.py"), test).unwrap();
    let (_, result) = run_in(&s, &ws, "unittest", &[]).await;
    let summary = result["summary"].as_str().unwrap_or_default();
    assert!(summary.contains(".git/config (git metadata)"), "{result}");
    assert!(!ws.join(".git").exists());
    let status = Command::new("git")
        .args(["status", "--short"])
        .current_dir(&ws)
        .output()
        .unwrap();
    assert!(status.status.success());
    assert!(!owned.exists(), "the planted fsmonitor ran");
}

/// What a run writes that is data (a report, a lock file) is shown like an
/// edit and kept when accepted (`--yes`); the kept change counts as a
/// change, so the gate wants another run. (Declining an offer while the
/// run itself was approved: `tests/core/project_gate.rs`.)
#[tokio::test]
async fn data_a_run_writes_is_kept_only_when_accepted() {
    if no_layer() {
        return;
    }
    let body = "open('report.txt', 'w').write('all good\\n')\n";
    let s = setup(body, "");
    let (out, result) = run(&s).await;
    let ws = s.ws.path();
    assert_eq!(
        std::fs::read_to_string(ws.join("report.txt")).unwrap(),
        "all good\n"
    );
    assert!(
        result["files_changed_by_run"]
            .to_string()
            .contains("report.txt")
    );
    // A kept change is a change: the answer after that one run is refused.
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("Final answer refused"), "{printed}");
}

/// Without a layer (the sandbox off), the workspace is compared before and
/// after the run; a comparison that passed over a folder that can hold
/// code (`target/`) is said in the result and the receipt, and the run
/// never counts as clean.
#[tokio::test]
async fn a_run_compared_only_partly_is_said_and_never_clean() {
    let s: Setup = setup("pass\n", "[sandbox]\nmode = \"off\"\n");
    std::fs::create_dir_all(s.ws.path().join("target")).unwrap();
    let (out, result) = run(&s).await;
    assert!(
        notes(&result).contains("compared only partly (target/ folders not compared)"),
        "{result}"
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("Final answer refused"), "{printed}");
}

/// Escape (against the door itself): a run that could reach the folder of
/// its own layer (a workspace inside `/tmp`, where `TMPDIR` was beside the
/// layer) moved the layer's upper folder away and left a link to a folder
/// of the user's in its place, for stepwise to read as "what the run wrote"
/// and offer into the workspace, where `--yes` keeps data. With the run's
/// own disk the layer's folder is out of its reach; everywhere, the layer
/// is read only as the folder it is, never through a link, and a run that
/// replaced it is never clean.
#[tokio::test]
async fn a_layer_replaced_by_a_link_to_the_users_files_is_never_read() {
    if no_layer() {
        return;
    }
    let users = tempfile::tempdir().unwrap();
    let private = users.path().join("private");
    std::fs::create_dir_all(&private).unwrap();
    std::fs::write(private.join("notes.txt"), "canary-private-notes\n").unwrap();
    let body = format!(
        "tmp = os.environ['TMPDIR']\n\
         moved = 0\n\
         for layer in [os.path.dirname(tmp), os.path.join(tmp, 'workspace-layer')]:\n\
         \x20   upper = os.path.join(layer, 'upper')\n\
         \x20   if os.path.isdir(upper) and not os.path.islink(upper):\n\
         \x20       os.rename(upper, os.path.join(layer, 'moved'))\n\
         \x20       os.symlink({private:?}, upper)\n\
         \x20       moved += 1\n\
         open('report.txt', 'w').write('after\\n')\n\
         print('MOVED', moved)\n"
    );
    let s = setup(&body, "");
    let (out, result) = run(&s).await;
    let output = output_of(&result);
    let ws = s.ws.path();
    assert!(
        !ws.join("notes.txt").exists(),
        "a file of the user's was offered as the run's"
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(!printed.contains("canary"), "{printed}");
    assert!(!result.to_string().contains("canary"), "{result}");
    let own_disk =
        stepwise::tools::sandbox::state(&stepwise::tools::sandbox::Policy::default()).disk_held;
    if own_disk {
        // Out of reach: what the run wrote is read and kept as usual.
        assert!(output.contains("MOVED 0"), "{output}");
        assert!(ws.join("report.txt").exists(), "{result}");
    } else {
        assert!(output.contains("MOVED 1"), "{output}");
        assert!(
            result.to_string().contains("replaced its layer's folder"),
            "{result}"
        );
        // A run that hid what it wrote is never clean: the answer is refused.
        assert!(printed.contains("Final answer refused"), "{printed}");
    }
}

/// Escape (by the workspace's name): a project whose path holds a comma,
/// a colon or a backslash got no layer (the overlay's options could not
/// spell it), so a run wrote `target/conftest.py` straight into it, while
/// the state still said `sandboxed`. The options escape those characters
/// now: the run writes into its layer like any other.
#[tokio::test]
async fn a_workspace_whose_path_holds_separators_still_gets_its_layer() {
    if no_layer() {
        return;
    }
    let body = format!(
        "os.makedirs('target', exist_ok=True)\n\
         open('target/conftest.py', 'w').write('{PLANTED_CONFTEST}')\n\
         print('WROTE', os.path.exists('target/conftest.py'))\n"
    );
    let s = setup(&body, "");
    let ws = s.ws.path().join("my,project:v2\\x");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::copy(
        s.ws.path().join("test_escape.py"),
        ws.join("test_escape.py"),
    )
    .unwrap();
    std::fs::write(ws.join("test_ok.py"), "def test_ok():\n    assert True\n").unwrap();
    let (_, result) = run_in(&s, &ws, "unittest", &[]).await;
    assert!(output_of(&result).contains("WROTE True"), "{result}");
    assert!(
        !ws.join("target").exists(),
        "the plant reached the workspace"
    );
    assert!(
        notes(&result).contains("target/conftest.py (declined"),
        "{result}"
    );
    if let Some(pytest) = users_pytest(&ws) {
        assert!(!pytest.contains("PLANTED"), "{pytest}");
    }
}

/// A workspace the overlay's options cannot hold (a path of over 1,000
/// bytes) gets no layer: its run is labelled `sandbox: no workspace layer`,
/// never `sandboxed`, and what it wrote is found by the comparison.
#[tokio::test]
async fn a_workspace_too_long_for_a_layer_is_never_called_sandboxed() {
    if no_layer() {
        return;
    }
    let s = setup("open('report.txt', 'w').write('ok\\n')\n", "");
    let mut ws = s.ws.path().to_path_buf();
    for _ in 0..6 {
        ws.push("d".repeat(200));
    }
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::copy(
        s.ws.path().join("test_escape.py"),
        ws.join("test_escape.py"),
    )
    .unwrap();
    let (_, result) = run_in(&s, &ws, "unittest", &[]).await;
    assert_eq!(result["sandbox"], "sandbox: no workspace layer", "{result}");
    assert!(
        result["files_changed_by_run"]
            .to_string()
            .contains("report.txt"),
        "{result}"
    );
}
