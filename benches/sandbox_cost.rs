//! The sandbox's cost per test run: a no-op test command (`unittest` on a
//! workspace with one empty test) run with `[sandbox] mode = "off"` and with
//! `auto`, the median of 21 runs each (interleaved), and the difference.
//! Each run includes what `run_tests` does around it (the workspace
//! snapshots and the searches for planted files); the one-time probe of the
//! kernel is timed apart. The two modes differ in more than confinement
//! there: with `off`, Python is pointed at the run's temporary folder for
//! its bytecode (`PYTHONPYCACHEPREFIX`, so it compiles its whole library
//! on every run), while the sandbox covers the workspace's `__pycache__`
//! folders instead and Python keeps its compiled library: `auto` is the
//! faster of the two. Python's start-up also makes that figure noisy
//! (±40 ms between runs on a shared machine), so the same difference is
//! also measured on `true` run through `run_tests`'s own path (`run_with`),
//! median of 101: the sandbox's own cost per run, namespaces, mounts,
//! rules, the watch and the clean-up included, without the runner's noise.
//! `STEPWISE_PYTHON` picks the interpreter, as for `run_tests`.
//! Run with `cargo bench --bench sandbox_cost`. The target: under 20 ms.

// A benchmark may panic on what it sets up itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};
use stepwise::tools::Workspace;
use stepwise::tools::sandbox::{Policy, SandboxMode, plants, prepare, state};
use stepwise::tools::snapshot::Snapshot;
use stepwise::tools::test_runner::run_with;
use stepwise::tools::test_runner::{TestCommand, TestCommands};
use stepwise::tools::test_summary::SummaryKind;
use tokio_util::sync::CancellationToken;

const RUNS: usize = 21;
/// Runs of `true` per mode.
const TRUE_RUNS: usize = 101;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The workspace's `unittest` command, as `run_tests` would find it.
fn unittest(root: &std::path::Path) -> TestCommand {
    let ws = Workspace::open(root).unwrap();
    TestCommands::detect(&ws, &[])
        .get("unittest")
        .cloned()
        .unwrap()
}

async fn once(root: &std::path::Path, policy: &Policy) -> Duration {
    let command = unittest(root);
    let ws = Workspace::open(root).unwrap();
    let started = Instant::now();
    // What `run_tests` does around the run: the snapshots and plant searches.
    let before = Snapshot::take(&ws);
    let plants = plants::find(root, false);
    let run = run_with(
        root,
        &command,
        Duration::from_secs(60),
        &CancellationToken::new(),
        policy,
    )
    .await
    .unwrap();
    let after = Snapshot::take_after(&ws, Some(&before));
    assert!(before.changes_to(&after).is_empty());
    assert!(
        plants
            .planted_since(&plants::find(root, false), root)
            .is_empty()
    );
    let elapsed = started.elapsed();
    assert!(run.passed, "{}", run.output);
    elapsed
}

/// Both modes, interleaved so that load from elsewhere hits them alike.
async fn measure(root: &std::path::Path, off: &Policy, auto: &Policy) -> (Duration, Duration) {
    // One warm-up run each (the sandbox probes the kernel once per process).
    once(root, off).await;
    once(root, auto).await;
    let (mut a, mut b) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for _ in 0..RUNS {
        a.push(once(root, off).await);
        b.push(once(root, auto).await);
    }
    (median(a), median(b))
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("test_noop.py"),
        "import unittest\nclass T(unittest.TestCase):\n    def test_noop(self):\n        pass\n",
    )
    .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let off = Policy {
        mode: SandboxMode::Off,
        ..Policy::default()
    };
    let auto = Policy::default();
    let started = Instant::now();
    let label = state(&auto).label();
    let probe = started.elapsed();
    runtime.block_on(async {
        let (off_time, auto_time) = measure(dir.path(), &off, &auto).await;
        let diff = auto_time.as_secs_f64() - off_time.as_secs_f64();
        println!("no-op unittest run, median of {RUNS}:");
        println!("  mode = \"off\":  {:.1} ms", off_time.as_secs_f64() * 1e3);
        println!(
            "  mode = \"auto\": {:.1} ms ({})",
            auto_time.as_secs_f64() * 1e3,
            state(&auto).label()
        );
        println!("  sandbox cost:  {:+.1} ms", diff * 1e3);
        println!(
            "  the one-time probe of the kernel ({label}): {:.2} ms",
            probe.as_secs_f64() * 1e3
        );
        let setup = median(
            (0..RUNS)
                .map(|_| {
                    let mut command = tokio::process::Command::new("true");
                    let started = Instant::now();
                    let confined = prepare(&mut command, dir.path(), &auto).unwrap();
                    let elapsed = started.elapsed();
                    drop(confined);
                    elapsed
                })
                .collect(),
        );
        println!(
            "  of which building the rules (before fork): {:.2} ms",
            setup.as_secs_f64() * 1e3
        );
        let truly = TestCommand {
            name: "true".into(),
            argv: vec!["true".into()],
            kind: SummaryKind::Unknown,
        };
        let time = |policy: &Policy| {
            let (root, truly) = (dir.path(), &truly);
            let policy = policy.clone();
            async move {
                let started = Instant::now();
                let cancel = CancellationToken::new();
                let run = run_with(root, truly, Duration::from_secs(60), &cancel, &policy)
                    .await
                    .unwrap();
                assert!(run.passed, "{}", run.output);
                started.elapsed()
            }
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..TRUE_RUNS {
            a.push(time(&off).await);
            b.push(time(&auto).await);
        }
        let (a, b) = (median(a), median(b));
        println!("`true` through run_tests, median of {TRUE_RUNS}:");
        println!("  mode = \"off\":  {:.2} ms", a.as_secs_f64() * 1e3);
        println!("  mode = \"auto\": {:.2} ms", b.as_secs_f64() * 1e3);
        println!(
            "  sandbox cost:  {:+.2} ms",
            (b.as_secs_f64() - a.as_secs_f64()) * 1e3
        );
    });
}
