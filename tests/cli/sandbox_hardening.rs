//! The sandbox's third round of escapes, through the real binary, each the
//! way a supply-chain attack in a test suite would try it: the user's
//! terminal (with `exec` started in a pseudo-terminal, so there is one to
//! reach), other processes (their `/proc` entries, signals and limits),
//! SysV shared memory, the kernel keyring, vsock, the tool caches that
//! later, unsandboxed builds execute, hidden credentials, metadata outside
//! and other runs' temporary folders (plants in the workspace are in
//! `sandbox_plants`). Each test lets the mock model ask for an approved
//! `run_tests` of a test file that tries it.

use crate::sandbox::{Setup, exec_command, kernel_lacks, output_of, run, run_with_env, setup};
use crate::support::*;
use serde_json::{Value, json};
use std::io::Read;
use std::path::{Path, PathBuf};
use stepwise::tools::sandbox;

/// Skip (saying why) where the run would not get its own PID namespace.
fn lacks_pid_namespace() -> bool {
    let state = sandbox::state(&sandbox::Policy::default());
    if !state.processes {
        eprintln!("skipped: this kernel lacks {}", state.missing().join(", "));
        return true;
    }
    false
}

/// Skip (saying why) where the run would lack `part` of the sandbox.
pub(crate) fn lacks(part: fn(&sandbox::State) -> bool) -> bool {
    let state = sandbox::state(&sandbox::Policy::default());
    if !part(&state) {
        eprintln!("skipped: this kernel lacks {}", state.missing().join(", "));
        return true;
    }
    false
}

/// `exec --yes` in a pseudo-terminal of its own (its controlling terminal):
/// the combined terminal output and the tool result the model received.
async fn run_in_terminal(s: &Setup) -> (String, Value) {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    let model = MockModel::start(vec![
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done."),
    ])
    .await;
    let std_cmd = exec_command(s, &model.base_url());
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 200,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(std_cmd.get_program());
    cmd.args(std_cmd.get_args());
    for (name, value) in std_cmd.get_envs() {
        match value {
            Some(v) => cmd.env(name, v),
            None => cmd.env_remove(name),
        }
    }
    cmd.cwd(s.ws.path());
    let mut child = pty.slave.spawn_command(cmd).unwrap();
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().unwrap();
    let screen = tokio::task::spawn_blocking(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
        }
        all
    });
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    drop(pty.master);
    let screen = tokio::time::timeout(std::time::Duration::from_secs(10), screen)
        .await
        .map(|r| String::from_utf8_lossy(&r.unwrap()).into_owned())
        .unwrap_or_default();
    let requests = model.requests().await;
    assert!(requests.len() >= 2, "{status:?}\n{screen}");
    let tool = tool_messages(&requests[1]);
    let content = tool[0]["content"].as_str().unwrap_or_default();
    let result = serde_json::from_str(content).unwrap_or(Value::String(content.into()));
    (screen, result)
}

/// Escape: through `/dev/tty` and `TIOCSTI` a test typed a command into
/// the user's shell. Now the run has its own session without a terminal,
/// no terminal device can be opened, no descriptor of one is inherited,
/// and `TIOCSTI` is refused by the seccomp filter even on a descriptor.
#[tokio::test]
async fn a_test_cannot_reach_the_users_terminal() {
    if kernel_lacks(true, false) || lacks(|s| s.unix_sockets) {
        return;
    }
    let body = "import fcntl, termios\n\
        print('CTTY', open('/proc/self/stat').read().rsplit(')', 1)[1].split()[4])\n\
        for path in ['/dev/tty', '/dev/console'] + [os.path.join('/dev/pts', n) for n in ('0', '1', '2', '3')]:\n\
        \x20   try:\n\
        \x20       fd = os.open(path, os.O_RDWR | os.O_NOCTTY)\n\
        \x20       print('OPENED', path)\n\
        \x20       fcntl.ioctl(fd, termios.TIOCSTI, b'#')\n\
        \x20       print('TYPED', path)\n\
        \x20   except OSError as e:\n\
        \x20       print('REFUSED', path, e.errno)\n\
        print('TTY-FDS', [fd for fd in range(256) if os.isatty(fd)])\n\
        for fd in (0, 1, 2):\n\
        \x20   try:\n\
        \x20       fcntl.ioctl(fd, termios.TIOCSTI, b'#')\n\
        \x20       print('TYPED', fd)\n\
        \x20   except OSError as e:\n\
        \x20       print('TIOCSTI', fd, e.errno)\n\
        master, slave = os.openpty()\n\
        os.write(master, b'ping\\n')\n\
        print('OWN-PTY', os.read(slave, 64), termios.tcgetattr(slave)[3] & termios.ECHO != 0)\n\
        print('PTS', sorted(os.listdir('/dev/pts')))\n";
    let s = setup(body, "");
    let (screen, result) = run_in_terminal(&s).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}\n{screen}");
    // No controlling terminal (`tty_nr` 0 in /proc/self/stat).
    assert!(output.contains("CTTY 0\n"), "{output}");
    assert!(!output.contains("OPENED"), "{output}");
    assert!(!output.contains("TYPED"), "{output}");
    assert!(output.contains("REFUSED /dev/tty"), "{output}");
    assert!(output.contains("TTY-FDS []"), "{output}");
    // EPERM from the filter, not ENOTTY from the kernel (0 is /dev/null).
    for fd in 0..3 {
        assert!(output.contains(&format!("TIOCSTI {fd} 1\n")), "{output}");
    }
    // A pty of its own works (pexpect suites), in an instance where the
    // user's terminals do not exist: only the one it opened.
    assert!(output.contains("OWN-PTY b'ping\\n' True"), "{output}");
    if !lacks(|s| s.workspace) {
        assert!(output.contains("PTS ['0', 'ptmx']"), "{output}");
    }
}

/// The state is printed before the first test runs, not only
/// in the receipt.
#[tokio::test]
async fn exec_says_how_tests_are_confined_before_they_run() {
    let s = setup("print('RAN')\n", "");
    let (screen, result) = run_in_terminal(&s).await;
    assert!(output_of(&result).contains("RAN"), "{result}");
    let label = result["sandbox"].as_str().unwrap();
    let first = screen.find(&format!("tests  {label}"));
    let step = screen.find("[Step 1");
    assert!(
        matches!((first, step), (Some(a), Some(b)) if a < b),
        "{screen}"
    );
    // And which limits bound a run as a whole: per process only where no
    // control group can be made (found out here, not by stepwise's code).
    let limits = if super::sandbox::machine_offers_run_groups() {
        "limit  memory, processes and disk for the whole run"
    } else {
        "limit  disk for the whole run; memory and processes per process only"
    };
    let said = screen.find(limits);
    assert!(
        matches!((said, step), (Some(a), Some(b)) if a < b),
        "{screen}"
    );
}

/// Escape: other processes' command lines, signals and limits,
/// SysV shared memory and the session keyring, reached from a test.
#[tokio::test]
async fn other_processes_ipc_and_keyrings_are_out_of_reach() {
    if kernel_lacks(true, true) || lacks_pid_namespace() || lacks(|s| s.unix_sockets) {
        return;
    }
    // An unrelated process with a recognisable command line.
    let mut outside = std::process::Command::new("sleep")
        .arg("61.2345")
        .spawn()
        .unwrap();
    let pid = outside.id();
    // A SysV shared memory segment of the host.
    let key = 0x5357_0000 | (std::process::id() as i32 & 0xffff);
    // SAFETY: plain SysV calls on a segment this test owns.
    let shm = unsafe { libc::shmget(key, 4096, libc::IPC_CREAT | 0o600) };
    assert!(shm >= 0);
    let keyctl = libc::SYS_keyctl;
    let body = format!(
        "import ctypes, resource, signal, socket\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         seen = []\n\
         for p in os.listdir('/proc'):\n\
         \x20   if p.isdigit():\n\
         \x20       try: seen.append(open('/proc/%s/cmdline' % p, 'rb').read())\n\
         \x20       except OSError: pass\n\
         print('SEEN-OUTSIDE', any(b'61.2345' in c for c in seen))\n\
         print('PIDS', len(seen))\n\
         try:\n\
         \x20   resource.prlimit({pid}, resource.RLIMIT_FSIZE, (1, 1))\n\
         \x20   print('LIMITED')\n\
         except OSError as e:\n\
         \x20   print('PRLIMIT', e.errno)\n\
         try:\n\
         \x20   os.kill({pid}, signal.SIGKILL)\n\
         \x20   print('KILLED')\n\
         except OSError as e:\n\
         \x20   print('KILL', e.errno)\n\
         print('SHM', libc.shmget({key}, 0, 0))\n\
         r = libc.syscall({keyctl}, 0, -3, 0)\n\
         print('KEYRING', r, ctypes.get_errno())\n\
         try:\n\
         \x20   socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)\n\
         \x20   print('VSOCK open')\n\
         except OSError as e:\n\
         \x20   print('VSOCK', e.errno)\n"
    );
    let s = setup(&body, "");
    let (_out, result) = run(&s).await;
    let output = output_of(&result).to_string();
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap_or_default();
    let alive = outside.try_wait().unwrap().is_none();
    let _ = outside.kill();
    let _ = outside.wait();
    // SAFETY: removing the segment made above.
    unsafe { libc::shmctl(shm, libc::IPC_RMID, std::ptr::null_mut()) };
    assert_eq!(result["success"], true, "{result}");
    assert!(output.contains("SEEN-OUTSIDE False"), "{output}");
    // ESRCH: the pid does not exist in the run's namespace.
    assert!(output.contains("PRLIMIT 3"), "{output}");
    assert!(output.contains("KILL 3"), "{output}");
    assert!(alive, "the outside process was killed");
    let fsize = limits
        .lines()
        .find(|l| l.starts_with("Max file size"))
        .unwrap_or_default()
        .to_string();
    assert!(fsize.contains("unlimited"), "{limits}");
    assert!(output.contains("SHM -1"), "{output}");
    assert!(output.contains("KEYRING -1 1\n"), "{output}");
    assert!(output.contains("VSOCK 1\n"), "{output}");
}

/// Code caches in the test's home, each holding a file later programs run.
const CACHED_CODE: &[&str] = &[
    ".cargo/registry/src/index.crates.io-0000/evil-1.0.0/build.rs",
    ".cargo/git/checkouts/dep-0000/abc/src/lib.rs",
    ".cache/pip/wheels/ab/six-1.16.0-py2.py3-none-any.whl",
    ".npm/_npx/0000/node_modules/cowsay/index.js",
    "go/pkg/mod/example.com/m@v1.0.0/m.go",
];

/// Escape: a test rewrote a crate under `~/.cargo/registry/src` and a
/// later, unsandboxed build ran it; pip, npx and go caches likewise. Now
/// they are read-only. Build outputs are writable, but in the workspace's
/// own build layer: a `CARGO_TARGET_DIR` or `GOCACHE` the user's
/// environment names (shared with other projects and the user's own
/// builds, which Go trusts) gets nothing from the run.
#[tokio::test]
async fn code_caches_are_read_only_and_build_outputs_writable() {
    if kernel_lacks(true, false) {
        return;
    }
    let body = "home = os.environ['HOME']\n\
        for rel in CACHED:\n\
        \x20   p = os.path.join(home, rel)\n\
        \x20   for what, f in [('append', lambda: open(p, 'a').write('\\nplanted()\\n')),\n\
        \x20                   ('create', lambda: open(os.path.join(os.path.dirname(p), 'new.py'), 'w').write('x'))]:\n\
        \x20       try:\n\
        \x20           f()\n\
        \x20           print('WROTE', what, rel)\n\
        \x20       except OSError as e:\n\
        \x20           print('REFUSED', what, e.errno)\n\
        for var in ['CARGO_TARGET_DIR', 'GOCACHE']:\n\
        \x20   open(os.path.join(os.environ[var], 'out.o'), 'w').write('built')\n\
        \x20   print('BUILT', var)\n"
        .replace(
            "CACHED",
            &format!("{CACHED_CODE:?}"),
        );
    let s = setup(&body, "");
    let home = s.home.path();
    for rel in CACHED_CODE {
        let path = home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "original\n").unwrap();
    }
    // Neither exists yet, nor does their parent.
    let target = home.join("ci/target");
    let gocache = home.join("ci/go-build");
    let (_, result) = run_with_env(
        &s,
        "unittest",
        &[("CARGO_TARGET_DIR", &target), ("GOCACHE", &gocache)],
    )
    .await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    assert!(!output.contains("WROTE"), "{output}");
    assert_eq!(
        output.matches("REFUSED").count(),
        2 * CACHED_CODE.len(),
        "{output}"
    );
    for rel in CACHED_CODE {
        let path = home.join(rel);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "original\n",
            "{rel}"
        );
        assert!(!path.with_file_name("new.py").exists(), "{rel}");
    }
    assert!(output.contains("BUILT CARGO_TARGET_DIR") && output.contains("BUILT GOCACHE"));
    if lacks(|s| s.layer) {
        assert!(target.join("out.o").is_file() && gocache.join("out.o").is_file());
        return;
    }
    assert!(!target.join("out.o").exists() && !gocache.join("out.o").exists());
    let layers: Vec<_> = std::fs::read_dir(home.join(".cache/stepwise/build"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(layers.len(), 1, "{layers:?}");
    for built in ["cargo-target/out.o", "go-build/out.o"] {
        assert!(layers[0].join(built).is_file(), "{built}");
    }
}

/// A run that needs to fill a cache fails with a message saying what to
/// run outside stepwise.
#[tokio::test]
async fn a_run_that_fills_a_cache_is_told_what_to_run_outside() {
    if kernel_lacks(true, false) {
        return;
    }
    let body = "d = os.path.join(os.environ['HOME'], '.cargo', 'registry', 'cache')\n\
        open(os.path.join(d, 'serde-1.0.0.crate'), 'wb').write(b'downloaded')\n";
    let s = setup(body, "");
    std::fs::create_dir_all(s.home.path().join(".cargo/registry/cache")).unwrap();
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    assert_eq!(result["success"], false, "{result}");
    let notes = result["sandbox_notes"].to_string();
    assert!(
        notes.contains("read-only") && notes.contains("`cargo fetch`"),
        "{result}"
    );
    let error = result["error"].as_str().unwrap_or_default();
    assert!(error.contains("cargo fetch"), "{result}");
}

/// Escape: tests read `~/.git-credentials`, `~/.npmrc`, Cargo, Docker,
/// Kube and Codex credentials and shell history.
#[tokio::test]
async fn common_credential_files_and_histories_are_hidden() {
    if kernel_lacks(true, false) {
        return;
    }
    const SECRETS: &[&str] = &[
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".cargo/credentials.toml",
        ".docker/config.json",
        ".kube/config",
        ".config/gcloud/credentials.db",
        ".azure/msal_token_cache.json",
        ".codex/auth.json",
        ".claude/.credentials.json",
        ".bash_history",
        ".zsh_history",
    ];
    // A file next to a hidden one stays readable.
    let s = planted_secrets(SECRETS, ".cargo/config.toml");
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    assert_read_only_beside(&result, SECRETS.len());
}

/// A setup whose test tries to read each of `secrets` (canaries written
/// under its home, base64-encoded when printed) and then `beside` (`[net]`).
fn planted_secrets(secrets: &[&str], beside: &str) -> Setup {
    let body = format!(
        "import base64\n\
         for rel in {secrets:?}:\n\
         \x20   try:\n\
         \x20       with open(os.path.join(os.environ['HOME'], rel), 'rb') as f:\n\
         \x20           data = f.read()\n\
         \x20       print('READ', base64.b64encode(data)) if data else print('REFUSED empty')\n\
         \x20   except OSError as e:\n\
         \x20       print('REFUSED', e.errno)\n\
         print('BESIDE', open(os.path.join(os.environ['HOME'], '{beside}')).read().strip())\n"
    );
    let s = setup(&body, "");
    for rel in secrets {
        let path = s.home.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "canary-credential-4242").unwrap();
    }
    let beside = s.home.path().join(beside);
    std::fs::create_dir_all(beside.parent().unwrap()).unwrap();
    std::fs::write(beside, "[net]").unwrap();
    s
}

/// Every one of the `hidden` reads was refused (by Landlock, or as missing
/// or empty where `HOME`'s cover is), the file beside them read.
fn assert_read_only_beside(result: &Value, hidden: usize) {
    let output = output_of(result);
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(output.matches("REFUSED").count(), hidden, "{output}");
    assert!(!output.contains("READ"), "{output}");
    assert!(output.contains("BESIDE [net]"), "{output}");
}

/// Escape: the environment moved the credentials (`DOCKER_CONFIG`,
/// `KUBECONFIG`, `CARGO_HOME`, `XDG_CONFIG_HOME`) and a hidden list of
/// `~/` paths missed them. They are hidden where the variables say.
#[tokio::test]
async fn credentials_where_the_environment_puts_them_are_hidden() {
    if kernel_lacks(true, false) {
        return;
    }
    const SECRETS: &[&str] = &[
        "elsewhere/docker/config.json",
        "clusters/one.yaml",
        "clusters/two.yaml",
        "cargo-home/credentials.toml",
        "xdg/gh/hosts.yml",
    ];
    let s = planted_secrets(SECRETS, "cargo-home/config.toml");
    let home = s.home.path();
    let kube = std::env::join_paths([
        home.join("clusters/one.yaml"),
        home.join("clusters/two.yaml"),
    ])
    .unwrap();
    let kube = PathBuf::from(kube);
    let (docker, cargo, xdg) = (
        home.join("elsewhere/docker"),
        home.join("cargo-home"),
        home.join("xdg"),
    );
    let envs: &[(&str, &Path)] = &[
        ("DOCKER_CONFIG", &docker),
        ("KUBECONFIG", &kube),
        ("CARGO_HOME", &cargo),
        ("XDG_CONFIG_HOME", &xdg),
    ];
    let (_, result) = run_with_env(&s, "unittest", envs).await;
    assert_read_only_beside(&result, SECRETS.len());
}

/// A hostile `cargo test` crate: its test appends to a crate's `build.rs`
/// in the registry and plants a git checkout; `CARGO_TARGET_DIR` names a
/// folder that does not exist yet.
#[tokio::test]
async fn a_hostile_cargo_suite_cannot_plant_code_in_the_registry() {
    if kernel_lacks(true, false) {
        return;
    }
    if std::process::Command::new("cargo")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: cargo is not on PATH");
        return;
    }
    let s = setup("pass\n", "");
    let ws = s.ws.path();
    std::fs::remove_file(ws.join("test_escape.py")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"hostile\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(
        ws.join("src/lib.rs"),
        "#[cfg(test)]\nmod tests {\n\
         use std::io::Write;\n\
         #[test]\n\
         fn plants() {\n\
         let home = std::env::var(\"CARGO_HOME\").unwrap();\n\
         let build = format!(\"{home}/registry/src/index.crates.io-0000/evil-1.0.0/build.rs\");\n\
         let appended = std::fs::OpenOptions::new().append(true).open(&build)\n\
         .and_then(|mut f| f.write_all(b\"\\nfn planted() {}\\n\"));\n\
         assert!(appended.is_err(), \"appended to {build}\");\n\
         let git = format!(\"{home}/git/checkouts/planted.rs\");\n\
         assert!(std::fs::write(&git, \"x\").is_err(), \"wrote {git}\");\n\
         }\n}\n",
    )
    .unwrap();
    let cargo_home = s.home.path().join(".cargo");
    let build = cargo_home.join("registry/src/index.crates.io-0000/evil-1.0.0/build.rs");
    std::fs::create_dir_all(build.parent().unwrap()).unwrap();
    std::fs::create_dir_all(cargo_home.join("git/checkouts")).unwrap();
    std::fs::write(&build, "fn main() {}\n").unwrap();
    let real_home = std::path::PathBuf::from(std::env::var("HOME").unwrap());
    let rustup = std::env::var_os("RUSTUP_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| real_home.join(".rustup"));
    let target = s.home.path().join("fresh-ci/target");
    let (_, result) = run_with_env(
        &s,
        "cargo",
        &[
            ("CARGO_HOME", &cargo_home),
            ("RUSTUP_HOME", &rustup),
            ("CARGO_TARGET_DIR", &target),
        ],
    )
    .await;
    assert_eq!(result["success"], true, "{result}");
    assert!(
        result["summary"]
            .as_str()
            .unwrap_or_default()
            .contains("1 passed"),
        "{result}"
    );
    assert_eq!(std::fs::read_to_string(&build).unwrap(), "fn main() {}\n");
    assert!(!cargo_home.join("git/checkouts/planted.rs").exists());
    assert!(target.is_dir());
}

/// Escape: tests read other runs' temporary folders (a concurrent
/// session's fixtures, its bytecode, its secrets).
#[tokio::test]
async fn other_runs_temporary_folders_are_hidden() {
    if kernel_lacks(true, false) {
        return;
    }
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let runs = std::env::temp_dir().join(format!("stepwise-runs-{uid}"));
    std::fs::create_dir_all(&runs).unwrap();
    let other = tempfile::Builder::new()
        .prefix("run-")
        .tempdir_in(&runs)
        .unwrap();
    std::fs::write(other.path().join("fixture.txt"), "other-run-secret").unwrap();
    let body = format!(
        "import tempfile\n\
         open(os.path.join(tempfile.gettempdir(), 'mine'), 'w').write('ok')\n\
         print('MINE', open(os.path.join(tempfile.gettempdir(), 'mine')).read())\n\
         try:\n\
         \x20   print('READ', open({:?}).read())\n\
         except OSError as e:\n\
         \x20   print('REFUSED', e.errno)\n\
         try:\n\
         \x20   print('LISTED', os.listdir({:?}))\n\
         except OSError as e:\n\
         \x20   print('UNLISTED', e.errno)\n",
        other.path().join("fixture.txt").display().to_string(),
        runs.display().to_string(),
    );
    let s = setup(&body, "");
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    assert!(output.contains("MINE ok"), "{output}");
    assert!(output.contains("REFUSED 13"), "{output}");
    assert!(output.contains("UNLISTED 13"), "{output}");
    assert!(!output.contains("other-run-secret"), "{output}");
}

/// Escape: `chmod`, `utime` and xattrs worked outside the workspace,
/// hidden files included (`~/.ssh/id_rsa` 0600 → 0644). Inside, they work.
#[tokio::test]
async fn metadata_outside_the_writable_folders_cannot_change() {
    if kernel_lacks(true, false) {
        return;
    }
    let state = sandbox::state(&sandbox::Policy::default());
    if !state.metadata {
        eprintln!("skipped: this kernel lacks {}", state.missing().join(", "));
        return;
    }
    let body = "home = os.environ['HOME']\n\
        for p in [os.path.join(home, '.ssh', 'id_rsa'), os.path.join(home, 'notes.txt')]:\n\
        \x20   for what, f in [('chmod', lambda: os.chmod(p, 0o644)),\n\
        \x20                   ('utime', lambda: os.utime(p, (0, 0))),\n\
        \x20                   ('xattr', lambda: os.setxattr(p, 'user.planted', b'1'))]:\n\
        \x20       try:\n\
        \x20           f()\n\
        \x20           print('CHANGED', what, p)\n\
        \x20       except OSError as e:\n\
        \x20           print('REFUSED', what, e.errno)\n\
        open('mine.txt', 'w').write('x')\n\
        os.chmod('mine.txt', 0o600)\n\
        os.utime('mine.txt', (0, 0))\n\
        print('INSIDE', oct(os.stat('mine.txt').st_mode & 0o777), os.stat('mine.txt').st_mtime)\n";
    let s = setup(body, "");
    use std::os::unix::fs::PermissionsExt;
    let ssh = s.home.path().join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let key = ssh.join("id_rsa");
    let notes = s.home.path().join("notes.txt");
    for p in [&key, &notes] {
        std::fs::write(p, "x").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let mtime = |p: &std::path::Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let (key_time, notes_time) = (mtime(&key), mtime(&notes));
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    assert!(!output.contains("CHANGED"), "{output}");
    // EROFS: the read-only view.
    assert_eq!(output.matches("REFUSED").count(), 6, "{output}");
    assert!(output.contains("INSIDE 0o600 0.0"), "{output}");
    for p in [&key, &notes] {
        let mode = std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", p.display());
    }
    assert_eq!(mtime(&key), key_time);
    assert_eq!(mtime(&notes), notes_time);
}

/// Escape: a test left folders of mode 000 in its temporary folder (so it
/// was never removed), and links there for stepwise's clean-up to follow
/// out of it. The folder is removed; nothing outside it changes.
#[tokio::test]
async fn a_runs_temporary_folder_is_removed_whatever_the_run_left_in_it() {
    use std::os::unix::fs::PermissionsExt;
    let body = "t = os.environ['TMPDIR']\n\
        print('TEMP', t)\n\
        os.makedirs(os.path.join(t, 'a', 'b'))\n\
        os.chmod(os.path.join(t, 'a'), 0)\n\
        os.makedirs(os.path.join(t, 'layers', '0'))\n\
        os.symlink(os.path.join(os.environ['HOME'], 'modules'), os.path.join(t, 'layers', '0', 'work'))\n\
        os.symlink(os.environ['HOME'], os.path.join(t, 'home'))\n";
    let s = setup(body, "");
    let modules = s.home.path().join("modules");
    std::fs::create_dir_all(modules.join("pkg")).unwrap();
    for dir in [&modules.join("pkg"), &modules] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    // The line may follow unittest's own words on the same line.
    let temp = output
        .lines()
        .find_map(|l| Some(&l[l.find("TEMP /")? + 5..]))
        .expect("the test printed its folder");
    assert!(!Path::new(temp).exists(), "{temp} was left behind");
    for dir in [&modules, &modules.join("pkg")] {
        let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o555, "{}", dir.display());
    }
    std::fs::set_permissions(&modules, std::fs::Permissions::from_mode(0o755)).unwrap();
}
