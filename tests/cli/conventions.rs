//! The conventions of a well-kept command line (issue 16): completions and
//! a man page that need no configuration, exit 130 on Ctrl+C, colors that
//! follow `--color` and `NO_COLOR`.

use crate::support::pty::Tui;
use crate::support::*;
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run the binary with these arguments in an empty folder (no `.env`, no workspace).
fn run_bare(args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .current_dir(dir.path())
        .args(args)
        .output()
        .unwrap()
}

/// Whether `shell -n` accepts the script (skipped when the shell is missing).
fn shell_accepts(shell: &str, script: &[u8]) -> Option<bool> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script");
    std::fs::write(&path, script).unwrap();
    let out = Command::new(shell).arg("-n").arg(&path).output().ok()?;
    Some(out.status.success())
}

#[test]
fn completions_for_bash_zsh_and_fish_and_a_man_page() {
    for (shell, marker) in [
        ("bash", "complete -F _stepwise"),
        ("zsh", "#compdef stepwise"),
        ("fish", "complete -c stepwise"),
    ] {
        let out = run_bare(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.contains(marker), "{shell}:\n{script}");
        assert!(
            script.contains("max-steps") && script.contains("exec"),
            "{shell}"
        );
        match shell_accepts(shell, &out.stdout) {
            Some(ok) => assert!(ok, "{shell} -n refuses the script"),
            None => eprintln!("SKIPPED: {shell} is not installed, syntax not checked"),
        }
    }
    let bad = run_bare(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));

    let man = run_bare(&["man"]);
    assert_eq!(man.status.code(), Some(0));
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(page.contains(".TH stepwise 1"), "{page}");
    for needle in ["exec", "completions", "\\-\\-workspace", "OPENAI_BASE_URL"] {
        assert!(page.contains(needle), "{needle} missing from the man page");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_ends_exec_with_exit_130() {
    // The model takes its time: the interrupt arrives while the request waits.
    let model = MockModel::start(vec![delayed(text("too late"), 20_000)]).await;
    let ws = copy_workspace();
    let mut cmd = Command::new(stepwise_bin());
    let mut child = hermetic_env(&mut cmd)
        .args([
            "exec",
            "--yes",
            "--base-url",
            &model.base_url(),
            "--workspace",
        ])
        .arg(ws.path())
        .arg("take your time")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while model.requests().await.is_empty() {
        assert!(start.elapsed() < Duration::from_secs(20), "no request came");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return (status, child.wait_with_output().unwrap());
            }
            if start.elapsed() > Duration::from_secs(15) {
                let _ = child.kill();
                panic!("stepwise did not end after SIGINT");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    })
    .await
    .unwrap();
    let (status, output) = out;
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(status.code(), Some(130), "{text}");
    assert!(text.contains("Interrupted after"), "{text}");
}

/// The raw bytes `exec --yes` writes on a terminal, with these extra flags and variables.
async fn on_a_terminal(extra: &[&str], envs: &[(&str, &std::path::Path)]) -> String {
    let model = MockModel::start(vec![
        tool_call("list_files", serde_json::json!({})),
        text("Two files."),
    ])
    .await;
    let ws = copy_workspace();
    let url = model.base_url();
    let ws_arg = ws.path().to_string_lossy().into_owned();
    let mut args = vec!["exec", "--yes", "--base-url", &url, "--workspace", &ws_arg];
    args.extend_from_slice(extra);
    args.push("list");
    let mut tui = Tui::start_with(&args, envs);
    assert_eq!(tui.exit_code().await, 0, "{}", tui.screen());
    let raw = tui.raw.lock().unwrap();
    String::from_utf8_lossy(&raw).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn colors_follow_the_flag_and_no_color() {
    let colored = on_a_terminal(&[], &[]).await;
    assert!(colored.contains("\x1b[1m[Step 1/20]"), "{colored:?}");
    let no_color = std::path::Path::new("1");
    let plain = on_a_terminal(&[], &[("NO_COLOR", no_color)]).await;
    assert!(
        plain.contains("[Step 1/20]") && !plain.contains('\x1b'),
        "{plain:?}"
    );
    let never = on_a_terminal(&["--color", "never"], &[]).await;
    assert!(!never.contains('\x1b'), "{never:?}");
    let always = on_a_terminal(&["--color", "always"], &[("NO_COLOR", no_color)]).await;
    assert!(
        always.contains("\x1b[1m[Step 1/20]"),
        "--color always beats NO_COLOR"
    );

    // Into a pipe: plain unless asked for.
    let model = MockModel::start(vec![text("Nothing to do."), text("Nothing to do.")]).await;
    let ws = copy_workspace();
    for (flag, colored) in [("--color=auto", false), ("--color=always", true)] {
        let mut cmd = Command::new(stepwise_bin());
        let out = hermetic_env(&mut cmd)
            .args(["exec", flag, "--base-url", &model.base_url(), "--workspace"])
            .arg(ws.path())
            .arg("t")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.contains('\x1b'), colored, "{flag}: {text:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_state_folder_stays_out_of_the_projects_git_status() {
    let ws = copy_workspace();
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(ws.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .ok()
    };
    if git(&["init", "-q"]).is_none_or(|o| !o.status.success()) {
        eprintln!("skipped: git is not installed");
        return;
    }
    let model = MockModel::start(vec![text("Nothing to do.")]).await;
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .args(["exec", "--base-url", &model.base_url(), "--workspace"])
        .arg(ws.path())
        .arg("Look");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        ws.path().join(".stepwise").is_dir(),
        "the transcript folder was made"
    );
    let status = git(&["status", "--porcelain", "--untracked-files=all"]).unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(!status.contains(".stepwise"), "{status}");
    assert!(
        status.contains("calculator.py"),
        "git sees the project: {status}"
    );
    assert!(
        !ws.path().join(".gitignore").exists(),
        "the project's own file is not made"
    );
}

/// The `stepwise-NAME` pages a roff page refers to, as `NAME(1)` (clap_mangen
/// writes the hyphens as `\-`).
fn page_references(page: &str) -> BTreeSet<String> {
    let reference = regex::Regex::new(r"stepwise((?:\\-[a-z]+)*)\(1\)").unwrap();
    reference
        .captures_iter(page)
        .map(|c| format!("stepwise{}", c[1].replace("\\-", "-")))
        .collect()
}

#[test]
fn man_dir_writes_every_page_the_man_pages_refer_to() {
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man1");
    let out = run_bare(&["man", "--dir", pages.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let written: BTreeSet<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for page in [
        "stepwise.1",
        "stepwise-exec.1",
        "stepwise-man.1",
        "stepwise-models.1",
    ] {
        assert!(written.contains(page), "{page} not in {written:?}");
    }
    // Each file written is named on stdout.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        written.len()
    );

    // Every page a page refers to was written, and `stepwise man` (stdout)
    // is the main page written there, so it refers to none that is missing.
    let mut referred = BTreeSet::new();
    for name in &written {
        let page = std::fs::read_to_string(pages.join(name)).unwrap();
        assert!(page.contains(".TH stepwise"), "{name}");
        referred.extend(page_references(&page));
    }
    assert!(referred.contains("stepwise-exec"), "{referred:?}");
    for name in &referred {
        assert!(
            written.contains(&format!("{name}.1")),
            "{name}(1) is referred to but not written"
        );
    }
    let main = run_bare(&["man"]);
    assert_eq!(
        String::from_utf8_lossy(&main.stdout),
        std::fs::read_to_string(pages.join("stepwise.1")).unwrap()
    );

    // A folder that cannot be made is one line and exit code 1.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let bad = run_bare(&["man", "--dir", file.join("man1").to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cannot write the man pages"));
}

/// A file of the workspace made a FIFO (`mkfifo`), or `false` without the tool.
fn mkfifo(path: &std::path::Path) -> bool {
    Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

#[tokio::test(flavor = "multi_thread")]
async fn special_files_read_at_start_up_and_in_walks_are_warnings_not_hangs() {
    let ws = copy_workspace();
    // A FIFO would block a plain open; /dev/zero would be read without end.
    if !mkfifo(&ws.path().join(".gitignore")) || !mkfifo(&ws.path().join(".env")) {
        println!("skipped: no mkfifo");
        return;
    }
    std::fs::create_dir_all(ws.path().join("sub")).unwrap();
    std::fs::write(ws.path().join("sub/inner.txt"), "x\n").unwrap();
    std::os::unix::fs::symlink("/dev/zero", ws.path().join("sub/.gitignore")).unwrap();
    std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", ws.path().join(".stepwise/stepwise.toml")).unwrap();
    // A `.git` file whose git folder's `commondir` is a FIFO (`ignore` would
    // open it to find `info/exclude`).
    let gitdir = ws.path().join("planted-gitdir");
    std::fs::create_dir_all(&gitdir).unwrap();
    assert!(mkfifo(&gitdir.join("commondir")));
    std::fs::create_dir_all(ws.path().join("worktree")).unwrap();
    std::fs::write(
        ws.path().join("worktree/.git"),
        format!("gitdir: {}\n", gitdir.display()),
    )
    .unwrap();
    let model = MockModel::start(vec![
        tool_call("list_files", serde_json::json!({"path": "."})),
        text("Listed."),
    ])
    .await;
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .env("OPENAI_API_KEY", "sk-test")
        .args(["exec", "--yes", "--base-url", &model.base_url(), "-C"])
        .arg(ws.path())
        .arg("list the files")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pid = child.id();
    let waited = tokio::task::spawn_blocking(move || child.wait_with_output());
    let Ok(out) = tokio::time::timeout(Duration::from_secs(60), waited).await else {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!("stepwise hung on a special file");
    };
    let out = out.unwrap().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // Each special config file is one warning line, and the task runs.
    assert!(err.contains(".env is not a regular file"), "{err}");
    assert!(err.contains("stepwise.toml is not a regular file"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
    let requests = model.requests().await;
    let listing = tool_messages(&requests[1]);
    let listed = listing[0]["content"].as_str().unwrap_or("");
    assert!(listed.contains("calculator.py"), "{listed}");
}

/// What an interactive zsh (with stepwise's completion script installed and
/// `compinit` run) shows after `typed` and a Tab, or `None` without zsh.
fn zsh_completes(typed: &str) -> Option<String> {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    use std::io::{Read, Write};
    Command::new("zsh").arg("--version").output().ok()?;
    let home = tempfile::tempdir().unwrap();
    let functions = home.path().join("functions");
    std::fs::create_dir_all(&functions).unwrap();
    let script = run_bare(&["completions", "zsh"]).stdout;
    std::fs::write(functions.join("_stepwise"), script).unwrap();
    let bin = std::path::Path::new(stepwise_bin()).parent().unwrap();
    std::fs::write(
        home.path().join(".zshrc"),
        format!(
            "fpath=({} $fpath)\nautoload -Uz compinit\ncompinit -u -d {}/.zcompdump\nPROMPT='READY> '\n",
            functions.display(),
            home.path().display()
        ),
    )
    .unwrap();
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 30,
            cols: 160,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new("zsh");
    cmd.args(["-i"]);
    cmd.env("HOME", home.path());
    cmd.env("ZDOTDIR", home.path());
    cmd.env("TERM", "xterm");
    cmd.env("PATH", format!("{}:/usr/bin:/bin", bin.display()));
    let mut child = pty.slave.spawn_command(cmd).unwrap();
    drop(pty.slave);
    let size = |n: u16| std::num::NonZeroU16::new(n).unwrap();
    let parser = vt100::Parser::new(size(30), size(160), 0);
    let parser = std::sync::Arc::new(std::sync::Mutex::new(parser));
    let mut reader = pty.master.try_clone_reader().unwrap();
    let p = parser.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            p.lock().unwrap().process(&buf[..n]);
        }
    });
    let mut writer = pty.master.take_writer().unwrap();
    let screen = || parser.lock().unwrap().screen().contents();
    let wait = |what: &dyn Fn(&str) -> bool| {
        let start = Instant::now();
        while !what(&screen()) {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "zsh shows:\n{}",
                screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait(&|s| s.contains("READY>"));
    writer.write_all(format!("{typed}\t").as_bytes()).unwrap();
    writer.flush().unwrap();
    // Completion is done once the screen holds still.
    let (mut last, start) = (String::new(), Instant::now());
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let now = screen();
        if now == last && now.contains(typed) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "zsh never settled:\n{now}"
        );
        last = now;
    }
    let _ = child.kill();
    let _ = child.wait();
    Some(last)
}

#[test]
fn zsh_completes_past_the_first_word() {
    // A subcommand's own flags, and a subcommand's name after the first word.
    let Some(screen) = zsh_completes("stepwise exec --js") else {
        println!("skipped: no zsh");
        return;
    };
    assert!(screen.contains("stepwise exec --json"), "{screen}");
    let screen = zsh_completes("stepwise comp").unwrap();
    assert!(screen.contains("stepwise completions"), "{screen}");
    let screen = zsh_completes("stepwise completions z").unwrap();
    assert!(screen.contains("stepwise completions zsh"), "{screen}");
}
