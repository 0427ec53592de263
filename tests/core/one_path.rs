//! Every tool goes through the same rules: an MCP call is refused before it
//! is sent when its arguments name a denied file; an MCP server's writes are
//! changes of the task (the gate re-arms, the receipt names the server),
//! against `tests/support/mcp_server.py` and against the real filesystem
//! server from npm; and a tool added by registering one unit, without
//! touching the core, is planned, approved, written and gated like the
//! built-in ones.

use crate::support::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use stepwise::agent::{Decision, FinishReason, LoopSettings};
use stepwise::config::mcp::{McpServerSettings, McpSettings};
use stepwise::tools::calls::registry::{
    Action, Args, FileChange, Plan, Reader, Refused, Tool, ToolContext, object_schema,
    string_property,
};
use stepwise::tools::edits::edit;
use stepwise::tools::{Registry, TestCommands, ToolId, ToolName};
use tokio_util::sync::CancellationToken;

fn server(name: &str, command: Vec<String>, read_only: &[&str]) -> LoopSettings {
    LoopSettings {
        mcp: McpSettings {
            servers: vec![McpServerSettings {
                name: name.into(),
                command,
                env: Default::default(),
                read_only: read_only.iter().map(|t| t.to_string()).collect(),
                timeout_secs: 20,
                cwd: None,
                env_vars: Vec::new(),
            }],
        },
        ..LoopSettings::default()
    }
}

/// The mock server, logging each call it receives to `log`.
fn mock_server(log: &Path, read_only: &[&str]) -> LoopSettings {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/mcp_server.py");
    let command = vec![
        "python3".into(),
        script.display().to_string(),
        "--log".into(),
        log.display().to_string(),
    ];
    server("t", command, read_only)
}

fn events_named<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == name).collect()
}

fn final_receipt(events: &[Value]) -> Value {
    events_named(events, "final_answer")
        .first()
        .map(|e| e["receipt"].clone())
        .unwrap_or(Value::Null)
}

fn planted_secret(ws: &Path) -> &'static str {
    let secret = "hunter2-database-password";
    std::fs::write(ws.join(".env.local"), format!("DB_PASSWORD={secret}\n")).unwrap();
    secret
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_call_naming_a_denied_file_is_refused_before_the_server_sees_it() {
    let ws = copy_workspace();
    let secret = planted_secret(ws.path());
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("calls.log");
    let absolute = ws.path().canonicalize().unwrap().join(".env.local");
    let model = MockModel::start(vec![
        tool_call(
            "mcp__t__read",
            json!({"path": absolute.display().to_string()}),
        ),
        tool_call("mcp__t__read", json!({"path": ".env.local"})),
        tool_call("mcp__t__echo", json!({"text": "still here"})),
        text("Done."),
    ])
    .await;
    // Configured read-only: no approval is asked, and the deny list holds all the same.
    let mut session = session_on(&model, ws.path(), mock_server(&log, &["read", "echo"]));
    let (reason, events) = drive(
        &mut session,
        Some("Read it"),
        CancellationToken::new(),
        |_| panic!("read-only tools ask nothing"),
    )
    .await;
    assert_eq!(reason, FinishReason::Answered);
    let finished = events_named(&events, "tool_finished");
    assert_eq!(finished.len(), 3, "{finished:?}");
    for refused in &finished[..2] {
        assert_eq!(refused["status"], "failed", "{refused}");
        let error = refused["result"]["error"].as_str().unwrap_or("");
        assert!(
            error.contains("was not sent to the server") && error.contains(".env.local"),
            "{error}"
        );
    }
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!calls.contains(".env"), "the server received: {calls}");
    assert!(
        calls.contains("still here"),
        "other calls go through: {calls}"
    );
    let sent = serde_json::to_string(&model.requests().await).unwrap();
    assert!(!sent.contains(secret), "the secret reached the model");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_an_mcp_server_writes_rearms_the_gate_and_is_named_in_the_receipt() {
    if !pytest_available() {
        eprintln!("skipped: the sample workspace's tests need pytest");
        return;
    }
    let ws = copy_workspace();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("calls.log");
    let target = ws.path().canonicalize().unwrap().join("calculator.py");
    let old = std::fs::read_to_string(&target).unwrap();
    let new = format!("{old}\n\ndef double(x):\n    return 2 * x\n");
    let model = MockModel::start(vec![
        tool_call(
            "mcp__t__write",
            json!({"path": target.display().to_string(), "content": new}),
        ),
        text("Done: calculator.py has double()."),
        tool_call("run_tests", json!({})),
        text("Done: calculator.py has double(), and the tests pass."),
    ])
    .await;
    let mut session = session_on(&model, ws.path(), mock_server(&log, &[]));
    let (reason, events) = drive(
        &mut session,
        Some("Add double"),
        CancellationToken::new(),
        |_| Decision::Approve,
    )
    .await;
    assert_eq!(reason, FinishReason::Answered, "{events:#?}");
    assert_eq!(
        events_named(&events, "gate_refused").len(),
        1,
        "the server's write re-armed the gate"
    );
    let receipt = final_receipt(&events);
    let files = receipt["files"].as_array().cloned().unwrap_or_default();
    assert_eq!(files.len(), 1, "{receipt}");
    assert_eq!(files[0]["path"], "calculator.py");
    assert_eq!(files[0]["added"], 4, "two blank lines and the function");
    assert_eq!(files[0]["by"], "mcp t");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), new);
    // The server's change is stepwise's to show and to take back.
    let diffs = session.session_diffs();
    assert!(diffs.iter().any(|d| d.path == "calculator.py"), "{diffs:?}");
}

/// The real filesystem server from npm (`@modelcontextprotocol/server-filesystem`),
/// installed by `.ci/run` into `target/test-deps`; elsewhere the test says why
/// it cannot run (and fails under CI, where it must).
fn filesystem_server() -> Option<PathBuf> {
    let installed = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "target/test-deps/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
    );
    let found = installed.is_file() && which("node");
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install the filesystem MCP server (see .ci/run)"
        );
        eprintln!(
            "skipped: the filesystem MCP server is not installed ({}): run `npm install --prefix target/test-deps @modelcontextprotocol/server-filesystem`",
            installed.display()
        );
    }
    found.then_some(installed)
}

fn which(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn real_server(index: &Path, root: &Path, read_only: &[&str]) -> LoopSettings {
    let command = vec![
        "node".into(),
        index.display().to_string(),
        root.display().to_string(),
    ];
    server("filesystem", command, read_only)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_real_filesystem_server_is_governed_like_every_tool() {
    let Some(index) = filesystem_server() else {
        return;
    };
    if !pytest_available() {
        eprintln!("skipped: the sample workspace's tests need pytest");
        return;
    }
    let ws = copy_workspace();
    let secret = planted_secret(ws.path());
    let root = ws.path().canonicalize().unwrap();
    let target = root.join("calculator.py");
    let old = std::fs::read_to_string(&target).unwrap();
    let new = format!("{old}\n\ndef double(x):\n    return 2 * x\n");
    let model = MockModel::start(vec![
        tool_call(
            "mcp__filesystem__read_text_file",
            json!({"path": root.join(".env.local").display().to_string()}),
        ),
        tool_call(
            "mcp__filesystem__write_file",
            json!({"path": target.display().to_string(), "content": new}),
        ),
        text("Done."),
        tool_call("run_tests", json!({})),
        text("Done, tested."),
    ])
    .await;
    let settings = real_server(&index, &root, &["read_text_file"]);
    let mut session = session_on(&model, ws.path(), settings);
    let (reason, events) = drive(
        &mut session,
        Some("Add double"),
        CancellationToken::new(),
        |r| {
            if r.tool != ToolName::RUN_TESTS {
                assert_eq!(r.tool, ToolId::mcp("filesystem", "write_file"));
            }
            Decision::Approve
        },
    )
    .await;
    assert_eq!(reason, FinishReason::Answered, "{events:#?}");
    let finished = events_named(&events, "tool_finished");
    let read = finished[0]["result"]["error"].as_str().unwrap_or("");
    assert!(read.contains("was not sent to the server"), "{read}");
    assert_eq!(finished[1]["status"], "ok", "{}", finished[1]);
    assert_eq!(events_named(&events, "gate_refused").len(), 1);
    let receipt = final_receipt(&events);
    assert_eq!(receipt["files"][0]["path"], "calculator.py", "{receipt}");
    assert_eq!(receipt["files"][0]["by"], "mcp filesystem", "{receipt}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), new);
    let sent = serde_json::to_string(&model.requests().await).unwrap();
    assert!(!sent.contains(secret), "the secret reached the model");
}

/// A sample tool that lives only here: it creates a note file. Adding it
/// takes this unit and one `Registry::with`; the core is not touched.
struct AddNote;

impl AddNote {
    const NAME: ToolName = ToolName::new("add_note");
}

impl Tool for AddNote {
    fn id(&self) -> ToolId {
        Self::NAME.into()
    }

    fn description(&self, _: &TestCommands) -> String {
        "Create a note under notes/. Needs the user's approval.".into()
    }

    fn parameters(&self, _: &TestCommands) -> Value {
        object_schema(
            json!({"name": string_property("The note's name"), "text": string_property("What it says")}),
            &["name", "text"],
        )
    }

    fn plan(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Plan, Refused> {
        let read = Reader::new(Self::NAME, args);
        let name = read.string("name").map_err(|e| Refused::new("", e))?;
        let text = read.string("text").map_err(|e| Refused::new("", e))?;
        let path = format!("notes/{name}.md");
        let edit = edit::prepare_write(ctx.workspace, &path, &format!("{text}\n"))
            .map_err(|e| Refused::new(path.clone(), e.0))?;
        Ok(Plan {
            target: path,
            action: Action::Files(FileChange::Edit(edit)),
        })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_added_by_registering_one_unit_goes_the_one_way_every_tool_goes() {
    if !pytest_available() {
        eprintln!("skipped: the sample workspace's tests need pytest");
        return;
    }
    let ws = copy_workspace();
    let model = MockModel::start(vec![
        tool_call("add_note", json!({"name": "todo", "text": "test double()"})),
        text("Done."),
        tool_call("run_tests", json!({})),
        tool_call("add_note", json!({"name": "../../escape", "text": "x"})),
        text("Done, tested."),
    ])
    .await;
    let settings = LoopSettings {
        registry: Registry::default().with(Arc::new(AddNote)),
        ..LoopSettings::default()
    };
    let mut session = session_on(&model, ws.path(), settings);
    let (reason, events) = drive(
        &mut session,
        Some("Note it"),
        CancellationToken::new(),
        |r| {
            if r.tool != ToolName::RUN_TESTS {
                assert_eq!(r.tool, AddNote::NAME);
            }
            Decision::Approve
        },
    )
    .await;
    assert_eq!(reason, FinishReason::Answered, "{events:#?}");
    let requests = model.requests().await;
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"add_note"), "{offered:?}");
    let asked = events_named(&events, "approval_requested");
    assert_eq!(asked.len(), 2, "the note, then the test run");
    assert_eq!(asked[0]["action"]["kind"], "edit");
    assert_eq!(asked[0]["action"]["path"], "notes/todo.md");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes/todo.md")).unwrap(),
        "test double()\n"
    );
    assert_eq!(events_named(&events, "gate_refused").len(), 1);
    let proposed = events_named(&events, "tool_call_proposed");
    assert_eq!(proposed[0]["kind"], "edit");
    // Its paths are confined like every tool's.
    let finished = events_named(&events, "tool_finished");
    let escape = finished.last().unwrap();
    assert_eq!(escape["status"], "failed", "{escape}");
    assert!(!ws.path().parent().unwrap().join("escape.md").exists());
    let receipt = final_receipt(&events);
    assert_eq!(receipt["files"][0]["path"], "notes/todo.md", "{receipt}");
    assert!(receipt["files"][0].get("by").is_none(), "{receipt}");
}
