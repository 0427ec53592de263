//! The sandbox's cost per test run: a no-op test command (`unittest` on a
//! workspace with one empty test) run with `[sandbox] mode = "off"` and with
//! `auto`, the median of 21 runs each (interleaved), and the difference.
//! Each run includes what `run_tests` does around it: with the workspace
//! layer, reading and sorting what the run wrote; without one (`off`), the
//! workspace snapshots and the searches for planted files. The one-time
//! probe of the kernel is timed apart. Last, the layer's cost as the
//! workspace grows: a run that writes one file, in an empty workspace and
//! in the 100,000-file tree of `file_tools`, from the start of the run to
//! its sorted changes (`STEPWISE_BENCH_TREE=DIR` keeps that tree in `DIR`). The two modes differ in more than confinement
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

#[path = "support/tree.rs"]
mod tree;

use std::time::{Duration, Instant};
use stepwise::tools::Workspace;
use stepwise::tools::layer::keep::{self, Sorted};
use stepwise::tools::layer::rules::Context;
use stepwise::tools::reading::snapshot::Snapshot;
use stepwise::tools::sandbox::{Policy, SandboxMode, layered, plants, prepare, state};
use stepwise::tools::testing::test_run::LayerRun;
use stepwise::tools::testing::test_runner::run_with;
use stepwise::tools::testing::test_runner::{TestCommand, TestCommands};
use stepwise::tools::testing::test_summary::SummaryKind;
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
    if layered(root, policy) {
        // What `run_tests` does around a run with a layer: read (in
        // `run_with`) and sort what it wrote.
        let mut run = run_with(
            root,
            &command,
            Duration::from_secs(60),
            &CancellationToken::new(),
            policy,
        )
        .await
        .unwrap();
        let layer = run.layer.take().unwrap();
        let sorted = sorted(&ws, root, &layer);
        let elapsed = started.elapsed();
        assert!(run.passed && sorted.is_empty(), "{}", run.output);
        return elapsed;
    }
    // Without one: the snapshots and plant searches.
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

/// What `run_tests` makes of a run's layer: its entries sorted by the rules.
fn sorted(ws: &Workspace, root: &std::path::Path, layer: &LayerRun) -> Sorted {
    let lower = std::fs::canonicalize(root).unwrap();
    let ctx = Context::new(&lower, ws.deny(), &layer.build_outputs, &layer.entries);
    keep::sort(ws, &ctx, &layer.entries)
}

/// A run that writes one report, from its start to its sorted changes.
async fn writes_one_file(root: &std::path::Path, policy: &Policy) -> Duration {
    let writer = TestCommand {
        name: "report".into(),
        argv: vec!["sh".into(), "-c".into(), "echo ok > report.txt".into()],
        kind: SummaryKind::Unknown,
    };
    let ws = Workspace::open(root).unwrap();
    let started = Instant::now();
    let cancel = CancellationToken::new();
    let mut run = run_with(root, &writer, Duration::from_secs(60), &cancel, policy)
        .await
        .unwrap();
    let layer = run.layer.take().unwrap();
    let sorted = sorted(&ws, root, &layer);
    let elapsed = started.elapsed();
    assert_eq!(sorted.data.diffs().len(), 1, "{}", run.output);
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
        if !layered(dir.path(), &auto) {
            println!(
                "no workspace layer here ({}): its cost is not measured",
                state(&auto).label()
            );
            return;
        }
        let kept = std::env::var_os("STEPWISE_BENCH_TREE").map(std::path::PathBuf::from);
        let big_tmp = tempfile::tempdir().unwrap();
        let big = kept.unwrap_or_else(|| big_tmp.path().to_path_buf());
        if !big.join(".generated").exists() {
            let files = tree::generate(&big, 10);
            std::fs::write(big.join(".generated"), "").unwrap();
            println!("{files} files generated in {}", big.display());
        }
        let empty = tempfile::tempdir().unwrap();
        writes_one_file(empty.path(), &auto).await;
        writes_one_file(&big, &auto).await;
        let (mut small, mut large) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            small.push(writes_one_file(empty.path(), &auto).await);
            large.push(writes_one_file(&big, &auto).await);
        }
        let (small, large) = (median(small), median(large));
        println!("a run that writes one file, start to sorted changes, median of {RUNS}:");
        println!(
            "  empty workspace:      {:.2} ms",
            small.as_secs_f64() * 1e3
        );
        println!(
            "  100,000-file tree:    {:.2} ms",
            large.as_secs_f64() * 1e3
        );
        println!(
            "  growth with the tree: {:+.2} ms",
            (large.as_secs_f64() - small.as_secs_f64()) * 1e3
        );
    });
}
