//! `run_tests`: the workspace's test commands (see `test_commands`) run as
//! argument arrays (never a shell) in the workspace root, in their own
//! process group, with a timeout, the sandbox's minimal environment and
//! confinement (`sandbox`), bounded output capture and prompt cancellation. A run ends as a typed `TestRun` (exit
//! code, the verdict of `test_summary`, timed out); the JSON the model reads
//! is built from it, never parsed back.

use crate::tools::ToolOutput;
use crate::tools::sandbox::{self, Policy};
use crate::tools::testing::ansi;
pub use crate::tools::testing::test_commands::{TestCommand, TestCommands, resolve_python};
pub use crate::tools::testing::test_run::TestRun;
use crate::tools::testing::test_summary::{self, SummaryKind, Verified};
use std::path::Path;
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

/// Copy a stream into the combined tail and into its own one: the runner's
/// summary is read per stream, since the two interleave in the middle of lines.
async fn pump(mut reader: impl AsyncRead + Unpin, tail: Arc<Mutex<Tail>>, own: Arc<Mutex<Tail>>) {
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                for t in [&tail, &own] {
                    if let Ok(mut t) = t.lock() {
                        t.push(&buf[..n]);
                    }
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
    /// Past a limit stepwise watches (processes, disk).
    Limit(sandbox::Limit),
}

/// Run the tests under the default sandbox policy and return the tool result.
pub async fn run_tests(
    root: &Path,
    runner: &TestCommand,
    timeout: Duration,
    cancel: &CancellationToken,
) -> ToolOutput {
    run_tests_with(root, runner, timeout, cancel, &Policy::default()).await
}

/// Run the tests under `policy` and return the tool result (see [`run_with`]).
pub async fn run_tests_with(
    root: &Path,
    runner: &TestCommand,
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
    runner: &TestCommand,
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
    runner: &TestCommand,
    timeout: Duration,
    cancel: &CancellationToken,
    policy: &Policy,
) -> Result<TestRun, String> {
    let argv = &runner.argv;
    let shown = argv.join(" ");
    let Some(program) = argv.first() else {
        return Err(format!("test command {} is empty", runner.name));
    };
    let mut command = Command::new(program);
    command
        .args(&argv[1..])
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // The environment (an allowlist), the temporary folder, a session of its
    // own (which is also its own process group) and the confinement.
    let mut confined = sandbox::prepare(&mut command, root, policy)?;
    // No bytecode in the workspace: a `.pyc` there after a run is a plant
    // (see `sandbox::plants`). Where the sandbox covers the workspace's
    // `__pycache__` folders, Python keeps its own compiled library; else it
    // is pointed at the run's temporary folder for all of its bytecode.
    command.env("PYTHONDONTWRITEBYTECODE", "1");
    if confined.covers_pycache() {
        // One from the user's environment would lead Python past the covers.
        command.env_remove("PYTHONPYCACHEPREFIX");
    } else {
        command.env("PYTHONPYCACHEPREFIX", confined.run_tmp().join("pycache"));
    }
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            let hint = match runner.kind {
                SummaryKind::Pytest | SummaryKind::Unittest => {
                    "; set STEPWISE_PYTHON to the Python interpreter to use"
                }
                _ => "",
            };
            let state = confined.state.label();
            return Err(format!("could not start `{shown}` ({state}): {e}{hint}"));
        }
    };
    let pid = child.id();
    confined.started(pid);
    let tail = Arc::new(Mutex::new(Tail::default()));
    let (out_tail, err_tail) = (Arc::default(), Arc::default());
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|r| tokio::spawn(pump(r, tail.clone(), Arc::clone(&out_tail)))),
        child
            .stderr
            .take()
            .map(|r| tokio::spawn(pump(r, tail.clone(), Arc::clone(&err_tail)))),
    ]
    .into_iter()
    .flatten()
    .collect();

    let ending = tokio::select! {
        status = child.wait() => Ending::Exited(status.ok()),
        _ = tokio::time::sleep(timeout) => Ending::TimedOut,
        _ = cancel.cancelled() => Ending::Cancelled,
        limit = confined.over_limit() => Ending::Limit(limit),
    };
    // Whatever happened, nothing the tests started may outlive the run: a
    // leftover child would also hold the output pipes open.
    kill_group(pid);
    confined.kill_all().await;
    let _ = child.wait().await;
    for reader in readers {
        let _ = tokio::time::timeout(Duration::from_secs(2), reader).await;
    }
    let output = tail.lock().map(|t| t.text()).unwrap_or_default();
    let text_of = |t: &Arc<Mutex<Tail>>| t.lock().map(|t| t.text()).unwrap_or_default();
    let per_stream = format!("{}\n{}", text_of(&out_tail), text_of(&err_tail));

    let mut run = finish(
        runner, ending, output, per_stream, &confined, shown, timeout,
    )?;
    // Read what the run wrote before its temporary folder (and the layer
    // in it) goes: every process of the run is gone by now.
    if let (Some(plan), Some(upper)) = (confined.layer(), confined.layer_upper()) {
        let lower = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let read =
            upper.and_then(|u| crate::tools::layer::read(&u, &lower).map_err(|e| e.to_string()));
        let (entries, error) = match read {
            Ok(entries) => (entries, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        run.layer = Some(crate::tools::testing::test_run::LayerRun {
            entries,
            build_outputs: plan
                .build
                .as_ref()
                .map(|b| b.outputs.clone())
                .unwrap_or_default(),
            error,
        });
    }
    Ok(run)
}

/// The typed run from how it ended and what it printed.
fn finish(
    runner: &TestCommand,
    ending: Ending,
    output: String,
    per_stream: String,
    confined: &sandbox::Confined,
    shown: String,
    timeout: Duration,
) -> Result<TestRun, String> {
    let timeout_secs = timeout.as_secs();
    // Runners colour their output (some even into a pipe): the model, the
    // summary's parser and the transcript read it without any escape; the
    // user may see its colours.
    let coloured = ansi::keep_colours(&output);
    let output = ansi::strip(&output);
    let coloured_output = (coloured != output).then_some(coloured);
    let per_stream = ansi::strip(&per_stream);
    let (status, timed_out) = match ending {
        Ending::Cancelled => return Err(format!("`{shown}` was interrupted by the user")),
        Ending::TimedOut => (None, true),
        Ending::Exited(status) => (status, false),
        Ending::Limit(_) => (None, false),
    };
    let exit_code = status.and_then(|s| s.code());
    let limit = match ending {
        Ending::Limit(limit) => Some(confined.describe(limit)),
        _ if exit_code == Some(0) || timed_out => None,
        // The run's control group ran out: the kernel's OOM kill, counted.
        _ if confined.out_of_memory() => Some(confined.describe(sandbox::Limit::Memory)),
        // Its own disk is full: the kernel refused its writes at the budget.
        _ if confined.disk_full() => Some(confined.describe(sandbox::Limit::Disk)),
        // Its process limit refused a fork or a thread: counted too.
        _ if confined.pids_refused() => Some(confined.describe(sandbox::Limit::Processes)),
        _ => sandbox::limits::detect(exit_signal(status), &output).map(|(limit, evidence)| {
            let text = confined.describe(limit);
            match evidence {
                sandbox::Evidence::Measured => text,
                sandbox::Evidence::Reported => format!("{text}, as the test output reports"),
            }
        }),
    };
    let stopped = |summary: String| test_summary::Verdict {
        passed: false,
        verified: Verified::ExitCodeOnly,
        summary,
        counts: None,
    };
    let verdict = if timed_out {
        stopped(format!("timed out after {timeout_secs}s"))
    } else if let Some(limit) = &limit {
        stopped(format!("stopped by the {limit}"))
    } else {
        test_summary::judge(runner.kind, exit_code, &per_stream)
    };
    let notes = match verdict.passed {
        true => Vec::new(),
        false => confined.cache_note(&output).into_iter().collect(),
    };
    Ok(TestRun {
        notes,
        command: shown,
        exit_code,
        passed: verdict.passed,
        timed_out,
        summary: verdict.summary,
        verified: verdict.verified,
        counts: verdict.counts,
        output,
        coloured_output,
        timeout_secs,
        changed_files: Vec::new(),
        sandbox: confined.state.label(),
        limit,
        layer: None,
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

#[cfg(test)]
mod tests {
    use super::*;

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
