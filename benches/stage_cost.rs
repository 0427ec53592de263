//! The cost of a stage, on a 10,000-file and a 100,000-file workspace (the
//! tree of `file_tools`): creating a stage (and opening the workspace
//! through it), and applying a 10-file changeset (computing it against the
//! workspace and writing it; the ten writes into the stage before it are
//! timed apart). Neither may grow with the workspace. Targets: a stage under 20 ms, a 10-file apply
//! under 50 ms. Run with `cargo bench --bench stage_cost`; prints medians.
//! `FILE_TOOLS_TREE=DIR` reuses a generated 100,000-file tree.

// A benchmark may panic on what it sets up itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};
use stepwise::tools::Workspace;
use stepwise::tools::stage::changeset::{self, Changeset};
use stepwise::tools::stage::{Stage, Store};

#[path = "support/tree.rs"]
mod tree;
use tree::{FILES_PER_FOLDER, generate};

const RUNS: usize = 11;

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn report(what: &str, runs: Vec<Duration>) {
    let ms = |d: &Duration| d.as_secs_f64() * 1e3;
    println!(
        "{what:<34} median {:>7.2} ms  (min {:.2} ms, max {:.2} ms, {RUNS} runs)",
        ms(&median(runs.clone())),
        ms(runs.iter().min().unwrap()),
        ms(runs.iter().max().unwrap()),
    );
}

fn measure(label: &str, root: &std::path::Path) {
    let store_dir = tempfile::tempdir().unwrap();
    let store = Store(store_dir.path().to_path_buf());
    let mut create = Vec::new();
    let mut apply = Vec::new();
    let mut stage_writes = Vec::new();
    for run in 0..=RUNS {
        let start = Instant::now();
        let stage = Arc::new(Stage::create(&store, root, "bench").unwrap());
        let ws = Workspace::open(root).unwrap().with_stage(stage.clone());
        let created = start.elapsed();
        // Ten files, each changed in one line.
        let start_staging = Instant::now();
        for i in 0..10 {
            let rel = Workspace::check(&format!("pkg0/mod{i}/part0/file{run}.rs")).unwrap();
            let old = ws.read_bytes(&rel, 1 << 20).unwrap().unwrap();
            let new = format!("{}// changed\n", String::from_utf8(old).unwrap());
            ws.write_atomic(&rel, new.as_bytes()).unwrap();
        }
        let staged = start_staging.elapsed();
        let start = Instant::now();
        let real = ws.unstaged().unwrap();
        let set = Changeset::compute(&stage, &real).unwrap();
        let (written, refused) = changeset::apply(&real, &set.patch);
        let applied = start.elapsed();
        assert_eq!((written.len(), refused.len()), (10, 0), "{refused:?}");
        drop(ws);
        Arc::try_unwrap(stage).unwrap().discard().unwrap();
        if run > 0 {
            // The first, cold run aside.
            create.push(created);
            stage_writes.push(staged);
            apply.push(applied);
        }
    }
    report(&format!("{label}: create a stage"), create);
    report(&format!("{label}: 10 writes into the stage"), stage_writes);
    report(&format!("{label}: apply a 10-file changeset"), apply);
}

fn main() {
    let small = tempfile::tempdir().unwrap();
    let n = generate(small.path(), 1);
    measure(&format!("{n} files"), small.path());
    drop(small);
    let tmp = tempfile::tempdir().unwrap();
    let kept = std::env::var_os("FILE_TOOLS_TREE").map(std::path::PathBuf::from);
    let big = kept.unwrap_or_else(|| tmp.path().to_path_buf());
    let done = big.join(".generated");
    let n = if done.exists() {
        10 * 10 * 10 * FILES_PER_FOLDER
    } else {
        let n = generate(&big, 10);
        std::fs::write(&done, "").unwrap();
        n
    };
    measure(&format!("{n} files"), &big);
}
