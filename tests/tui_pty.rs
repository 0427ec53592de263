//! End to end through a pseudo-terminal: the real `stepwise` binary in
//! full-screen mode against the mock model server, on a temp copy of the
//! sample workspace. The screen is parsed with `vt100`; every wait polls the
//! parsed screen until a deadline, never a fixed sleep.

mod common;

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ROWS: NonZeroU16 = NonZeroU16::new(40).expect("nonzero");
const COLS: NonZeroU16 = NonZeroU16::new(120).expect("nonzero");
const DEADLINE: Duration = Duration::from_secs(20);
const TASK: &str =
    "Add a divide function to calculator.py that raises ValueError on zero, with tests.";

struct Tui {
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    master: Box<dyn MasterPty + Send>,
    _log: tempfile::TempDir,
}

impl Tui {
    fn start(base_url: &str, workspace: &Path) -> Tui {
        let workspace = workspace.to_string_lossy();
        Tui::start_with(&["--base-url", base_url, "--workspace", &workspace], &[])
    }

    /// Start the binary with these arguments and extra environment variables.
    fn start_with(args: &[&str], envs: &[(&str, &Path)]) -> Tui {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: ROWS.get(),
                cols: COLS.get(),
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let log = tempfile::tempdir().expect("log dir");
        let mut cmd = CommandBuilder::new(common::stepwise_bin());
        cmd.args(args);
        for (name, value) in envs {
            cmd.env(name, value);
        }
        // Hermetic: no key, URL or model from the environment, no `.env` from the repo.
        for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "STEPWISE_MODEL"] {
            cmd.env_remove(var);
        }
        cmd.env("TERM", "xterm-256color");
        cmd.env("STEPWISE_LOG", log.path().join("tui.log"));
        cmd.cwd(log.path());
        let child = pty.slave.spawn_command(cmd).expect("spawn stepwise");
        drop(pty.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pty.master.try_clone_reader().expect("pty reader");
        let (p, r) = (parser.clone(), raw.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut p) = p.lock() {
                    p.process(&buf[..n]);
                }
                if let Ok(mut r) = r.lock() {
                    r.extend_from_slice(&buf[..n]);
                }
            }
        });
        let writer = pty.master.take_writer().expect("pty writer");
        Tui {
            parser,
            raw,
            writer,
            child,
            master: pty.master,
            _log: log,
        }
    }

    fn screen(&self) -> String {
        self.parser
            .lock()
            .map(|p| p.screen().contents())
            .unwrap_or_default()
    }

    /// Poll the parsed screen until it shows `needle`.
    async fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            if start.elapsed() > DEADLINE {
                panic!("timed out waiting for {needle:?}; the screen shows:\n{screen}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn send(&mut self, bytes: &str) {
        self.writer
            .write_all(bytes.as_bytes())
            .expect("write to pty");
        self.writer.flush().expect("flush pty");
    }

    /// Wait for the process to end; returns its exit code.
    async fn exit_code(&mut self) -> u32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                // Let the reader thread take the last bytes.
                let len = || self.raw.lock().map(|r| r.len()).unwrap_or(0);
                let mut last = len();
                loop {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    let now = len();
                    if now == last {
                        break;
                    }
                    last = now;
                }
                return status.exit_code();
            }
            if start.elapsed() > DEADLINE {
                let _ = self.child.kill();
                panic!(
                    "stepwise did not exit; the screen shows:\n{}",
                    self.screen()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// After exit: the terminal is back to normal.
    fn assert_restored(&self) {
        let parser = self.parser.lock().expect("parser");
        let screen = parser.screen();
        assert!(!screen.alternate_screen(), "left the alternate screen");
        assert_eq!(
            screen.mouse_protocol_mode(),
            vt100::MouseProtocolMode::None,
            "mouse capture off"
        );
        assert!(!screen.bracketed_paste(), "bracketed paste off");
        assert!(!screen.hide_cursor(), "cursor shown again");
        let raw = self.raw.lock().expect("raw");
        let text = String::from_utf8_lossy(&raw);
        let entered = text
            .rfind("\x1b[?1049h")
            .expect("entered the alternate screen");
        let left = text
            .rfind("\x1b[?1049l")
            .expect("left the alternate screen");
        assert!(left > entered);
        let termios = self.master.get_termios().expect("termios of the pty");
        let flags = format!("{:?}", termios.local_flags);
        assert!(
            flags.contains("ICANON") && flags.contains("ECHO"),
            "raw mode undone: {flags}"
        );
    }
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).expect("read workspace file")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_every_step_edits_the_files_and_passes_the_tests() {
    let mock = common::MockModel::start(common::seed_script("unittest")).await;
    let ws = common::copy_workspace();
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send(TASK);
    tui.wait_for("Add a divide function").await;
    tui.send("\r");

    let screen = tui.wait_for("Step 4 · Write calculator.py").await;
    assert!(screen.contains("[y/N]"), "{screen}");
    assert!(
        screen.contains("+def divide(a, b):"),
        "the diff is on screen:\n{screen}"
    );
    assert!(screen.contains("Diff · calculator.py"), "{screen}");
    tui.send("y");
    tui.wait_for("Step 5 · Write test_calculator.py").await;
    tui.send("y");
    tui.wait_for("Step 6 · Write test_calculator.py").await;
    tui.send("y");
    let screen = tui.wait_for("Step 7 · Run ").await;
    assert!(screen.contains("unittest"), "{screen}");
    tui.send("y");
    let screen = tui.wait_for("Done in 8 steps").await;
    assert!(
        screen.contains("tests OK"),
        "the test run's summary is shown:\n{screen}"
    );
    assert!(screen.contains("✓ done"), "{screen}");

    let calculator = String::from_utf8(read(ws.path(), "calculator.py")).expect("utf-8");
    assert!(calculator.contains("def divide(a, b):"), "{calculator}");
    let tests = String::from_utf8(read(ws.path(), "test_calculator.py")).expect("utf-8");
    assert!(tests.contains("class TestDivide"), "{tests}");
    let run = std::process::Command::new("python3")
        .args(["-m", "unittest", "discover"])
        .current_dir(ws.path())
        .output()
        .expect("run python3");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let tool_results = common::tool_messages(mock.requests().await.last().expect("requests"));
    assert!(
        tool_results
            .last()
            .is_some_and(|m| m["content"].to_string().contains("OK"))
    );

    tui.send("\x04"); // Ctrl+D on an empty input quits.
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declining_the_write_leaves_the_file_byte_identical() {
    let mock = common::MockModel::start(common::seed_script("unittest")).await;
    let ws = common::copy_workspace();
    let before_calc = read(ws.path(), "calculator.py");
    let before_tests = read(ws.path(), "test_calculator.py");
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send(TASK);
    tui.wait_for("Add a divide function").await;
    tui.send("\r");
    tui.wait_for("Step 4 · Write calculator.py").await;
    tui.send("n");
    // The model goes on with its next step; the declined one is marked.
    let screen = tui.wait_for("Step 5 · Write test_calculator.py").await;
    assert!(screen.contains("⊘"), "declined glyph shown:\n{screen}");
    let requests = mock.requests().await;
    let declined = common::tool_messages(requests.last().expect("a request after the decline"));
    assert!(
        declined
            .last()
            .is_some_and(|m| m["content"].to_string().contains("declined")),
        "the model was told: {declined:?}"
    );
    // Quitting with a prompt open declines it too.
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
    assert_eq!(
        read(ws.path(), "calculator.py"),
        before_calc,
        "calculator.py untouched"
    );
    assert_eq!(
        read(ws.path(), "test_calculator.py"),
        before_tests,
        "test file untouched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_and_sighup_restore_the_terminal() {
    for (signal, code) in [("TERM", 143), ("HUP", 129)] {
        let mock = common::MockModel::start(common::seed_script("unittest")).await;
        let ws = common::copy_workspace();
        let mut tui = Tui::start(&mock.base_url(), ws.path());
        tui.wait_for("Type a task").await;
        tui.send(TASK);
        tui.send("\r");
        tui.wait_for("Step 4 · Write calculator.py").await;
        let pid = tui.child.process_id().expect("pid");
        let killed = std::process::Command::new("kill")
            .args([format!("-{signal}"), pid.to_string()])
            .status()
            .expect("run kill");
        assert!(killed.success());
        assert_eq!(tui.exit_code().await, code, "SIG{signal}");
        tui.assert_restored();
        assert_eq!(
            read(ws.path(), "calculator.py"),
            read(&common::sample_workspace(), "calculator.py"),
            "the pending write was declined"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_and_endpoint_errors_show_inside_the_ui() {
    // No key for a remote server: the app still opens and says what to do.
    let ws = common::copy_workspace();
    let mut tui = Tui::start("https://api.openai.com/v1", ws.path());
    let screen = tui.wait_for("OPENAI_API_KEY is not set").await;
    assert!(screen.contains(".env"), "{screen}");
    // The first screen says exactly what to do next.
    assert!(screen.contains("OPENAI_API_KEY=sk-"), "{screen}");
    assert!(screen.contains("stepwise --demo"), "{screen}");
    assert!(screen.contains("http://localhost:11434/v1"), "{screen}");
    tui.send("do something\r");
    tui.wait_for("Cannot run the task").await;
    tui.send("\x15\x04"); // Ctrl+U clears the input, Ctrl+D quits.
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();

    // A 401 from the server is a message in the conversation, not a crash.
    let mock =
        common::MockModel::start(vec![common::error(401, "Incorrect API key provided")]).await;
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send("hello\r");
    let screen = tui.wait_for("HTTP 401").await;
    assert!(screen.contains("HTTP 401: Incorrect API"), "{screen}");
    tui.wait_for("Stopped by an error").await;
    tui.send("\x03"); // Ctrl+C when idle quits.
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_runs_on_a_copy_with_y_at_every_prompt() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let repo_ws = common::sample_workspace();
    let before: Vec<Vec<u8>> = ["calculator.py", "test_calculator.py"]
        .iter()
        .map(|f| read(&repo_ws, f))
        .collect();
    let repo_ws_arg = repo_ws.to_string_lossy().into_owned();
    let mut tui = Tui::start_with(
        &["--demo", "--workspace", &repo_ws_arg],
        &[("TMPDIR", tmp.path())],
    );
    let screen = tui.wait_for("scripted demo model").await;
    assert!(
        screen.contains("demo (scripted)"),
        "the header says so:\n{screen}"
    );
    // The task is pre-filled: Enter starts it.
    tui.wait_for("Add divide(a, b)").await;
    tui.send("\r");
    for prompt in ["Step 4 · ", "Step 5 · ", "Step 6 · ", "Step 7 · Run"] {
        tui.wait_for(prompt).await;
        tui.send("y");
    }
    let screen = tui.wait_for("Done in 8 steps").await;
    assert!(screen.contains("6 tests OK"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
    // The copy in the temp dir has the change; the repo's workspace does not.
    let copy = std::fs::read_dir(tmp.path())
        .expect("temp dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("stepwise-demo-"))
        })
        .expect("the demo copy");
    let calculator = String::from_utf8(read(&copy, "calculator.py")).expect("utf-8");
    assert!(calculator.contains("def divide(a, b):"));
    let after: Vec<Vec<u8>> = ["calculator.py", "test_calculator.py"]
        .iter()
        .map(|f| read(&repo_ws, f))
        .collect();
    assert_eq!(before, after, "the repo's workspace is untouched");
}
