//! Benchmark of `list_files` and `search_text` on a big tree: 100,000 small
//! text files in 1,110 folders (10 x 10 x 10, 100 files each), generated in
//! a temporary folder. Run with `cargo bench --bench file_tools`; prints the
//! median time of each tool over several runs (the first, cold run aside).
//! Targets: `list_files` under 50 ms, `search_text` under 300 ms. Also the
//! test-run snapshot of a 10,000-file tree: the first one of a session
//! (every file read) and a later one (nothing changed, nothing read).
//!
//! Creating 100,000 files can take a minute on a busy file system; with
//! `FILE_TOOLS_TREE=DIR` the big tree is generated into `DIR` once and
//! reused by later runs (delete `DIR` to start again).

// A benchmark may panic on what it sets up itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};
use stepwise::tools::Workspace;
use stepwise::tools::reading::files::list_files;
use stepwise::tools::reading::search::{SearchArgs, search_text};
use stepwise::tools::reading::snapshot::Snapshot;

#[path = "support/tree.rs"]
mod tree;
use tree::{FILES_PER_FOLDER, generate};

const RUNS: usize = 11;

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn time(what: &str, mut run: impl FnMut()) {
    run(); // cold run: fills the page cache
    let runs: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed()
        })
        .collect();
    println!(
        "{what:<12} median {:>7.1} ms  (min {:.1} ms, max {:.1} ms, {RUNS} runs)",
        median(runs.clone()).as_secs_f64() * 1e3,
        runs.iter().min().unwrap().as_secs_f64() * 1e3,
        runs.iter().max().unwrap().as_secs_f64() * 1e3,
    );
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let kept = std::env::var_os("FILE_TOOLS_TREE").map(std::path::PathBuf::from);
    let big = kept.unwrap_or_else(|| tmp.path().to_path_buf());
    let done = big.join(".generated");
    let started = Instant::now();
    let files = if done.exists() {
        println!("reusing the tree in {}", big.display());
        10 * 10 * 10 * FILES_PER_FOLDER
    } else {
        let n = generate(&big, 10);
        std::fs::write(&done, "").unwrap();
        n
    };
    println!(
        "{files} files ready in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let ws = Workspace::open(&big).unwrap();

    let listed = list_files(&ws, ".");
    assert!(listed.success, "{:?}", listed.body);
    assert_eq!(listed.body["total_files"], files);
    time("list_files", || {
        assert!(list_files(&ws, ".").success);
    });

    let args = SearchArgs {
        pattern: r"needle \w+".into(),
        path: ".".into(),
        glob: None,
        ignore_case: false,
    };
    let found = search_text(&ws, &args);
    assert!(found.success, "{:?}", found.body);
    assert_eq!(found.body["total"], files.div_ceil(997));
    time("search_text", || {
        assert!(search_text(&ws, &args).success);
    });

    drop(tmp);

    let small = tempfile::tempdir().unwrap();
    let files = generate(small.path(), 1);
    let ws = Workspace::open(small.path()).unwrap();
    assert_eq!(Snapshot::take(&ws).changes_to(&Snapshot::take(&ws)), []);
    println!("snapshot of {files} files:");
    time("first", || {
        Snapshot::take(&ws);
    });
    let previous = Snapshot::take(&ws);
    // Past the window in which file times are not trusted.
    std::thread::sleep(Duration::from_secs(3));
    let previous = Snapshot::take_after(&ws, Some(&previous));
    time("later", || {
        Snapshot::take_after(&ws, Some(&previous));
    });
}
