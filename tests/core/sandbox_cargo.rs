//! `cargo test` on a small crate passes unchanged inside the sandbox (the
//! built-in writable caches are enough), and its writes are still confined:
//! its `target/` is the workspace's build layer, not the project's folder.

use std::path::Path;
use std::process::Stdio;
use stepwise::tools::sandbox::{self, Policy};

fn small_crate(dir: &Path) {
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\
         #[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 2), 4); }\n\
         #[test]\n    fn cannot_write_home() {\n        let home = std::env::var(\"HOME\").unwrap();\n\
         assert!(std::fs::write(format!(\"{home}/tiny-owned.txt\"), \"x\").is_err());\n    }\n}\n",
    )
    .unwrap();
}

#[tokio::test]
async fn cargo_test_on_a_small_crate_passes_inside_the_sandbox() {
    let state = sandbox::state(&Policy::default());
    if !state.files {
        eprintln!("skipped: this kernel lacks {}", state.missing().join(", "));
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
    let dir = tempfile::tempdir().unwrap();
    small_crate(dir.path());
    let mut command = tokio::process::Command::new("cargo");
    command
        .args(["test", "--offline", "-q"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut confined = sandbox::prepare(&mut command, dir.path(), &Policy::default()).unwrap();
    // The crate's own target folder, not one shared with this build.
    command.env_remove("CARGO_TARGET_DIR");
    let child = command.spawn().unwrap();
    confined.started(child.id());
    let out = child.wait_with_output().await.unwrap();
    confined.kill_all().await;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("2 passed"), "{text}");
    // Where the run has a layer, `target/` is the workspace's build layer,
    // kept apart from the project; else the crate's own.
    let in_project = dir.path().join("target").is_dir();
    assert_eq!(in_project, confined.layer().is_none(), "{text}");
}
