//! The sandbox's fourth round, through the real binary: what a run may
//! read (secrets at any depth, stepwise's own log, the password hashes), what
//! it may fill (a private `/tmp`, memory written rather than address space)
//! and what it leaves behind (no runs folder).

use crate::sandbox::{kernel_lacks, output_of, run_in, run_with_env, setup};
use crate::sandbox_hardening::lacks;
use std::path::Path;

/// `exec` left `TMPDIR/stepwise-runs-<uid>` behind: the folder that holds
/// every run's temporary folder goes with the last run out of it.
#[tokio::test]
async fn exec_leaves_no_runs_folder_behind() {
    let s = setup("pass\n", "");
    let tmp = tempfile::tempdir().unwrap();
    let (_, result) = run_with_env(&s, "unittest", &[("TMPDIR", tmp.path())]).await;
    assert_eq!(result["success"], true, "{result}");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("stepwise-runs-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Escape: only the root's `.env` files were covered for a run; a test the
/// model wrote printed `sub/.env` and `config/signing.key`, which
/// `read_file` refuses, to the model; and stepwise's own log. Every file
/// named like a secret is covered, at any depth, and stepwise's state
/// folder is hidden.
#[tokio::test]
async fn secrets_below_the_root_are_unreadable_to_tests() {
    if kernel_lacks(true, false) || lacks(|s| s.workspace) {
        return;
    }
    let body = "log = os.path.join(os.environ['HOME'], '.local/state/stepwise/stepwise.log')\n\
        for p in ['sub/.env', 'config/signing.key', 'deep/er/.env.local', 'sub/ok.txt', log]:\n\
        \x20   try:\n\
        \x20       print('READ', p, open(p).read().strip())\n\
        \x20   except OSError as e:\n\
        \x20       print('REFUSED', p, e.errno)\n";
    let s = setup(body, "");
    let ws = s.ws.path();
    for (path, text) in [
        ("sub/.env", "TOKEN=canary-sub"),
        ("config/signing.key", "canary-key"),
        ("deep/er/.env.local", "canary-deep"),
        ("sub/ok.txt", "fine"),
    ] {
        std::fs::create_dir_all(ws.join(path).parent().unwrap()).unwrap();
        std::fs::write(ws.join(path), text).unwrap();
    }
    // stepwise's own log, in its state folder.
    let log = s.home.path().join(".local/state/stepwise/stepwise.log");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(&log, "canary-log").unwrap();
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    assert!(!output.contains("canary"), "{output}");
    for p in ["sub/.env", "config/signing.key", "deep/er/.env.local"] {
        assert!(output.contains(&format!("REFUSED {p} 13")), "{output}");
    }
    assert!(output.contains("READ sub/ok.txt fine"), "{output}");
    // Refused, or missing where `HOME`'s hidden folders are covered.
    assert!(
        output.contains("stepwise.log 13") || output.contains("stepwise.log 2"),
        "{output}"
    );
}

/// Escape: as root, `/etc/shadow` was readable inside the sandbox (root
/// reads files whatever their modes). Root's runs are not granted it.
#[tokio::test]
async fn root_cannot_read_the_password_hashes() {
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if kernel_lacks(true, false) || !root || !Path::new("/etc/shadow").exists() {
        eprintln!("skipped: not root, or no /etc/shadow here");
        return;
    }
    let body = "try:\n\
        \x20   print('READ', len(open('/etc/shadow').read()))\n\
        except OSError as e:\n\
        \x20   print('REFUSED', e.errno)\n";
    let s = setup(body, "");
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    assert!(output.contains("REFUSED 13"), "{output}");
}

/// A real suite (mime's) does `mkdir /tmp/mime_test` and failed in the
/// sandbox with "Read-only file system". A run whose workspace is outside
/// `/tmp` gets a private `/tmp` and `/var/tmp` (a tmpfs inside the disk
/// budget, its `TMPDIR`); nothing it writes there is left on the machine.
#[tokio::test]
async fn a_suite_that_writes_tmp_directly_gets_a_private_one() {
    if kernel_lacks(true, false) || lacks(|s| s.layer) {
        return;
    }
    let marker = format!("stepwise-private-tmp-{}", std::process::id());
    let body = format!(
        "for d in ['/tmp', '/var/tmp']:\n\
         \x20   os.makedirs(os.path.join(d, '{marker}'), exist_ok=True)\n\
         \x20   open(os.path.join(d, '{marker}', 'x'), 'w').write('x')\n\
         \x20   print('WROTE', d, open(os.path.join(d, '{marker}', 'x')).read())\n\
         print('TMPDIR', os.environ['TMPDIR'])\n"
    );
    // A workspace outside `/tmp` (a tmpfs over `/tmp` would hide one inside):
    // the build's own temporary folder, unless the checkout is in `/tmp`.
    let outside = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let real = std::fs::canonicalize(outside).unwrap();
    if ["/tmp", "/var/tmp"]
        .iter()
        .any(|t| std::fs::canonicalize(t).is_ok_and(|t| real.starts_with(t)))
    {
        eprintln!("skipped: this checkout is inside /tmp, so no workspace outside it is at hand");
        return;
    }
    let s = setup(&body, "");
    let ws = tempfile::tempdir_in(outside).unwrap();
    std::fs::copy(
        s.ws.path().join("test_escape.py"),
        ws.path().join("test_escape.py"),
    )
    .unwrap();
    let (_, result) = run_in(&s, ws.path(), "unittest", &[]).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    assert!(
        output.contains("WROTE /tmp x") && output.contains("WROTE /var/tmp x"),
        "{output}"
    );
    assert!(output.contains("TMPDIR /tmp"), "{output}");
    for d in ["/tmp", "/var/tmp"] {
        assert!(
            !Path::new(d).join(&marker).exists(),
            "{d}/{marker} was left"
        );
    }
}

/// vitest failed in the sandbox on a machine without a control group:
/// each WebAssembly instance reserves about 10 GiB of address space, and
/// the per-process bound was on the address space (16 GiB). The bound is
/// on the memory a process writes now; the reservations pass.
#[tokio::test]
async fn a_runtime_that_reserves_address_space_runs() {
    if kernel_lacks(true, false) {
        return;
    }
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: node is not installed here");
        return;
    }
    let wasm = "const b = new Uint8Array([0,97,115,109,1,0,0,0,5,3,1,0,1]); \
                for (let i = 0; i < 4; i++) new WebAssembly.Instance(new WebAssembly.Module(b)); \
                console.log('WASM OK')";
    let body = format!(
        "import subprocess\n\
         out = subprocess.run(['node', '-e', {wasm:?}], capture_output=True, text=True)\n\
         print(out.stdout.strip(), out.stderr.strip()[-200:])\n"
    );
    let s = setup(&body, "");
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    assert!(output_of(&result).contains("WASM OK"), "{result}");
}
