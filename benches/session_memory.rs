//! Memory of a long headless session: `stepwise exec --script` with a
//! generated script of N `replace_text` edits to one growing file (each adds
//! a 70-character line), on a temporary project. Prints the child's peak RSS
//! (`ru_maxrss` from `wait4`) for 1,000 and 1,600 edits, and checks every
//! edit was applied. On Linux `ru_maxrss` includes the memory the child had
//! before `exec` (this process's), so this process stays small. Run with `cargo bench --bench session_memory`
//! (`STEPWISE_BENCH_BIN=path` measures another build of the binary).

// A benchmark may panic on what it sets up itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const LINE: &str = "value = compute(index, 'a fairly ordinary line of generated code')";

fn script(edits: usize) -> String {
    let mut turns = vec![json!({"tool": "write_file", "arguments": {
        "path": "grow.py", "content": "# grows\n# END\n"}})];
    for i in 0..edits {
        turns.push(json!({"tool": "replace_text", "arguments": {
            "path": "grow.py",
            "old": "# END\n",
            "new": format!("{LINE}  # {i}\n# END\n"),
        }}));
    }
    turns.push(json!({"final": "Done."}));
    json!({"task": "grow a file", "chunk_delay_ms": 0, "turns": turns}).to_string()
}

/// Run the session; (peak RSS in KiB, edits applied, seconds).
// The child is reaped by `wait4` (for its rusage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run(edits: usize, dir: &Path) -> (i64, usize, f64) {
    let path = dir.join(format!("edits-{edits}.json"));
    std::fs::write(&path, script(edits)).unwrap();
    let project = dir.join(format!("project-{edits}"));
    std::fs::create_dir_all(&project).unwrap();
    let out_path = dir.join(format!("events-{edits}.jsonl"));
    let out = std::fs::File::create(&out_path).unwrap();
    let start = Instant::now();
    // Another build can be measured the same way (e.g. an older commit's).
    let bin = std::env::var_os("STEPWISE_BENCH_BIN").map_or_else(
        || env!("CARGO_BIN_EXE_stepwise").into(),
        std::path::PathBuf::from,
    );
    let child = Command::new(bin)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("STEPWISE_MODEL")
        .env("TMPDIR", dir)
        .current_dir(&project)
        .args(["exec", "--json", "--yes", "--max-steps"])
        .arg((edits + 10).to_string())
        .arg("--script")
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: plain FFI call with valid pointers to locals; the child is ours
    // and not waited for elsewhere.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    let took = start.elapsed().as_secs_f64();
    // Read line by line: the child of the next run starts from this
    // process's memory, and `ru_maxrss` would count a whole file read here.
    let events = std::io::BufReader::new(std::fs::File::open(&out_path).unwrap());
    let applied = std::io::BufRead::lines(events)
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
        .filter(|e| e["event"] == "tool_finished" && e["tool"] == "replace_text")
        .filter(|e| e["status"] == "ok")
        .count();
    std::fs::remove_file(&out_path).unwrap();
    (usage.ru_maxrss, applied, took)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    for edits in [1_000, 1_600] {
        let (rss_kib, applied, took) = run(edits, dir.path());
        assert_eq!(applied, edits, "every edit applied");
        println!(
            "{:<44} {:>9.1} MiB peak RSS ({applied} edits applied in {took:.1} s)",
            format!("headless session, {edits} edits to one file"),
            rss_kib as f64 / 1024.0
        );
    }
}
