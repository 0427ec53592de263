//! MCP servers through the real binary: `exec` against the mock model and the
//! small MCP server of `tests/support/mcp_server.py`. A call waits for
//! approval (declined without `--yes`), its result reaches the model in the
//! next request, read-only tools run unasked, a hang times out, a crash or a
//! garbage answer is reported and the server's tools leave the next request,
//! and a project file's server never starts in an untrusted folder.

use crate::support::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const KEY: &str = "sk-mcp-test-7f3a-secret";

fn server_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/mcp_server.py")
}

/// `[mcp.servers.t]` running the test server, with extra lines for the table.
fn server_table(marker: &Path, extra_args: &[&str], extra: &str) -> String {
    let mut command = vec![
        "python3".to_string(),
        server_script().display().to_string(),
        "--marker".into(),
        marker.display().to_string(),
    ];
    command.extend(extra_args.iter().map(|a| a.to_string()));
    format!(
        "[mcp.servers.t]\ncommand = {}\n{extra}",
        serde_json::to_string(&command).unwrap()
    )
}

struct Setup {
    ws: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Setup {
    /// A workspace copy and a home whose user config holds `user_config`.
    fn new(user_config: &str) -> Setup {
        let ws = copy_workspace();
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".config/stepwise");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("stepwise.toml"), user_config).unwrap();
        Setup { ws, home }
    }

    fn marker(&self) -> PathBuf {
        self.home.path().join("server-started")
    }

    async fn exec(&self, base_url: &str, args: &[&str]) -> Output {
        let mut cmd = Command::new(stepwise_bin());
        hermetic_env(&mut cmd)
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("OPENAI_API_KEY", KEY)
            .env("MY_SECRET_TOKEN", "do-not-pass")
            .current_dir(self.ws.path())
            .args(["exec", "--base-url", base_url, "--workspace"])
            .arg(self.ws.path())
            .args(args);
        tokio::task::spawn_blocking(move || cmd.output().unwrap())
            .await
            .unwrap()
    }
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

/// The content of the last tool message of a request.
fn last_result(request: &Value) -> String {
    let messages = tool_messages(request);
    let last = messages.last().expect("a tool message");
    last["content"].as_str().unwrap_or_default().to_string()
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_waits_for_approval_and_without_yes_is_declined() {
    let setup = Setup::new("");
    let config = server_table(&setup.marker(), &[], "");
    std::fs::write(
        setup.home.path().join(".config/stepwise/stepwise.toml"),
        config,
    )
    .unwrap();
    let model = MockModel::start(vec![
        tool_call("mcp__t__echo", json!({"text": "hello from the model"})),
        text("Nothing was echoed."),
    ])
    .await;
    let out = setup.exec(&model.base_url(), &["Echo something"]).await;
    let err = lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let requests = model.requests().await;
    assert_eq!(requests.len(), 2, "{err}");
    let names = tool_names(&requests[0]);
    for expected in ["read_file", "mcp__t__echo", "mcp__t__add", "mcp__t__hang"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not in {names:?}"
        );
    }
    assert!(!names.iter().any(|n| n.contains("bad")), "{names:?}");
    let result = last_result(&requests[1]);
    assert!(
        result.contains("declined") && !result.contains("hello from the model\""),
        "{result}"
    );
    assert!(err.contains("MCP server t started"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn approved_results_reach_the_model_and_read_only_tools_run_unasked() {
    let setup = Setup::new("");
    // A provider's key named in the server's own `env` is left out too.
    let config = server_table(
        &setup.marker(),
        &[],
        "read_only = [\"env_names\"]\nenv = { ANTHROPIC_API_KEY = \"sk-ant-planted\", SERVER_OPTION = \"1\" }\n",
    );
    std::fs::write(
        setup.home.path().join(".config/stepwise/stepwise.toml"),
        config,
    )
    .unwrap();
    // Without --yes: only the read-only tool may run.
    let model = MockModel::start(vec![
        tool_call("mcp__t__env_names", json!({})),
        text("Listed."),
    ])
    .await;
    let out = setup.exec(&model.base_url(), &["List the names"]).await;
    let err = lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let requests = model.requests().await;
    let names = last_result(&requests[1]);
    assert!(
        names.contains("PATH") && names.contains("SERVER_OPTION"),
        "{names}"
    );
    for hidden in ["OPENAI_API_KEY", "MY_SECRET_TOKEN", "ANTHROPIC_API_KEY"] {
        assert!(
            !names.contains(hidden),
            "{hidden} reached the server: {names}"
        );
    }
    // With --yes: the call runs and its result (text only) is in the next request.
    let model = MockModel::start(vec![
        tool_call("mcp__t__echo", json!({"text": "hello from the model"})),
        tool_call("mcp__t__fail", json!({})),
        tool_call("mcp__t__picture", json!({})),
        text("Echoed."),
    ])
    .await;
    let out = setup
        .exec(&model.base_url(), &["--yes", "Echo something"])
        .await;
    let err = lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let requests = model.requests().await;
    assert_eq!(requests.len(), 4, "{err}");
    let echoed: Value = serde_json::from_str(&last_result(&requests[1])).unwrap();
    assert_eq!(echoed["success"], json!(true));
    assert_eq!(echoed["result"], json!("hello from the model"));
    let failed: Value = serde_json::from_str(&last_result(&requests[2])).unwrap();
    assert_eq!(failed["success"], json!(false));
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .contains("the thing failed"),
        "{failed}"
    );
    let picture = last_result(&requests[3]);
    assert!(
        picture.contains("[image omitted]") && picture.contains("a caption"),
        "{picture}"
    );
    assert!(!picture.contains("AAAA"), "{picture}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hanging_call_times_out_and_the_task_goes_on() {
    let setup = Setup::new("");
    let config = server_table(&setup.marker(), &[], "timeout_secs = 2\n");
    std::fs::write(
        setup.home.path().join(".config/stepwise/stepwise.toml"),
        config,
    )
    .unwrap();
    let model = MockModel::start(vec![
        tool_call("mcp__t__hang", json!({})),
        tool_call("read_file", json!({"path": "calculator.py"})),
        text("The server hung."),
    ])
    .await;
    let out = setup
        .exec(&model.base_url(), &["--yes", "Try the hang"])
        .await;
    let err = lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let requests = model.requests().await;
    assert_eq!(requests.len(), 3, "{err}");
    let result = last_result(&requests[1]);
    assert!(result.contains("did not answer within 2s"), "{result}");
    // The hung server does not outlive the session.
    let pid = std::fs::read_to_string(setup.marker()).unwrap();
    let stat = Path::new("/proc").join(pid.trim()).join("stat");
    let mut alive = true;
    for _ in 0..50 {
        let state = std::fs::read_to_string(&stat).unwrap_or_default();
        // Gone, or a zombie waiting for a reaper: either way not running.
        alive = state
            .rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
            && !state.is_empty();
        if !alive {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!alive, "the hung server {pid} is still running");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_is_reported_and_the_tools_leave_the_next_request() {
    let setup = Setup::new("");
    let config = server_table(&setup.marker(), &[], "");
    std::fs::write(
        setup.home.path().join(".config/stepwise/stepwise.toml"),
        config,
    )
    .unwrap();
    let model = MockModel::start(vec![
        tool_call("mcp__t__crash", json!({})),
        tool_call("mcp__t__echo", json!({"text": "again"})),
        text("The server is gone."),
    ])
    .await;
    let out = setup.exec(&model.base_url(), &["--yes", "Crash it"]).await;
    let err = lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let requests = model.requests().await;
    assert_eq!(requests.len(), 3, "{err}");
    assert!(
        tool_names(&requests[0])
            .iter()
            .any(|n| n == "mcp__t__crash")
    );
    for later in &requests[1..] {
        let names = tool_names(later);
        assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
        assert!(names.iter().any(|n| n == "read_file"), "{names:?}");
    }
    let crashed = last_result(&requests[1]);
    assert!(crashed.contains("exited during the call"), "{crashed}");
    let after = last_result(&requests[2]);
    assert!(after.contains("stopped"), "{after}");
    assert!(
        err.contains("MCP server t stopped") && err.contains("crashing on purpose"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_answers_garbage_is_reported_and_the_session_goes_on() {
    let setup = Setup::new("");
    let config = server_table(&setup.marker(), &["--garbage"], "timeout_secs = 3\n");
    std::fs::write(
        setup.home.path().join(".config/stepwise/stepwise.toml"),
        config,
    )
    .unwrap();
    let model = MockModel::start(vec![text("Fine without it.")]).await;
    let out = setup.exec(&model.base_url(), &["Hello"]).await;
    let err = lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("MCP server t failed"), "{err}");
    let requests = model.requests().await;
    assert!(
        !tool_names(&requests[0])
            .iter()
            .any(|n| n.starts_with("mcp__"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_project_files_server_never_starts_in_an_untrusted_folder() {
    let setup = Setup::new("");
    let config = server_table(&setup.marker(), &[], "");
    std::fs::create_dir_all(setup.ws.path().join(".stepwise")).unwrap();
    std::fs::write(setup.ws.path().join(".stepwise/stepwise.toml"), &config).unwrap();
    let model = MockModel::start(vec![text("hi"), text("hi")]).await;
    let out = setup.exec(&model.base_url(), &["--yes", "Hello"]).await;
    let err = lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not trusted") && err.contains("mcp"), "{err}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!setup.marker().exists(), "the untrusted server ran");
    assert!(model.requests().await.is_empty());
    // Trusted, the same file starts it.
    let out = setup
        .exec(&model.base_url(), &["--yes", "--trust", "Hello"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", lossy(&out.stderr));
    assert!(setup.marker().exists(), "the trusted server did not start");
}

#[test]
fn print_config_shows_the_servers_but_not_their_env_values() {
    let setup = Setup::new(
        "[mcp.servers.t]\ncommand = [\"python3\", \"s.py\"]\nenv = { TOKEN = \"hidden-value\" }\nread_only = [\"echo\"]\n",
    );
    let out = hermetic_env(&mut Command::new(stepwise_bin()))
        .env("HOME", setup.home.path())
        .env("XDG_CONFIG_HOME", setup.home.path().join(".config"))
        .current_dir(setup.ws.path())
        .arg("--print-config")
        .output()
        .unwrap();
    let shown = lossy(&out.stdout);
    let line = shown
        .lines()
        .find(|l| l.starts_with("mcp "))
        .unwrap_or_default();
    assert!(
        line.contains(r#"t = ["python3", "s.py"] env TOKEN read-only echo timeout 60s"#),
        "{shown}"
    );
    assert!(!shown.contains("hidden-value"), "{shown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn servers_start_outside_the_workspace_so_its_files_cannot_shadow_them() {
    let setup = Setup::new("");
    let config_dir = setup.home.path().join(".config/stepwise");
    // The real server, as a module found from the server's own folder.
    std::fs::copy(server_script(), config_dir.join("probe_server.py")).unwrap();
    // A repository's copy of the same module name.
    let planted = setup.home.path().join("shadow-ran");
    let shadow = format!(
        "open({:?}, 'w').write('the workspace copy ran')\n",
        planted.display().to_string()
    );
    std::fs::write(setup.ws.path().join("probe_server.py"), &shadow).unwrap();
    std::fs::write(
        config_dir.join("stepwise.toml"),
        "[mcp.servers.t]\ncommand = [\"python3\", \"-m\", \"probe_server\"]\nread_only = [\"echo\"]\n",
    )
    .unwrap();
    let model = MockModel::start(vec![
        tool_call("mcp__t__echo", json!({"text": "from the real one"})),
        text("Echoed."),
    ])
    .await;
    let out = setup.exec(&model.base_url(), &["Echo"]).await;
    let err = lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!planted.exists(), "the workspace's copy ran: {err}");
    let requests = model.requests().await;
    assert!(
        last_result(&requests[1]).contains("from the real one"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_uri_without_slashes_or_a_glob_never_sends_a_denied_file() {
    let setup = Setup::new("");
    let log = setup.home.path().join("calls.log");
    let log_arg = log.display().to_string();
    let config = server_table(&setup.marker(), &["--log", &log_arg], "");
    std::fs::write(
        setup.home.path().join(".config/stepwise/stepwise.toml"),
        config,
    )
    .unwrap();
    let canary = "CANARY-dotenv-7c1e";
    std::fs::write(
        setup.ws.path().join(".env"),
        format!("DB_PASSWORD={canary}\n"),
    )
    .unwrap();
    // The same file under an innocent name.
    std::fs::hard_link(
        setup.ws.path().join(".env"),
        setup.ws.path().join("notes.txt"),
    )
    .unwrap();
    let root = setup.ws.path().canonicalize().unwrap();
    let root = root.display();
    let model = MockModel::start(vec![
        // The server reads `file:` URIs and expands globs: this one works.
        tool_call(
            "mcp__t__read",
            json!({"path": format!("file:{root}/calculator%2Epy")}),
        ),
        tool_call(
            "mcp__t__read",
            json!({"path": format!("file:{root}/%2Eenv")}),
        ),
        tool_call("mcp__t__read", json!({"path": format!("{root}/.en[v]")})),
        tool_call(
            "mcp__t__read",
            json!({"path": format!("file://localhost{root}/.en?")}),
        ),
        tool_call("mcp__t__read", json!({"path": "*"})),
        tool_call("mcp__t__read", json!({"path": format!("{root}/notes.txt")})),
        text("Done."),
    ])
    .await;
    let out = setup
        .exec(&model.base_url(), &["--yes", "Read the settings"])
        .await;
    let err = lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let requests = model.requests().await;
    assert_eq!(requests.len(), 7, "{err}");
    assert!(
        last_result(&requests[1]).contains("def add"),
        "the server reads file: URIs: {}",
        last_result(&requests[1])
    );
    for request in &requests[2..] {
        let result = last_result(request);
        assert!(
            result.contains("was not sent to the server") && result.contains("is refused"),
            "{result}"
        );
    }
    let sent = serde_json::to_string(&requests).unwrap();
    assert!(!sent.contains(canary), "the secret reached the model");
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        calls.lines().count(),
        1,
        "only the first call was sent: {calls}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_a_call_sets_off_in_the_background_rearms_the_gate_and_is_on_the_receipt() {
    let setup = Setup::new("");
    let config = server_table(&setup.marker(), &[], "");
    std::fs::write(
        setup.home.path().join(".config/stepwise/stepwise.toml"),
        config,
    )
    .unwrap();
    let late = setup.ws.path().canonicalize().unwrap().join("late.py");
    let model = MockModel::start(vec![
        // The server answers at once and writes 600 ms later, after the
        // workspace was compared for the call.
        tool_call(
            "mcp__t__write_later",
            json!({"path": late.display().to_string(), "content": "import os\n", "delay_ms": 600}),
        ),
        delayed(text("Done."), 1500),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done, tested."),
    ])
    .await;
    let out = setup
        .exec(&model.base_url(), &["--yes", "--json", "Set it up"])
        .await;
    let err = lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let events = json_events(&out);
    assert!(late.exists(), "the server wrote the file");
    let refused: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "gate_refused")
        .collect();
    assert_eq!(
        refused.len(),
        1,
        "the late write re-armed the gate: {events:#?}"
    );
    let answer = events
        .iter()
        .find(|e| e["event"] == "final_answer")
        .unwrap();
    let files = answer["receipt"]["files"].as_array().unwrap();
    let made = files.iter().find(|f| f["path"] == "late.py");
    assert!(
        made.is_some_and(|f| f["by"] == "mcp t"),
        "the receipt names the server's write: {}",
        answer["receipt"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn after_an_mcp_call_the_tasks_own_edits_are_not_taken_for_the_servers() {
    let setup = Setup::new("");
    let config = server_table(&setup.marker(), &[], "");
    std::fs::write(
        setup.home.path().join(".config/stepwise/stepwise.toml"),
        config,
    )
    .unwrap();
    let model = MockModel::start(vec![
        tool_call("mcp__t__echo", json!({"text": "hello"})),
        tool_call(
            "write_file",
            json!({"path": "notes.txt", "content": "mine\n"}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done."),
    ])
    .await;
    let out = setup
        .exec(&model.base_url(), &["--yes", "--json", "Take notes"])
        .await;
    let err = lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let events = json_events(&out);
    assert!(
        !events.iter().any(|e| e["event"] == "gate_refused"),
        "{events:#?}"
    );
    let answer = events
        .iter()
        .find(|e| e["event"] == "final_answer")
        .unwrap();
    let files = answer["receipt"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{}", answer["receipt"]);
    assert_eq!(files[0]["path"], "notes.txt");
    assert!(
        files[0]["by"].is_null(),
        "stepwise's own edit: {}",
        files[0]
    );
}
