//! The pseudo-terminal harness of the end-to-end UI tests: the real
//! `stepwise` binary in a pty of 120x40, its output parsed by `vt100`, keys
//! written to it, and checks that the terminal was restored at exit. Every
//! wait polls the parsed screen until a deadline, never a fixed sleep.
//! Part of the shared test support (`tests/support/`), as `support::pty`.
#![allow(dead_code)]

use super::stepwise_bin;
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ROWS: NonZeroU16 = NonZeroU16::new(40).expect("nonzero");
const COLS: NonZeroU16 = NonZeroU16::new(120).expect("nonzero");
const DEADLINE: Duration = Duration::from_secs(20);
/// What an approval prompt shows while it still ignores keys.
const ARMING_MARK: &str = "arming…";
/// What the prompt bar says while the user counts as typing.
const WAITING_MARK: &str = "prompt waiting";
/// What every approval prompt's question ends with.
const PROMPT_MARK: &str = "[y/N]";
/// How long a reader takes at a prompt: past its arming and the typing second.
const READING: Duration = Duration::from_millis(1100);
pub const TASK: &str =
    "Add a divide function to calculator.py that raises ValueError on zero, with tests.";

pub struct Tui {
    pub parser: Arc<Mutex<vt100::Parser>>,
    pub raw: Arc<Mutex<Vec<u8>>>,
    pub writer: Box<dyn Write + Send>,
    pub child: Box<dyn Child + Send + Sync>,
    pub master: Box<dyn MasterPty + Send>,
    _log: tempfile::TempDir,
}

impl Tui {
    pub fn start(base_url: &str, workspace: &Path) -> Tui {
        let workspace = workspace.to_string_lossy();
        Tui::start_with(&["--base-url", base_url, "--workspace", &workspace], &[])
    }

    /// Start the binary with these arguments and extra environment variables.
    pub fn start_with(args: &[&str], envs: &[(&str, &Path)]) -> Tui {
        Tui::start_sized(args, envs, (ROWS, COLS))
    }

    /// `start_with` in a terminal of `(rows, cols)`.
    pub fn start_sized(
        args: &[&str],
        envs: &[(&str, &Path)],
        (rows, cols): (NonZeroU16, NonZeroU16),
    ) -> Tui {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: rows.get(),
                cols: cols.get(),
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let log = tempfile::tempdir().expect("log dir");
        let mut cmd = CommandBuilder::new(stepwise_bin());
        cmd.args(args);
        // Hermetic: no key, URL, model or editor from the environment, no `.env` from the repo.
        for var in [
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "STEPWISE_MODEL",
            "STEPWISE_PROVIDER",
            "ANTHROPIC_API_KEY",
            "OPENROUTER_API_KEY",
            "GROQ_API_KEY",
            "DEEPSEEK_API_KEY",
            "GEMINI_API_KEY",
            "VISUAL",
            "EDITOR",
        ] {
            cmd.env_remove(var);
        }
        for (name, value) in envs {
            cmd.env(name, value);
        }
        cmd.env("TERM", "xterm-256color");
        cmd.env("STEPWISE_LOG", log.path().join("tui.log"));
        cmd.cwd(log.path());
        let child = pty.slave.spawn_command(cmd).expect("spawn stepwise");
        drop(pty.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
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

    pub fn screen(&self) -> String {
        self.parser
            .lock()
            .map(|p| p.screen().contents())
            .unwrap_or_default()
    }

    /// Poll the parsed screen until it shows `needle` and no approval
    /// prompt is still arming or waiting for the user to stop typing (its
    /// keys would not answer it yet). Once it does, wait until the screen holds still for a
    /// moment, so a frame that arrived in several reads is seen whole.
    pub async fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle)
                && !screen.contains(ARMING_MARK)
                && !screen.contains(WAITING_MARK)
            {
                let screen = self.settled(screen).await;
                if !screen.contains(PROMPT_MARK) {
                    return screen;
                }
                // A prompt: read it as a person would, so that neither its
                // arming nor the typing second can still be running in a
                // frame that arrived late on a loaded machine.
                tokio::time::sleep(READING).await;
                return self.screen();
            }
            if start.elapsed() > DEADLINE {
                panic!("timed out waiting for {needle:?}; the screen shows:\n{screen}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The screen once two polls 50 ms apart agree (or the deadline passed).
    async fn settled(&self, mut screen: String) -> String {
        let start = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let now = self.screen();
            if now == screen || start.elapsed() > DEADLINE {
                return now;
            }
            screen = now;
        }
    }

    /// Poll the parsed screen until it no longer shows `needle`.
    pub async fn wait_gone(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if !screen.contains(needle) {
                return screen;
            }
            if start.elapsed() > DEADLINE {
                panic!("timed out waiting for {needle:?} to go; the screen shows:\n{screen}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn send(&mut self, bytes: &str) {
        self.writer
            .write_all(bytes.as_bytes())
            .expect("write to pty");
        self.writer.flush().expect("flush pty");
    }

    /// Wait for the process to end; returns its exit code.
    pub async fn exit_code(&mut self) -> u32 {
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
    pub fn assert_restored(&self) {
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

pub fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).expect("read workspace file")
}
