//! End to end through a pseudo-terminal: the real `stepwise` binary in
//! full-screen mode against the mock model server, on a temp copy of the
//! sample workspace (harness in `tests/support/pty.rs`).

use crate::support::pty::{TASK, Tui, read};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_every_step_edits_the_files_and_passes_the_tests() {
    let mock = crate::support::MockModel::start(crate::support::seed_script("unittest")).await;
    let ws = crate::support::copy_workspace();
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send(TASK);
    tui.wait_for("Add a divide function").await;
    tui.send("\r");

    let screen = tui.wait_for("Step 4 · Write calculator.py").await;
    assert!(screen.contains("[y/N]"), "{screen}");
    assert!(
        screen.contains("+def divide(a, b):"),
        "the diff is on screen:\n{screen}"
    );
    assert!(screen.contains("Diff · calculator.py"), "{screen}");
    tui.send("y");
    tui.wait_for("Step 5 · Write test_calculator.py").await;
    tui.send("y");
    tui.wait_for("Step 6 · Write test_calculator.py").await;
    tui.send("y");
    let screen = tui.wait_for("Step 7 · Run ").await;
    assert!(screen.contains("unittest"), "{screen}");
    tui.send("y");
    let screen = tui.wait_for("Done in 8 steps").await;
    assert!(
        screen.contains("tests OK"),
        "the test run's summary is shown:\n{screen}"
    );
    assert!(screen.contains("✓ done"), "{screen}");

    let calculator = String::from_utf8(read(ws.path(), "calculator.py")).expect("utf-8");
    assert!(calculator.contains("def divide(a, b):"), "{calculator}");
    let tests = String::from_utf8(read(ws.path(), "test_calculator.py")).expect("utf-8");
    assert!(tests.contains("class TestDivide"), "{tests}");
    let run = std::process::Command::new("python3")
        .args(["-m", "unittest", "discover"])
        .current_dir(ws.path())
        .output()
        .expect("run python3");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let tool_results =
        crate::support::tool_messages(mock.requests().await.last().expect("requests"));
    assert!(
        tool_results
            .last()
            .is_some_and(|m| m["content"].to_string().contains("OK"))
    );

    tui.send("\x04"); // Ctrl+D on an empty input quits.
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declining_the_write_leaves_the_file_byte_identical() {
    let mock = crate::support::MockModel::start(crate::support::seed_script("unittest")).await;
    let ws = crate::support::copy_workspace();
    let before_calc = read(ws.path(), "calculator.py");
    let before_tests = read(ws.path(), "test_calculator.py");
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send(TASK);
    tui.wait_for("Add a divide function").await;
    tui.send("\r");
    tui.wait_for("Step 4 · Write calculator.py").await;
    tui.send("n");
    // The model goes on with its next step; the declined one is marked.
    let screen = tui.wait_for("Step 5 · Write test_calculator.py").await;
    assert!(screen.contains("⊘"), "declined glyph shown:\n{screen}");
    assert!(
        screen.contains("You declined replace_text calculator.py"),
        "the decline is on record in the conversation:\n{screen}"
    );
    let requests = mock.requests().await;
    let declined =
        crate::support::tool_messages(requests.last().expect("a request after the decline"));
    assert!(
        declined
            .last()
            .is_some_and(|m| m["content"].to_string().contains("declined")),
        "the model was told: {declined:?}"
    );
    // Quitting with a prompt open asks first, then declines it too.
    tui.send("\x04");
    tui.wait_for("Ctrl+D again").await;
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
    assert_eq!(
        read(ws.path(), "calculator.py"),
        before_calc,
        "calculator.py untouched"
    );
    assert_eq!(
        read(ws.path(), "test_calculator.py"),
        before_tests,
        "test file untouched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_sighup_and_sigint_restore_the_terminal() {
    for (signal, code) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        let mock = crate::support::MockModel::start(crate::support::seed_script("unittest")).await;
        let ws = crate::support::copy_workspace();
        let mut tui = Tui::start(&mock.base_url(), ws.path());
        tui.wait_for("Type a task").await;
        tui.send(TASK);
        tui.send("\r");
        tui.wait_for("Step 4 · Write calculator.py").await;
        let pid = tui.child.process_id().expect("pid");
        let killed = std::process::Command::new("kill")
            .args([format!("-{signal}"), pid.to_string()])
            .status()
            .expect("run kill");
        assert!(killed.success());
        assert_eq!(tui.exit_code().await, code, "SIG{signal}");
        tui.assert_restored();
        assert_eq!(
            read(ws.path(), "calculator.py"),
            read(&crate::support::sample_workspace(), "calculator.py"),
            "the pending write was declined"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_and_endpoint_errors_show_inside_the_ui() {
    // No key for a remote server: the app still opens and says what to do.
    let ws = crate::support::copy_workspace();
    let mut tui = Tui::start("https://api.openai.com/v1", ws.path());
    let screen = tui.wait_for("OPENAI_API_KEY is not set").await;
    assert!(screen.contains(".env"), "{screen}");
    // The first screen says exactly what to do next.
    assert!(screen.contains("OPENAI_API_KEY=sk-"), "{screen}");
    assert!(screen.contains("stepwise --demo"), "{screen}");
    assert!(screen.contains("http://localhost:11434/v1"), "{screen}");
    tui.send("do something\r");
    tui.wait_for("Cannot run the task").await;
    tui.send("\x15\x04"); // Ctrl+U clears the input, Ctrl+D quits.
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();

    // A 401 from the server is a message in the conversation, not a crash.
    let mock = crate::support::MockModel::start(vec![crate::support::error(
        401,
        "Incorrect API key provided",
    )])
    .await;
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send("hello\r");
    let screen = tui.wait_for("HTTP 401").await;
    assert!(screen.contains("HTTP 401: Incorrect API"), "{screen}");
    tui.wait_for("Stopped by an error").await;
    tui.send("\x03"); // Ctrl+C when idle quits.
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_runs_on_a_copy_with_y_at_every_prompt() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let repo_ws = crate::support::sample_workspace();
    let before: Vec<Vec<u8>> = ["calculator.py", "test_calculator.py"]
        .iter()
        .map(|f| read(&repo_ws, f))
        .collect();
    let repo_ws_arg = repo_ws.to_string_lossy().into_owned();
    let mut tui = Tui::start_with(
        &["--demo", "--workspace", &repo_ws_arg],
        &[("TMPDIR", tmp.path())],
    );
    let screen = tui.wait_for("scripted demo model").await;
    assert!(
        screen.contains("demo (scripted)"),
        "the header says so:\n{screen}"
    );
    // The task is pre-filled: Enter starts it.
    tui.wait_for("Add divide(a, b)").await;
    tui.send("\r");
    for prompt in ["Step 4 · ", "Step 5 · ", "Step 6 · ", "Step 7 · Run"] {
        tui.wait_for(prompt).await;
        tui.send("y");
    }
    let screen = tui.wait_for("Done in 8 steps").await;
    assert!(screen.contains("6 tests OK"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
    // A summary stays on the normal screen.
    let screen = tui.wait_for("The demo worked on a temporary copy").await;
    for line in [
        "stepwise: Last task: Done in 8 steps",
        "Files changed: calculator.py, test_calculator.py",
        "Tokens: ",
    ] {
        assert!(screen.contains(line), "{line}:\n{screen}");
    }
    // The copy in the temp dir has the change; the repo's workspace does not.
    let copy = std::fs::read_dir(tmp.path())
        .expect("temp dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("stepwise-demo-"))
        })
        .expect("the demo copy");
    let calculator = String::from_utf8(read(&copy, "calculator.py")).expect("utf-8");
    assert!(calculator.contains("def divide(a, b):"));
    let after: Vec<Vec<u8>> = ["calculator.py", "test_calculator.py"]
        .iter()
        .map(|f| read(&repo_ws, f))
        .collect();
    assert_eq!(before, after, "the repo's workspace is untouched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_agent_task_ends_the_app_and_restores_the_terminal() {
    let mock = crate::support::MockModel::start(crate::support::seed_script("unittest")).await;
    let ws = crate::support::copy_workspace();
    let panic_flag = ws.path().join("flag");
    let ws_arg = ws.path().to_string_lossy().into_owned();
    let base = mock.base_url();
    let mut tui = Tui::start_with(
        &["--base-url", &base, "--workspace", &ws_arg],
        &[("STEPWISE_DEBUG_PANIC_AGENT", panic_flag.as_path())],
    );
    tui.wait_for("Type a task").await;
    tui.send(TASK);
    tui.send("\r");
    assert_eq!(
        tui.exit_code().await,
        1,
        "a dead agent ends the app with code 1"
    );
    tui.assert_restored();
    let raw = String::from_utf8_lossy(&tui.raw.lock().expect("raw")).into_owned();
    let left = raw.rfind("\x1b[?1049l").expect("left the alternate screen");
    let said = raw.rfind("panicked").expect("the reason is printed");
    assert!(
        said > left,
        "the message comes after the terminal was restored"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_on_the_command_line_starts_without_enter() {
    let mock = crate::support::MockModel::start(crate::support::seed_script("unittest")).await;
    let ws = crate::support::copy_workspace();
    let workspace = ws.path().to_string_lossy();
    let mut tui = Tui::start_with(
        &[
            "--base-url",
            &mock.base_url(),
            "--workspace",
            &workspace,
            TASK,
        ],
        &[],
    );
    // No key is typed: the model is asked, and its first write waits for approval.
    let screen = tui.wait_for("Step 4 · Write calculator.py").await;
    assert!(screen.contains("[y/N]"), "{screen}");
    let first = mock.requests().await;
    assert!(
        first[0].to_string().contains("Add a divide"),
        "the task reached the model"
    );
    tui.send("\x03");
    tui.wait_for("Ctrl+C again").await;
    tui.send("\x03");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
    assert_eq!(
        read(ws.path(), "calculator.py"),
        read(&crate::support::sample_workspace(), "calculator.py"),
        "nothing was written without a y"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_key_the_first_screen_names_the_configured_provider_key_and_model() {
    // No key, so nothing is sent anywhere: the first screen only.
    let ws = crate::support::copy_workspace();
    let ws_arg = ws.path().to_string_lossy().into_owned();
    let mut tui = Tui::start_with(&["--provider", "anthropic", "--workspace", &ws_arg], &[]);
    let screen = tui.wait_for("Pick one").await;
    assert!(screen.contains("for provider"), "{screen}");
    assert!(screen.contains("`ANTHROPIC_API_KEY=...`"), "{screen}");
    assert!(
        screen.contains("claude-sonnet-4-5"),
        "the header's model:\n{screen}"
    );
    assert!(
        !screen.contains("OPENAI_API_KEY") && !screen.contains("gpt-4.1-mini"),
        "{screen}"
    );
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);
    tui.assert_restored();
}
