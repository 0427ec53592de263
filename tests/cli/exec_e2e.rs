//! `stepwise exec` end to end: the real binary against the mock model server
//! on a temp copy of the sample workspace.

use crate::support::*;
use serde_json::{Value, json};
use std::process::{Command, Output};

async fn run_exec(args: &[&str], base_url: &str, workspace: &std::path::Path) -> Output {
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .arg("exec")
        .args(["--base-url", base_url])
        .arg("--workspace")
        .arg(workspace)
        .args(args);
    tokio::task::spawn_blocking(move || cmd.output().expect("run stepwise"))
        .await
        .expect("join")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn python_tests_pass(dir: &std::path::Path, runner: &[&str]) -> bool {
    Command::new("python3")
        .args(runner)
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

async fn seed_scenario(runner: &str) {
    let model = MockModel::start(seed_script(runner)).await;
    let ws = copy_workspace();
    let out = run_exec(
        &["--yes", "Add divide(a, b) with tests"],
        &model.base_url(),
        ws.path(),
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        stdout(&out),
        stderr(&out)
    );

    let calc = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    assert!(
        calc.contains("def divide(a, b):") && calc.contains("raise ValueError"),
        "{calc}"
    );
    let tests = std::fs::read_to_string(ws.path().join("test_calculator.py")).unwrap();
    assert!(
        tests.contains("from calculator import add, divide, subtract"),
        "{tests}"
    );
    assert!(tests.contains("def test_divide_by_zero_raises"), "{tests}");
    assert!(python_tests_pass(
        ws.path(),
        &["-m", "unittest", "discover"]
    ));

    // Every tool result went back to the model: request k carries k tool messages.
    let requests = model.requests().await;
    assert_eq!(requests.len(), 8);
    for (k, request) in requests.iter().enumerate() {
        assert_eq!(tool_messages(request).len(), k, "request {k}");
        assert_eq!(request["stream"], Value::Bool(true));
        assert!(request["tools"].as_array().is_some_and(|t| t.len() == 7));
    }
    let last = &requests[7];
    let results: Vec<Value> = tool_messages(last)
        .iter()
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect();
    assert!(results.iter().all(|r| r["success"] == true), "{results:?}");
    assert_eq!(
        results[0]["files"],
        serde_json::json!(["calculator.py", "test_calculator.py"])
    );
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("def add(a, b):")
    );
    assert_eq!(results[6]["returncode"], 0);
    // Each tool message answers the id of the call it belongs to.
    let assistant_ids: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_calls"][0]["id"].as_str().map(String::from))
        .collect();
    let answered: Vec<String> = tool_messages(last)
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(assistant_ids, answered);

    let text = stdout(&out);
    assert!(
        text.contains("[Step 4/20] replace_text calculator.py"),
        "{text}"
    );
    assert!(text.contains("+def divide(a, b):"), "diff shown:\n{text}");
    assert!(
        text.contains("Receipt — computed by stepwise") && text.contains("→ exit 0"),
        "{text}"
    );
    assert!(
        text.contains(
            "Changed files:\n  calculator.py +6 \u{2212}0\n  test_calculator.py +9 \u{2212}1"
        ),
        "{text}"
    );
    assert!(text.contains("Final answer accepted"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn seed_task_with_unittest_changes_files_and_exits_zero() {
    seed_scenario("unittest").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn seed_task_with_pytest() {
    if !pytest_available() {
        eprintln!("SKIPPED: pytest is not installed (python3 -m pip install pytest)");
        return;
    }
    seed_scenario("pytest").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_yes_and_without_a_terminal_writes_are_declined() {
    let model = MockModel::start(vec![
        tool_call("read_file", serde_json::json!({"path": "calculator.py"})),
        tool_call(
            "write_file",
            serde_json::json!({"path": "calculator.py", "content": "gone\n"}),
        ),
        text("I could not write the file."),
    ])
    .await;
    let ws = copy_workspace();
    let before = std::fs::read(ws.path().join("calculator.py")).unwrap();
    let out = run_exec(&["overwrite it"], &model.base_url(), ws.path()).await;
    assert_eq!(
        std::fs::read(ws.path().join("calculator.py")).unwrap(),
        before
    );
    // The answer passed the gate (nothing changed), but a run that had to
    // decline is not a success, and it says how to approve (issue 16).
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("1 approval declined")
            && err.contains("--yes")
            && err.contains("run on a terminal"),
        "{err}"
    );
    assert!(
        stdout(&out).contains("Final answer accepted"),
        "{}",
        stdout(&out)
    );
    let requests = model.requests().await;
    let result = tool_messages(&requests[2])[1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        result.contains("declined") && result.contains("--yes"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn json_output_is_one_event_per_line() {
    let model = MockModel::start(vec![
        tool_call("list_files", serde_json::json!({})),
        text("Two files."),
    ])
    .await;
    let ws = copy_workspace();
    let out = run_exec(&["--json", "list"], &model.base_url(), ws.path()).await;
    assert_eq!(out.status.code(), Some(0));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"task_started"));
    assert!(
        kinds.contains(&"tool_finished") && kinds.contains(&"final_answer"),
        "{kinds:?}"
    );
    let finished = &events[events.len() - 2];
    assert_eq!(finished["event"], "task_finished");
    assert_eq!(events.last().unwrap()["event"], "changed_files");
    let answer = events
        .iter()
        .find(|e| e["event"] == "final_answer")
        .unwrap();
    assert_eq!(
        answer["receipt"]["files"],
        serde_json::json!([]),
        "the receipt is in the JSON output"
    );
    assert_eq!(finished["reason"]["reason"], "answered");
}

#[test]
fn missing_key_for_a_remote_server_is_exit_2_with_a_clear_line() {
    let ws = copy_workspace();
    let mut cmd = Command::new(stepwise_bin());
    let out = hermetic_env(&mut cmd)
        .current_dir(ws.path())
        .args([
            "exec",
            "--base-url",
            "https://api.example.invalid/v1",
            "--workspace",
            ".",
        ])
        .arg("task")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("OPENAI_API_KEY") && err.contains(".env"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn key_from_dot_env_is_used_and_never_printed() {
    // A .env in the current directory supplies the key; the remote URL then passes
    // validation, and the run fails only at connecting (nothing listens on port 9).
    let ws = copy_workspace();
    std::fs::write(
        ws.path().join(".env"),
        "OPENAI_API_KEY=sk-test-dotenv-secret\n",
    )
    .unwrap();
    let mut cmd = Command::new(stepwise_bin());
    let out = hermetic_env(&mut cmd)
        .current_dir(ws.path())
        .args([
            "exec",
            "--max-retries",
            "0",
            "--base-url",
            "http://127.0.0.2:9/v1",
            "--workspace",
            ".",
            "task",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(all.contains("cannot reach the model server"), "{all}");
    assert!(!all.contains("sk-test-dotenv-secret"), "{all}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dot_env_line_that_cannot_be_parsed_is_skipped_by_number_never_shown() {
    // The project's `.env` belongs to another tool as well: a line dotenv
    // cannot parse holds a secret; the key below it still counts.
    let model = MockModel::start(vec![text("Done.")]).await;
    let ws = copy_workspace();
    std::fs::write(
        ws.path().join(".env"),
        "A=1\nDB PASSWORD=CANARY-hunter2\nOPENAI_API_KEY=sk-below-the-broken-line\n",
    )
    .unwrap();
    let out = run_exec(&["--yes", "t"], &model.base_url(), ws.path()).await;
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(
        stderr(&out).contains(".env line 2 cannot be parsed; skipped"),
        "{all}"
    );
    assert!(!all.contains("CANARY"), "{all}");
    let sent = model.raw_requests().await;
    assert!(
        sent.iter().any(|r| r
            .headers
            .get("authorization")
            .is_some_and(|v| v.as_bytes().ends_with(b"sk-below-the-broken-line"))),
        "the key after the skipped line is used"
    );
}

/// A project `.env` that is not UTF-8, or over 1 MiB, stopped stepwise
/// (exit 2). Its lines that are not text are skipped by number; a file too
/// large is skipped whole with the reason; nothing of either is shown.
#[tokio::test(flavor = "multi_thread")]
async fn a_dot_env_that_is_not_text_or_too_large_is_skipped_and_stepwise_starts() {
    let mut bytes = b"A=1\nDB_PASSWORD=CANARY-\xff\xfehunter2\n".to_vec();
    bytes.extend_from_slice(b"OPENAI_API_KEY=sk-below-the-binary-line\n");
    let large = format!("OTHER=CANARY-large\n{}", "A=1\n".repeat(300_000));
    for (contents, said) in [
        (bytes, ".env line 2 is not UTF-8 text; skipped"),
        (
            large.into_bytes(),
            ".env is larger than 1024 KiB; it was not read; skipped",
        ),
    ] {
        let model = MockModel::start(vec![text("Done.")]).await;
        let ws = copy_workspace();
        std::fs::write(ws.path().join(".env"), contents).unwrap();
        let out = run_exec(&["--yes", "t"], &model.base_url(), ws.path()).await;
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(0), "{all}");
        assert!(stderr(&out).contains(said), "{all}");
        assert!(!all.contains("CANARY") && !all.contains("hunter2"), "{all}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn empty_streamed_replies_with_tools_offered_point_at_the_json_protocol() {
    // Ollama streaming for a model without tool streaming: the calls are
    // dropped and every reply arrives empty.
    let model = MockModel::start(vec![text(""), text(""), text("")]).await;
    let ws = copy_workspace();
    let out = run_exec(
        &["--yes", "Add a divide function"],
        &model.base_url(),
        ws.path(),
    )
    .await;
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("the server may not stream tool calls") && all.contains("try --protocol json"),
        "{all}"
    );
    assert_eq!(model.requests().await.len(), 3);
    // Under the JSON protocol no tools are offered: the hint would be wrong.
    let model = MockModel::start(vec![
        json_completion(""),
        json_completion(""),
        json_completion(""),
    ])
    .await;
    let out = run_exec(
        &["--yes", "--protocol", "json", "Add a divide function"],
        &model.base_url(),
        ws.path(),
    )
    .await;
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("your reply was empty"), "{all}");
    assert!(!all.contains("may not stream tool calls"), "{all}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_past_its_cap_stops_with_a_clear_error_and_nothing_runs() {
    let piece = "x".repeat(512 * 1024);
    // One call's arguments, streamed in pieces, grow past 4 MiB.
    let mut chunks = vec![
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "write_file", "arguments": "{\"path\": \"big.py\", \"content\": \""}}]}}]}).to_string(),
    ];
    for _ in 0..10 {
        chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}}]}).to_string());
    }
    chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"}"}}]}, "finish_reason": "tool_calls"}]}).to_string());
    let arguments = Reply::Sse { chunks, done: true };
    // One event of 17 MiB, and a body that is not streamed of 17 MiB.
    let huge = "y".repeat(17 * 1024 * 1024);
    let event = Reply::Sse {
        chunks: vec![json!({"choices": [{"index": 0, "delta": {"content": huge}}]}).to_string()],
        done: true,
    };
    let body = json_completion(&huge);
    for (reply, said) in [
        (
            arguments,
            "the arguments of one tool call (write_file) passed 4 MiB",
        ),
        (event, "one event of the stream passed 16 MiB"),
        (body, "the reply's body passed 16 MiB"),
    ] {
        let model = MockModel::start(vec![reply]).await;
        let ws = copy_workspace();
        let out = run_exec(&["--yes", "Write a big file"], &model.base_url(), ws.path()).await;
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            &all[..all.len().min(2000)]
        );
        assert!(
            all.contains(said) && all.contains("far above any real reply"),
            "{said}: {}",
            &all[..all.len().min(2000)]
        );
        assert!(!ws.path().join("big.py").exists());
        assert_eq!(model.requests().await.len(), 1, "not retried");
    }
}

#[test]
fn missing_workspace_is_a_usage_error() {
    let mut cmd = Command::new(stepwise_bin());
    let out = hermetic_env(&mut cmd)
        .args([
            "exec",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--workspace",
            "/nonexistent/ws",
            "t",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/ws"));
}

#[tokio::test(flavor = "multi_thread")]
async fn http_errors_end_the_task_with_the_server_message() {
    let model = MockModel::start(vec![error(401, "Incorrect API key provided")]).await;
    let ws = copy_workspace();
    let out = run_exec(&["--yes", "t"], &model.base_url(), ws.path()).await;
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("HTTP 401") && text.contains("Incorrect API key"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_without_any_tool_says_so_in_the_receipt_and_exits_0() {
    let model = MockModel::start(vec![text("It is done, trust me.")]).await;
    let ws = copy_workspace();
    let out = run_exec(&["fix the bug"], &model.base_url(), ws.path()).await;
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("no tool was used: nothing was read, changed or tested"),
        "{}",
        stdout(&out)
    );

    let model = MockModel::start(vec![text("It is done, trust me.")]).await;
    let out = run_exec(&["--json", "fix the bug"], &model.base_url(), ws.path()).await;
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["event"] == "final_answer")
        .unwrap_or_default();
    assert_eq!(answer["receipt"]["no_tool_used"], true);

    // After a tool call the line is not printed.
    let model = MockModel::start(vec![
        tool_call("list_files", serde_json::json!({})),
        text("Two files."),
    ])
    .await;
    let out = run_exec(&["list"], &model.base_url(), ws.path()).await;
    assert!(
        !stdout(&out).contains("no tool was used"),
        "{}",
        stdout(&out)
    );
}

#[tokio::test]
async fn a_window_too_small_for_the_prompt_and_tools_is_a_configuration_error_with_numbers() {
    let model = MockModel::start(vec![text("never")]).await;
    let ws = copy_workspace();
    let home = tempfile::tempdir().unwrap();
    let args = ["--context-window", "1500", "--model", "tiny", "say hi"];
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .arg("exec")
        .args(["--base-url", &model.base_url()])
        .arg("--workspace")
        .arg(ws.path())
        .args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the context window of 1500 tokens cannot hold the system prompt (about ")
            && err.contains("the tool definitions (about ")
            && err.contains("one step (512): it needs at least "),
        "{err}"
    );
    assert!(model.requests().await.is_empty(), "no request is sent");
    // A window that holds them starts as usual.
    let out = run_exec(
        &["--context-window", "8192", "say hi"],
        &model.base_url(),
        ws.path(),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[tokio::test]
async fn the_token_limit_is_configurable_and_keep_alives_do_not_stretch_it() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // A server that only ever sends keep-alive comments.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = socket.read(&mut buf).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                let _ = socket.write_all(head.as_bytes()).await;
                for _ in 0..300 {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    let ping = ": keep-alive\n\n";
                    let chunk = format!("{:x}\r\n{ping}\r\n", ping.len());
                    if socket.write_all(chunk.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let ws = copy_workspace();
    let started = std::time::Instant::now();
    let args = [
        "--stream-idle-timeout",
        "1",
        "--stream-token-timeout",
        "2",
        "--max-retries",
        "0",
        "say hi",
    ];
    let out = run_exec(&args, &format!("http://{addr}/v1"), ws.path()).await;
    let err = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("kept the connection alive but sent no token of the reply for 2s"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}
