//! `run_tests`: a fixed allowlist of test commands run as argument arrays (never
//! a shell) in the workspace root, in their own process group, with a timeout,
//! the sandbox's minimal environment and confinement (`sandbox`), bounded output capture and prompt cancellation.
//! A run ends as a typed `TestRun` (exit code, passed, timed out, summary);
//! the JSON the model reads is built from it, never parsed back.

use super::ToolOutput;
use super::sandbox::{self, Policy};
pub use super::test_run::TestRun;
use super::test_run::exit_text;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

/// Characters of combined output returned to the model.
pub const OUTPUT_TAIL_CHARS: usize = 12_000;
/// Bytes kept while reading (a little more than the tail, for UTF-8 safety).
const KEEP_BYTES: usize = OUTPUT_TAIL_CHARS * 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TestRunner {
    Pytest,
    Unittest,
}

impl TestRunner {
    pub fn parse(command: &str) -> Result<Self, String> {
        match command.trim() {
            "pytest" => Ok(TestRunner::Pytest),
            "unittest" => Ok(TestRunner::Unittest),
            other => Err(format!(
                "run_tests command {other:?} is not allowed; use \"pytest\" or \"unittest\""
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TestRunner::Pytest => "pytest",
            TestRunner::Unittest => "unittest",
        }
    }

    /// The full argument array, program first.
    pub fn argv(self, python: &str) -> Vec<String> {
        let args: &[&str] = match self {
            TestRunner::Pytest => &["-m", "pytest", "-q"],
            TestRunner::Unittest => &["-m", "unittest", "discover", "-v"],
        };
        std::iter::once(python)
            .chain(args.iter().copied())
            .map(str::to_string)
            .collect()
    }
}

/// `STEPWISE_PYTHON`, else `python3` on PATH, else `python`.
pub fn resolve_python() -> String {
    if let Some(p) = std::env::var("STEPWISE_PYTHON")
        .ok()
        .filter(|p| !p.trim().is_empty())
    {
        return p;
    }
    if find_on_path("python3").is_some() {
        "python3".into()
    } else {
        "python".into()
    }
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Keeps only the last `KEEP_BYTES` of everything written to it.
#[derive(Default)]
struct Tail {
    bytes: Vec<u8>,
    total: u64,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        self.bytes.extend_from_slice(chunk);
        if self.bytes.len() > KEEP_BYTES * 2 {
            let cut = self.bytes.len() - KEEP_BYTES;
            self.bytes.drain(..cut);
        }
    }

    fn text(&self) -> String {
        let text = String::from_utf8_lossy(&self.bytes);
        let count = text.chars().count();
        if count <= OUTPUT_TAIL_CHARS && self.total as usize == self.bytes.len() {
            return text.into_owned();
        }
        let skip = count.saturating_sub(OUTPUT_TAIL_CHARS);
        format!(
            "[… earlier output cut …]\n{}",
            text.chars().skip(skip).collect::<String>()
        )
    }
}

async fn pump(mut reader: impl AsyncRead + Unpin, tail: Arc<Mutex<Tail>>) {
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if let Ok(mut t) = tail.lock() {
                    t.push(&buf[..n]);
                }
            }
        }
    }
}

fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

enum Ending {
    Exited(Option<std::process::ExitStatus>),
    TimedOut,
    Cancelled,
    /// More processes than the sandbox's process limit.
    TooManyProcesses,
}

/// Run the tests under the default sandbox policy and return the tool result.
pub async fn run_tests(
    root: &Path,
    runner: TestRunner,
    timeout: Duration,
    cancel: &CancellationToken,
) -> ToolOutput {
    run_tests_with(root, runner, timeout, cancel, &Policy::default()).await
}

/// Run the tests under `policy` and return the tool result (see [`run_with`]).
pub async fn run_tests_with(
    root: &Path,
    runner: TestRunner,
    timeout: Duration,
    cancel: &CancellationToken,
    policy: &Policy,
) -> ToolOutput {
    match run_with(root, runner, timeout, cancel, policy).await {
        Ok(run) => run.to_output(),
        Err(problem) => ToolOutput::error(problem),
    }
}

/// [`run_with`] under the default sandbox policy.
pub async fn run(
    root: &Path,
    runner: TestRunner,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<TestRun, String> {
    run_with(root, runner, timeout, cancel, &Policy::default()).await
}

/// Run the tests under `policy`. Cancellation, the timeout and the end of
/// the run kill every process the run started. `Err`: the tests could not
/// start (or the sandbox refused them) or were interrupted (a message for
/// the model).
pub async fn run_with(
    root: &Path,
    runner: TestRunner,
    timeout: Duration,
    cancel: &CancellationToken,
    policy: &Policy,
) -> Result<TestRun, String> {
    let python = resolve_python();
    let argv = runner.argv(&python);
    let shown = argv.join(" ");
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // The environment (an allowlist), the temporary folder and the confinement.
    let mut confined = sandbox::prepare(&mut command, root, policy)?;
    command.env("PYTHONDONTWRITEBYTECODE", "1");
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Err(format!(
                "could not start `{shown}` ({}): {e}; set STEPWISE_PYTHON to the Python interpreter to use",
                confined.state.label()
            ));
        }
    };
    let pid = child.id();
    confined.started(pid);
    let tail = Arc::new(Mutex::new(Tail::default()));
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|r| tokio::spawn(pump(r, tail.clone()))),
        child
            .stderr
            .take()
            .map(|r| tokio::spawn(pump(r, tail.clone()))),
    ]
    .into_iter()
    .flatten()
    .collect();

    let ending = tokio::select! {
        status = child.wait() => Ending::Exited(status.ok()),
        _ = tokio::time::sleep(timeout) => Ending::TimedOut,
        _ = cancel.cancelled() => Ending::Cancelled,
        _ = confined.over_process_limit() => Ending::TooManyProcesses,
    };
    // Whatever happened, nothing the tests started may outlive the run: a
    // leftover child would also hold the output pipes open.
    kill_group(pid);
    let _ = child.wait().await;
    confined.kill_all();
    for reader in readers {
        let _ = tokio::time::timeout(Duration::from_secs(2), reader).await;
    }
    let output = tail.lock().map(|t| t.text()).unwrap_or_default();

    finish(runner, ending, output, &confined, shown, timeout.as_secs())
}

/// The typed run from how it ended and what it printed.
fn finish(
    runner: TestRunner,
    ending: Ending,
    output: String,
    confined: &sandbox::Confined,
    shown: String,
    timeout_secs: u64,
) -> Result<TestRun, String> {
    let (status, timed_out) = match ending {
        Ending::Cancelled => return Err(format!("`{shown}` was interrupted by the user")),
        Ending::TimedOut => (None, true),
        Ending::Exited(status) => (status, false),
        Ending::TooManyProcesses => (None, false),
    };
    let exit_code = status.and_then(|s| s.code());
    let limit = match ending {
        Ending::TooManyProcesses => Some(confined.describe(sandbox::Limit::Processes)),
        _ if exit_code == Some(0) || timed_out => None,
        _ => sandbox::limits::detect(exit_signal(status), &output).map(|(limit, evidence)| {
            let text = confined.describe(limit);
            match evidence {
                sandbox::Evidence::Measured => text,
                sandbox::Evidence::Reported => format!("{text}, as the test output reports"),
            }
        }),
    };
    let summary = if timed_out {
        format!("timed out after {timeout_secs}s")
    } else if let Some(limit) = &limit {
        format!("stopped by the {limit}")
    } else {
        summarize(runner, &output).unwrap_or_else(|| format!("exit {}", exit_text(exit_code)))
    };
    Ok(TestRun {
        command: shown,
        exit_code,
        passed: !timed_out && limit.is_none() && exit_code == Some(0),
        timed_out,
        summary,
        output,
        timeout_secs,
        sandbox: confined.state.label(),
        limit,
    })
}

fn exit_signal(status: Option<std::process::ExitStatus>) -> Option<i32> {
    #[cfg(unix)]
    {
        std::os::unix::process::ExitStatusExt::signal(&status?)
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        None
    }
}

/// The runner's own summary line, e.g. `4 passed` or `Ran 4 tests: OK`.
pub fn summarize(runner: TestRunner, output: &str) -> Option<String> {
    match runner {
        TestRunner::Pytest => output
            .lines()
            .rev()
            .map(|l| l.trim().trim_matches('='))
            .map(str::trim)
            .find(|l| {
                l.contains(" passed")
                    || l.contains(" failed")
                    || l.contains(" error")
                    || l.starts_with("no tests ran")
            })
            .map(|l| l.split(" in ").next().unwrap_or(l).to_string()),
        TestRunner::Unittest => {
            let ran = output.lines().rev().find(|l| l.starts_with("Ran "))?;
            let count = ran.split_whitespace().nth(1)?;
            let verdict = output
                .lines()
                .rev()
                .find(|l| l.starts_with("OK") || l.starts_with("FAILED"))
                .unwrap_or("");
            Some(
                format!("{count} tests {}", verdict.trim())
                    .trim()
                    .to_string(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_is_fixed_and_never_a_shell() {
        assert_eq!(
            TestRunner::Pytest.argv("python3"),
            ["python3", "-m", "pytest", "-q"]
        );
        assert_eq!(
            TestRunner::Unittest.argv("py"),
            ["py", "-m", "unittest", "discover", "-v"]
        );
    }

    #[test]
    fn summaries_come_from_the_runner_output() {
        assert_eq!(
            summarize(
                TestRunner::Pytest,
                "..F.\n=== 1 failed, 3 passed in 0.02s ===\n"
            )
            .as_deref(),
            Some("1 failed, 3 passed")
        );
        assert_eq!(
            summarize(TestRunner::Pytest, "....\n4 passed in 0.01s\n").as_deref(),
            Some("4 passed")
        );
        assert_eq!(
            summarize(
                TestRunner::Unittest,
                "test_add ... ok\n----\nRan 4 tests in 0.001s\n\nOK\n"
            )
            .as_deref(),
            Some("4 tests OK")
        );
        assert_eq!(
            summarize(
                TestRunner::Unittest,
                "Ran 2 tests in 0.001s\n\nFAILED (failures=1)\n"
            )
            .as_deref(),
            Some("2 tests FAILED (failures=1)")
        );
    }

    #[test]
    fn tail_keeps_only_the_end_of_endless_output() {
        let mut tail = Tail::default();
        for i in 0..10_000 {
            tail.push(format!("line {i}\n").as_bytes());
        }
        assert!(tail.bytes.len() <= KEEP_BYTES * 2);
        let text = tail.text();
        assert!(text.starts_with("[… earlier output cut …]"));
        assert!(text.ends_with("line 9999\n"));
        assert!(text.chars().count() <= OUTPUT_TAIL_CHARS + 30);
    }
}
