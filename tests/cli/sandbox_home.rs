//! The sandbox's fifth round, through the real binary: `HOME` as an
//! allow-list for test runs (credential files of any tool, stepwise's own
//! folders and other projects' transcripts stay out of sight, toolchains
//! still run), the workspace's deny list at any depth (`deny_paths` and the
//! denied folders), and what a run may fill (`fallocate`, `/dev/shm`).

use crate::sandbox::{kernel_lacks, output_of, run_in, run_with_env, setup};
use crate::sandbox_hardening::lacks;

/// Credential files a test read through the sandbox in the last round (the
/// deny list named none of them), planted in the test's own `HOME`.
const CREDENTIALS: [&str; 19] = [
    ".pgpass",
    ".my.cnf",
    ".gitconfig",
    ".config/git/config",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".gem/credentials",
    ".bundle/config",
    ".config/composer/auth.json",
    ".config/rclone/rclone.conf",
    ".s3cfg",
    ".terraformrc",
    ".cache/huggingface/token",
    ".ollama/id_ed25519",
    ".config/sops/age/keys.txt",
    ".mozilla/firefox/p.default/logins.json",
    ".config/google-chrome/Default/Cookies",
    ".local/state/stepwise/stepwise.log",
    "other-project/.stepwise/transcript.jsonl",
];

/// A test printed 19 credential files of `HOME` (tokens in `~/.gitconfig`,
/// `~/.pgpass`, stepwise's own log, another project's transcript). `HOME`
/// is an allow-list now: none of them is readable, while what toolchains
/// need there still is, git still starts (a hidden `~/.gitconfig` reads as
/// empty, a hidden folder as missing, never as refused, which git stops
/// at), and the workspace, inside `HOME`, is the run's.
#[tokio::test]
async fn home_is_an_allow_list_and_credentials_of_any_tool_stay_hidden() {
    if kernel_lacks(true, false) || lacks(|s| s.layer) {
        return;
    }
    let list = CREDENTIALS
        .iter()
        .map(|p| format!("{p:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let body = format!(
        "import subprocess, tempfile\n\
         home = os.environ['HOME']\n\
         for p in [{list}, '.cargo/registry/index.txt', '.local/bin/tool']:\n\
         \x20   try:\n\
         \x20       with open(os.path.join(home, p)) as f:\n\
         \x20           text = f.read().strip()\n\
         \x20       print('READ', p, text) if text else print('HIDDEN', p, 'empty')\n\
         \x20   except OSError as e:\n\
         \x20       print('HIDDEN', p, e.errno)\n\
         print('TOOL', subprocess.run([os.path.join(home, '.local/bin/tool')], capture_output=True, text=True).stdout.strip())\n\
         with open('mine.txt') as f:\n\
         \x20   print('OWN', f.read().strip())\n\
         d = tempfile.mkdtemp()\n\
         try:\n\
         \x20   git = subprocess.run(['git', 'init', '-q', d], capture_output=True, text=True)\n\
         \x20   print('GIT', git.returncode, git.stderr.strip()[-200:])\n\
         except FileNotFoundError:\n\
         \x20   print('GIT 0 not installed')\n"
    );
    let s = setup(&body, "");
    let home = s.home.path();
    for path in CREDENTIALS {
        let file = home.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, format!("canary-{path}")).unwrap();
    }
    std::fs::write(
        home.join(".gitconfig"),
        "[http]\n\textraheader = AUTHORIZATION: basic canary-token\n",
    )
    .unwrap();
    // What toolchains need stays readable.
    std::fs::create_dir_all(home.join(".cargo/registry")).unwrap();
    std::fs::write(home.join(".cargo/registry/index.txt"), "registry-ok").unwrap();
    std::fs::create_dir_all(home.join(".local/bin")).unwrap();
    let tool = home.join(".local/bin/tool");
    std::fs::write(&tool, "#!/bin/sh\necho tool-ok\n").unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // The workspace lies inside `HOME`.
    let ws = home.join("code/project");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::copy(
        s.ws.path().join("test_escape.py"),
        ws.join("test_escape.py"),
    )
    .unwrap();
    std::fs::write(ws.join("mine.txt"), "own-ok").unwrap();
    let (_, result) = run_in(&s, &ws, "unittest", &[]).await;
    let output = output_of(&result);
    assert!(!output.contains("canary"), "{output}");
    for path in CREDENTIALS {
        assert!(
            output.contains(&format!("HIDDEN {path} ")),
            "{path}: {output}"
        );
    }
    assert!(
        output.contains("READ .cargo/registry/index.txt registry-ok"),
        "{output}"
    );
    assert!(output.contains("TOOL tool-ok"), "{output}");
    assert!(output.contains("OWN own-ok"), "{output}");
    assert!(output.contains("GIT 0"), "{output}");
}

/// A test the model wrote printed a `deny_paths` file (`secrets/db.yaml`)
/// that `read_file` refuses, and the workspace's own transcripts in
/// `.stepwise/`. The deny list's globs and its denied folders (`.stepwise`,
/// `.kube`) are covered at any depth.
#[tokio::test]
async fn deny_paths_and_denied_folders_are_hidden_at_any_depth() {
    if kernel_lacks(true, false) || lacks(|s| s.layer) {
        return;
    }
    let body = "for p in ['secrets/db.yaml', 'a/b/private/x.txt', '.stepwise/transcript.jsonl', '.stepwise/stepwise.toml', 'sub/.kube/config', 'sub/.stepwise/t.jsonl', 'secrets/ok.yaml']:\n\
        \x20   try:\n\
        \x20       print('READ', p, open(p).read().strip())\n\
        \x20   except OSError as e:\n\
        \x20       print('REFUSED', p, e.errno)\n";
    let config = "deny_paths = [\"secrets/db.yaml\", \"**/private/*.txt\"]\n";
    let s = setup(body, config);
    let ws = s.ws.path();
    for (path, text) in [
        ("secrets/db.yaml", "password: canary-db"),
        ("a/b/private/x.txt", "canary-private"),
        (".stepwise/transcript.jsonl", "canary-transcript"),
        ("sub/.kube/config", "canary-kube"),
        ("sub/.stepwise/t.jsonl", "canary-nested"),
        ("secrets/ok.yaml", "fine"),
    ] {
        std::fs::create_dir_all(ws.join(path).parent().unwrap()).unwrap();
        std::fs::write(ws.join(path), text).unwrap();
    }
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    assert!(!output.contains("canary"), "{output}");
    assert!(!output.contains("deny_paths = "), "{output}");
    assert!(output.contains("READ secrets/ok.yaml fine"), "{output}");
    for p in ["secrets/db.yaml", "a/b/private/x.txt"] {
        assert!(output.contains(&format!("REFUSED {p} 13")), "{output}");
    }
}

/// A test printed another project's transcripts from its `.stepwise/`
/// (outside `HOME`, where its allow-list does not reach). stepwise lists
/// the workspaces it ran tests in, and each run covers the others'
/// `.stepwise` folders.
#[tokio::test]
async fn other_workspaces_transcripts_are_hidden_outside_home_too() {
    if kernel_lacks(true, false) || lacks(|s| s.layer) {
        return;
    }
    let other = tempfile::tempdir().unwrap();
    let transcript = other.path().join(".stepwise/transcript.jsonl");
    let body = format!(
        "try:\n\
         \x20   with open({:?}) as f:\n\
         \x20       print('READ', f.read().strip())\n\
         except OSError as e:\n\
         \x20   print('HIDDEN', e.errno)\n",
        transcript.display().to_string()
    );
    let s = setup(&body, "");
    std::fs::copy(
        s.ws.path().join("test_escape.py"),
        other.path().join("test_escape.py"),
    )
    .unwrap();
    // stepwise runs the other project's tests first (same user, same HOME).
    let (_, first) = run_in(&s, other.path(), "unittest", &[]).await;
    assert_eq!(first["success"], true, "{first}");
    std::fs::write(&transcript, "canary-other-transcript").unwrap();
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    assert!(!output.contains("canary"), "{output}");
    assert!(output.contains("HIDDEN 2"), "{output}");
}

/// Without a workspace layer (a path the overlay's options cannot spell:
/// `,` in it), the run writes into the workspace and the search for plants
/// walks it: the `deny_paths` files it meets are covered as well.
#[tokio::test]
async fn deny_paths_are_hidden_without_a_workspace_layer_too() {
    if kernel_lacks(true, false) || lacks(|s| s.layer) {
        return;
    }
    let body = "for p in ['secrets/db.yaml', 'deep/config/signing.key', 'secrets/ok.yaml']:\n\
        \x20   try:\n\
        \x20       with open(p) as f:\n\
        \x20           print('READ', p, f.read().strip())\n\
        \x20   except OSError as e:\n\
        \x20       print('REFUSED', p, e.errno)\n";
    let s = setup(body, "");
    let ws = s.home.path().join("no,layer");
    std::fs::create_dir_all(ws.join(".stepwise")).unwrap();
    std::fs::write(
        ws.join(".stepwise/stepwise.toml"),
        "deny_paths = [\"secrets/db.yaml\"]\n",
    )
    .unwrap();
    std::fs::copy(
        s.ws.path().join("test_escape.py"),
        ws.join("test_escape.py"),
    )
    .unwrap();
    for (path, text) in [
        ("secrets/db.yaml", "password: canary-db"),
        ("deep/config/signing.key", "canary-key"),
        ("secrets/ok.yaml", "fine"),
    ] {
        std::fs::create_dir_all(ws.join(path).parent().unwrap()).unwrap();
        std::fs::write(ws.join(path), text).unwrap();
    }
    let (_, result) = run_in(&s, &ws, "unittest", &[]).await;
    let output = output_of(&result);
    assert!(!output.contains("canary"), "{output}");
    assert!(output.contains("READ secrets/ok.yaml fine"), "{output}");
    assert!(output.contains("REFUSED secrets/db.yaml 13"), "{output}");
}

/// `disk_mb` did not hold: one `posix_fallocate` took a file system from
/// 1,929 MiB free to 0 between two looks of the watch, and a test wrote
/// past the budget into `/dev/shm`. A `fallocate` longer than the budget
/// fails with `ENOSPC`, and `/dev/shm` is a private tmpfs of the budget.
#[tokio::test]
async fn fallocate_and_shared_memory_stop_at_the_disk_budget() {
    if kernel_lacks(true, false) || lacks(|s| s.layer && s.unix_sockets) {
        return;
    }
    let body = "fd = os.open('big.bin', os.O_CREAT | os.O_WRONLY)\n\
        try:\n\
        \x20   os.posix_fallocate(fd, 0, 64 << 20)\n\
        \x20   print('FALLOC OK', os.fstat(fd).st_size)\n\
        except OSError as e:\n\
        \x20   print('FALLOC', e.errno)\n\
        os.close(fd)\n\
        os.remove('big.bin')\n\
        try:\n\
        \x20   with open('/dev/shm/fill', 'wb') as f:\n\
        \x20       for _ in range(16):\n\
        \x20           f.write(b'x' * (1 << 20))\n\
        \x20           f.flush()\n\
        \x20   print('SHM OK')\n\
        except OSError as e:\n\
        \x20   print('SHM', e.errno)\n\
        os.remove('/dev/shm/fill')\n\
        fd = os.open('/dev/shm/small', os.O_CREAT | os.O_WRONLY)\n\
        os.posix_fallocate(fd, 0, 4096)\n\
        os.close(fd)\n\
        print('SMALL OK')\n";
    let s = setup(body, "[sandbox]\ndisk_mb = 8\n");
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    assert!(output.contains("FALLOC 28"), "{output}");
    assert!(output.contains("SHM 28"), "{output}");
    assert!(output.contains("SMALL OK"), "{output}");
}

/// `disk_mb` still did not hold for ordinary writes: with `disk_mb = 8` a
/// test wrote 42 MiB into the workspace, 7 MiB into `TMPDIR` and 7 MiB into
/// `/dev/shm` (the workspace was read every 50 ms, and each temporary
/// folder had the whole budget), and `fallocate` calls each under the
/// budget went through. The run's layer and temporary folders are one
/// tmpfs of the budget now: written as fast as a test can, with `write` or
/// `fallocate`, into any of them, everything together stops at 8 MiB, and
/// the run is named as stopped by the disk limit.
#[tokio::test]
async fn the_disk_budget_holds_for_everything_a_run_writes_together() {
    if kernel_lacks(true, false) || lacks(|s| s.layer && s.disk_held) {
        return;
    }
    let body = "import tempfile\n\
        tmp = tempfile.gettempdir()\n\
        def fill(path, mib):\n\
        \x20   done = 0\n\
        \x20   try:\n\
        \x20       with open(path, 'wb') as f:\n\
        \x20           for _ in range(mib):\n\
        \x20               f.write(b'x' * (1 << 20))\n\
        \x20               f.flush()\n\
        \x20               done += 1\n\
        \x20   except OSError as e:\n\
        \x20       print('FULL', path, e.errno)\n\
        \x20   return done\n\
        allocated = 0\n\
        for i in range(4):\n\
        \x20   fd = os.open(f'alloc{i}.bin', os.O_CREAT | os.O_WRONLY)\n\
        \x20   try:\n\
        \x20       os.posix_fallocate(fd, 0, 3 << 20)\n\
        \x20       allocated += 3\n\
        \x20   except OSError as e:\n\
        \x20       print('FALLOC', e.errno)\n\
        \x20   os.close(fd)\n\
        print('ALLOCATED MIB', allocated)\n\
        for i in range(4):\n\
        \x20   os.remove(f'alloc{i}.bin')\n\
        filled = sum(fill(f'fill{i}.bin', 1) for i in range(42))\n\
        filled += fill(os.path.join(tmp, 'fill.bin'), 7)\n\
        filled += fill('/dev/shm/fill.bin', 7)\n\
        print('FILLED MIB', filled)\n\
        assert False, 'the run must fail'\n";
    let s = setup(body, "[sandbox]\ndisk_mb = 8\n");
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    let figure = |label: &str| -> u64 {
        output
            .split(label)
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {label}: {output}"))
    };
    // Four fallocates of 3 MiB kept at once: two fit in 8 MiB.
    assert_eq!(figure("ALLOCATED MIB "), 6, "{output}");
    assert!(output.contains("FALLOC 28"), "{output}");
    // 56 MiB written into the workspace, `TMPDIR` and `/dev/shm`: at most
    // the budget lands, in all of them together.
    assert!(figure("FILLED MIB ") <= 8, "{output}");
    assert!(output.contains("FULL /dev/shm/fill.bin 28"), "{output}");
    let named = result["limit"].as_str().unwrap_or_default();
    assert!(named.contains("disk limit (8 MiB"), "{result}");
}

/// The run's disk is the size of its budget, and at most half the
/// machine's memory (it is a tmpfs): a budget larger than that would let a
/// run that fills it leave the machine without memory. Seen from inside the
/// run, as the size of its `TMPDIR`.
#[tokio::test]
async fn the_runs_disk_is_its_budget_and_at_most_half_the_memory() {
    if kernel_lacks(true, false) || lacks(|s| s.layer && s.disk_held) {
        return;
    }
    let body = "import tempfile\n\
        st = os.statvfs(tempfile.gettempdir())\n\
        print('SIZE MIB', st.f_blocks * st.f_frsize >> 20)\n";
    let memory_mib = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap()
        >> 10;
    for (disk_mb, expected) in [(8, 8), (1 << 30, memory_mib / 2)] {
        let s = setup(body, &format!("[sandbox]\ndisk_mb = {disk_mb}\n"));
        let (_, result) = run_with_env(&s, "unittest", &[]).await;
        let output = output_of(&result);
        let size: u64 = output
            .split("SIZE MIB ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no size: {output}"));
        assert!(
            size <= expected && size + 1 >= expected,
            "disk_mb = {disk_mb}: a disk of {size} MiB, {expected} MiB expected: {output}"
        );
    }
}
