//! Test runs in the sandbox, through the real binary: each test writes a
//! test file that tries one escape, lets the mock model ask for an approved
//! `run_tests` (`exec --yes`), and checks what the run could do and what the
//! model was told. `HOME` is a temp folder, so `~/.ssh` is the test's own.

use crate::support::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use stepwise::tools::sandbox;

/// A workspace holding `test_escape.py`, and a home folder.
pub(crate) struct Setup {
    pub(crate) ws: tempfile::TempDir,
    pub(crate) home: tempfile::TempDir,
}

pub(crate) fn setup(test_body: &str, config: &str) -> Setup {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let source = format!(
        // `print` writes each line whole: stdout and stderr are read from two
        // pipes, so a line written in pieces can be split by unittest's output.
        "import os, sys, unittest\n\
         def print(*args, **_):\n    sys.stdout.write(' '.join(map(str, args)) + '\\n')\n    sys.stdout.flush()\n\
         class T(unittest.TestCase):\n    def test_escape(self):\n{}\n",
        test_body
            .lines()
            .map(|l| format!("        {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    std::fs::write(ws.path().join("test_escape.py"), source).unwrap();
    if !config.is_empty() {
        std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
        std::fs::write(ws.path().join(".stepwise/stepwise.toml"), config).unwrap();
    }
    Setup { ws, home }
}

/// Run `exec --yes` with one approved `run_tests`; returns the process
/// output and the tool result the model received.
pub(crate) async fn run(s: &Setup) -> (Output, Value) {
    run_with(s, "unittest").await
}

async fn run_with(s: &Setup, runner: &str) -> (Output, Value) {
    run_with_env(s, runner, &[]).await
}

/// [`run_with`], with extra environment variables for stepwise.
pub(crate) async fn run_with_env(
    s: &Setup,
    runner: &str,
    envs: &[(&str, &Path)],
) -> (Output, Value) {
    run_in(s, s.ws.path(), runner, envs).await
}

/// [`run_with_env`] in `workspace` (e.g. a folder inside the setup's).
pub(crate) async fn run_in(
    s: &Setup,
    workspace: &Path,
    runner: &str,
    envs: &[(&str, &Path)],
) -> (Output, Value) {
    let model = MockModel::start(vec![
        tool_call("run_tests", json!({"command": runner})),
        text("Done."),
    ])
    .await;
    let mut cmd = exec_command_in(s, &model.base_url(), workspace);
    for (name, value) in envs {
        cmd.env(name, value);
    }
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let requests = model.requests().await;
    assert!(
        requests.len() >= 2,
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let tool = tool_messages(&requests[1]);
    let content = tool[0]["content"].as_str().unwrap_or_default();
    let result: Value = serde_json::from_str(content).unwrap_or(Value::String(content.into()));
    (out, result)
}

/// `stepwise exec --yes --trust` on the setup's workspace, with a canary key
/// and secrets in its environment.
pub(crate) fn exec_command(s: &Setup, base_url: &str) -> Command {
    exec_command_in(s, base_url, s.ws.path())
}

/// [`exec_command`] on `workspace`.
fn exec_command_in(s: &Setup, base_url: &str, workspace: &Path) -> Command {
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .env("HOME", s.home.path())
        .env("XDG_CONFIG_HOME", s.home.path().join(".config"))
        .env("OPENAI_API_KEY", "sk-canary-0123456789")
        .env("SENTRY_DSN", "https://secret@sentry.example/1")
        .env("DATABASE_URL", "postgres://user:pw@db/prod")
        .env("FIXTURE_URL", "http://127.0.0.1:9/fixture")
        .arg("exec")
        // The project file's `[sandbox]` and `test_env` apply only in a trusted folder.
        .args(["--yes", "--trust", "--base-url", base_url, "--workspace"])
        .arg(workspace)
        .arg("Run the tests");
    cmd
}

/// What this kernel lets the sandbox do; a test skips, saying why, only
/// where the kernel lacks the feature it needs.
pub(crate) fn kernel_lacks(files: bool, network: bool) -> bool {
    let state = sandbox::state(&sandbox::Policy::default());
    let missing =
        (files && !state.files) || (network && matches!(state.network, sandbox::Network::Open));
    if missing {
        eprintln!("skipped: this kernel lacks {}", state.missing().join(", "));
    }
    missing
}

/// Whether user namespaces can be made here (what keeps root's tests out of
/// stepwise's /proc entry).
fn user_namespaces() -> bool {
    Command::new("unshare")
        .args(["--user", "--net", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

pub(crate) fn output_of(result: &Value) -> &str {
    result["output"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn writes_outside_the_workspace_are_refused() {
    if kernel_lacks(true, false) {
        return;
    }
    let outside = std::env::temp_dir().join(format!("stepwise-escape-{}", std::process::id()));
    let body = format!(
        "import tempfile\n\
         print('TMP', tempfile.gettempdir())\n\
         open(os.path.join(tempfile.gettempdir(), 'scratch'), 'w').write('ok')\n\
         for p in [os.path.join(os.environ['HOME'], 'owned.txt'), {outside:?}]:\n\
         \x20   try:\n\
         \x20       open(p, 'w').write('x')\n\
         \x20       print('WROTE', p)\n\
         \x20   except OSError as e:\n\
         \x20       print('REFUSED', p, e.errno)\n\
         open('inside.txt', 'w').write('fine')\n",
        outside = outside.display().to_string()
    );
    let s = setup(&body, "");
    let (_out, result) = run(&s).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["sandbox"], "sandboxed", "{result}");
    assert_eq!(output.matches("REFUSED").count(), 2, "{output}");
    assert!(!output.contains("WROTE"), "{output}");
    assert!(!s.home.path().join("owned.txt").exists());
    assert!(!outside.exists());
    assert!(s.ws.path().join("inside.txt").exists());
    // The private temporary folder was writable, and is gone after the run.
    let tmp = output
        .lines()
        .find_map(|l| l.split("TMP ").nth(1))
        .map(|rest| PathBuf::from(rest.split_whitespace().next().unwrap_or_default()))
        .unwrap();
    assert_ne!(tmp, std::env::temp_dir(), "{output}");
    assert!(!tmp.exists(), "{} was left behind", tmp.display());
}

#[tokio::test]
async fn secrets_and_stepwise_environment_are_unreadable() {
    if kernel_lacks(true, false) {
        return;
    }
    let body = "for p in [os.path.join(os.environ['HOME'], '.ssh', 'id_ed25519'), '/proc/%d/environ' % os.getppid()]:\n\
        \x20   try:\n\
        \x20       print('READ', p, open(p, 'rb').read())\n\
        \x20   except OSError as e:\n\
        \x20       print('REFUSED', p, e.errno)\n\
        print('ENV', sorted(os.environ))\n\
        print('uid=%d' % os.geteuid())\n";
    let s = setup(body, "");
    let ssh = s.home.path().join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_ed25519"), "PRIVATE-KEY-MATERIAL").unwrap();
    let (_out, result) = run(&s).await;
    let output = output_of(&result);
    let root = output.contains("uid=0");
    if root && !user_namespaces() {
        eprintln!(
            "not checked: /proc/<stepwise>/environ, which root reads without a user namespace"
        );
    } else {
        assert_eq!(output.matches("REFUSED").count(), 2, "{output}");
    }
    assert!(
        output.contains("REFUSED") && !output.contains("PRIVATE-KEY-MATERIAL"),
        "{output}"
    );
    // The key's value would be scrubbed from the output anyway, so look for
    // its name in the environment list and for the scrubber's marker.
    assert!(!output.contains("'OPENAI_API_KEY'"), "{output}");
    assert!(
        !output.contains("sk-canary") && !output.contains("[redacted by stepwise]"),
        "{output}"
    );
    assert!(!output.contains("SENTRY_DSN"), "{output}");
    assert!(
        output.contains("'HOME'") && output.contains("'PATH'"),
        "{output}"
    );
}

#[tokio::test]
async fn the_network_is_cut_off() {
    if kernel_lacks(false, true) {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let body = format!(
        "import socket\n\
         try:\n\
         \x20   socket.create_connection(('127.0.0.1', {port}), timeout=3).sendall(b'leak')\n\
         \x20   print('CONNECTED')\n\
         except OSError as e:\n\
         \x20   print('REFUSED', e)\n"
    );
    let s = setup(&body, "");
    let (_out, result) = run(&s).await;
    let output = output_of(&result);
    assert!(output.contains("REFUSED"), "{output}");
    assert!(!output.contains("CONNECTED"), "{output}");
    assert!(listener.accept().is_err(), "the listener saw a connection");
}

/// A grandchild that leaves the run's session (and, with `unshare`, its
/// namespaces) and keeps appending to a file in the workspace: the file
/// must stop growing once the result is sent.
async fn grandchild_stops_with_the_run(unshare: &str) {
    let body = format!(
        "import ctypes, time\n\
         pid = os.fork()\n\
         if pid == 0:\n\
         \x20   os.setsid()\n\
         \x20   if os.fork() == 0:\n\
         \x20       {unshare}\n\
         \x20       while True:\n\
         \x20           with open('beat.txt', 'a') as f: f.write('.')\n\
         \x20           time.sleep(0.01)\n\
         \x20   os._exit(0)\n\
         os.waitpid(pid, 0)\n\
         while not os.path.exists('beat.txt'): time.sleep(0.01)\n"
    );
    let s = setup(&body, "");
    let (_out, result) = run(&s).await;
    assert_eq!(result["success"], true, "{result}");
    let beat = s.ws.path().join("beat.txt");
    let before = std::fs::metadata(&beat).unwrap().len();
    std::thread::sleep(std::time::Duration::from_millis(400));
    let after = std::fs::metadata(&beat).unwrap().len();
    assert_eq!(before, after, "a grandchild kept writing after the run");
}

#[tokio::test]
async fn a_setsid_grandchild_does_not_outlive_the_run() {
    grandchild_stops_with_the_run("pass").await;
}

/// Escape: a grandchild in a new user and network namespace was not found
/// by the reaper (it looks for the run's network namespace).
#[tokio::test]
async fn a_grandchild_in_new_namespaces_does_not_outlive_the_run() {
    if kernel_lacks(true, true) {
        return;
    }
    let state = sandbox::state(&sandbox::Policy::default());
    if !state.processes {
        eprintln!("skipped: this kernel lacks {}", state.missing().join(", "));
        return;
    }
    // CLONE_NEWUSER | CLONE_NEWNET; whether it works or not, the loop runs.
    grandchild_stops_with_the_run(
        "print('UNSHARE', ctypes.CDLL(None, use_errno=True).unshare(0x10000000 | 0x40000000))",
    )
    .await;
}

async fn stopped_by(body: &str, config: &str, limit: &str) -> Value {
    let s = setup(body, config);
    let (_out, result) = run(&s).await;
    assert_eq!(result["success"], false, "{result}");
    let named = result["limit"].as_str().unwrap_or_default();
    assert!(named.contains(limit), "{result}");
    assert!(
        result["error"].as_str().unwrap_or_default().contains(limit),
        "{result}"
    );
    result
}

#[tokio::test]
async fn memory_beyond_the_limit_is_refused_and_named() {
    stopped_by(
        "b = bytearray(4 * 1024 ** 3)\n",
        "[sandbox]\nmemory_mb = 512\n",
        "memory limit",
    )
    .await;
}

/// Whether this process may make a child group with memory and process
/// limits (cgroup v2 with both controllers delegated, or v1's hierarchies),
/// found out here without stepwise's code.
pub(crate) fn machine_offers_run_groups() -> bool {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let path_of = |name: &str| {
        own.lines().find_map(|l| {
            let mut p = l.splitn(3, ':');
            let (_, names, path) = (p.next()?, p.next()?, p.next()?);
            (names == name || names.split(',').any(|n| n == name && !name.is_empty()))
                .then(|| path.trim_start_matches('/').to_string())
        })
    };
    let can_make = |dir: PathBuf| {
        let probe = dir.join(format!("test-probe-{}", std::process::id()));
        std::fs::create_dir(&probe).is_ok() && std::fs::remove_dir(&probe).is_ok()
    };
    let root = Path::new("/sys/fs/cgroup");
    let v2 = path_of("").map(|p| root.join(p)).filter(|dir| {
        let c = std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
        c.contains("memory") && c.contains("pids")
    });
    if let Some(dir) = v2 {
        return can_make(dir);
    }
    match (path_of("memory"), path_of("pids")) {
        (Some(m), Some(p)) => {
            can_make(root.join("memory").join(m)) && can_make(root.join("pids").join(p))
        }
        _ => false,
    }
}

/// The tool result of a run of `body` under `config`, where this machine
/// gives runs a control group (`None`, said, elsewhere: the per-process
/// limits are all there is, and a limit named says so).
async fn run_where_groups_are_made(body: &str, config: &str) -> Option<Value> {
    let s = setup(body, config);
    let (_out, result) = run(&s).await;
    let probe = stepwise::tools::sandbox::state(&sandbox::Policy::default());
    if probe.off || probe.landlock_abi == 0 || !machine_offers_run_groups() {
        eprintln!("skipped: no control group for runs on this machine: {result}");
        return None;
    }
    Some(result)
}

/// Escape: four processes, each under the per-process limit, used a
/// gigabyte between them. A control group bounds the whole run.
#[tokio::test]
async fn memory_is_bounded_for_the_whole_run_where_a_control_group_can_be_made() {
    // Each child touches 120 MiB (well under its 256 MiB per process).
    let body = "import time\n\
        kids = []\n\
        for _ in range(4):\n\
        \x20   pid = os.fork()\n\
        \x20   if pid == 0:\n\
        \x20       b = b'x' * (120 * 1024 * 1024)\n\
        \x20       time.sleep(3); os._exit(0)\n\
        \x20   kids.append(pid)\n\
        codes = [os.waitpid(k, 0)[1] for k in kids]\n\
        self.assertEqual(codes, [0, 0, 0, 0])\n";
    let Some(result) = run_where_groups_are_made(body, "[sandbox]\nmemory_mb = 256\n").await else {
        return;
    };
    assert_eq!(result["success"], false, "{result}");
    let named = result["limit"].as_str().unwrap_or_default();
    assert!(named.contains("256 MiB for the whole run"), "{result}");
}

/// The run's group counts threads too: a runner refused a thread is told
/// which limit refused it, as measured (not from its own words).
#[tokio::test]
async fn threads_refused_by_the_whole_run_limit_name_it() {
    let body = "import threading, time\n\
        ts = [threading.Thread(target=time.sleep, args=(2,)) for _ in range(100)]\n\
        for t in ts:\n\
        \x20   t.start()\n";
    let Some(result) = run_where_groups_are_made(body, "[sandbox]\nprocesses = 40\n").await else {
        return;
    };
    assert_eq!(result["success"], false, "{result}");
    let named = result["limit"].as_str().unwrap_or_default();
    assert_eq!(
        named, "process limit (40 processes and threads at once in the whole run)",
        "{result}"
    );
}

#[tokio::test]
async fn a_10_gib_file_stops_at_the_file_size_limit() {
    let s_body = "chunk = b'x' * (1024 * 1024)\n\
        with open('big.bin', 'wb') as f:\n\
        \x20   for _ in range(10 * 1024):\n\
        \x20       f.write(chunk)\n";
    stopped_by(s_body, "[sandbox]\nfile_size_mb = 8\n", "file size limit").await;
}

/// Escape: many files, each under the file size limit, filled the disk.
/// The run as a whole is bounded, in the workspace and its temporary
/// folder alike.
#[tokio::test]
async fn many_small_files_stop_at_the_disk_limit_for_the_whole_run() {
    let body = "import tempfile, time\n\
        chunk = b'x' * (1024 * 1024)\n\
        os.makedirs('fill', exist_ok=True)\n\
        for i in range(400):\n\
        \x20   where = 'fill' if i % 2 else tempfile.gettempdir()\n\
        \x20   with open(os.path.join(where, f'f{i}'), 'wb') as f:\n\
        \x20       f.write(chunk)\n\
        \x20   time.sleep(0.01)\n\
        print('WROTE ALL')\n";
    let config = "[sandbox]\nfile_size_mb = 8\ndisk_mb = 32\n";
    let s = setup(body, config);
    let (_out, result) = run(&s).await;
    let probe = stepwise::tools::sandbox::state(&sandbox::Policy::default());
    if probe.off {
        eprintln!("skipped: no sandbox here: {result}");
        return;
    }
    assert_eq!(result["success"], false, "{result}");
    let named = result["limit"].as_str().unwrap_or_default();
    assert!(named.contains("disk limit (32 MiB"), "{result}");
    assert!(!output_of(&result).contains("WROTE ALL"), "{result}");
    let written = std::fs::read_dir(s.ws.path().join("fill")).map_or(0, |d| d.count());
    assert!(written < 100, "{written} files of 1 MiB in the workspace");
}

#[tokio::test]
async fn forking_10000_processes_stops_at_the_process_limit() {
    let body = "import time\n\
        for _ in range(10000):\n\
        \x20   try:\n\
        \x20       if os.fork() == 0:\n\
        \x20           time.sleep(60); os._exit(0)\n\
        \x20   except OSError:\n\
        \x20       time.sleep(0.01)\n\
        time.sleep(60)\n";
    let result = stopped_by(body, "[sandbox]\nprocesses = 40\n", "process limit").await;
    assert!(
        result["summary"].is_null() || !result.to_string().contains("timed out"),
        "{result}"
    );
}

#[tokio::test]
async fn a_normal_suite_passes_and_the_receipt_says_sandboxed() {
    let s = Setup {
        ws: copy_workspace(),
        home: tempfile::tempdir().unwrap(),
    };
    let (out, result) = run(&s).await;
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["sandbox"], "sandboxed");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("run    sandboxed"), "{stdout}");
    // The transcript records the state with the approval and the result.
    let sessions = s.ws.path().join(".stepwise/sessions");
    let transcript = transcript_text(&sessions);
    assert!(
        transcript.contains("\"sandbox\":\"sandboxed\""),
        "{transcript}"
    );
}

#[tokio::test]
async fn a_pytest_suite_passes_inside_the_sandbox() {
    if !pytest_available() {
        eprintln!("skipped: pytest is not installed here");
        return;
    }
    let s = Setup {
        ws: copy_workspace(),
        home: tempfile::tempdir().unwrap(),
    };
    let (_out, result) = run_with(&s, "pytest").await;
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["sandbox"], "sandboxed");
    assert!(output_of(&result).contains("passed"), "{result}");
}

fn transcript_text(dir: &Path) -> String {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn test_env_adds_exactly_the_names_it_lists() {
    let body = "print('SEEN', sorted(k for k in os.environ if k.endswith('_URL')))\n";
    let s = setup(body, "test_env = [\"FIXTURE_URL\"]\n");
    let (_out, result) = run(&s).await;
    assert!(
        output_of(&result).contains("SEEN ['FIXTURE_URL']"),
        "{result}"
    );
}

#[tokio::test]
async fn require_runs_where_isolation_is_complete() {
    let state = sandbox::state(&sandbox::Policy::default());
    if !state.complete() {
        eprintln!("skipped: this kernel lacks {}", state.missing().join(", "));
        return;
    }
    let s = setup("pass\n", "[sandbox]\nmode = \"require\"\n");
    let (out, result) = run(&s).await;
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["sandbox"], "sandboxed");
    assert_eq!(out.status.code(), Some(0));
}

#[tokio::test]
async fn mode_off_runs_unconfined_and_says_so() {
    let body = "open(os.path.join(os.environ['HOME'], 'owned.txt'), 'w').write('x')\n";
    let s = setup(body, "[sandbox]\nmode = \"off\"\n");
    let (_out, result) = run(&s).await;
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["sandbox"], "not sandboxed");
    assert!(s.home.path().join("owned.txt").exists());
}
