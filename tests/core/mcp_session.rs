//! MCP calls in the core, against `tests/support/mcp_server.py`: `a`
//! approves one MCP tool for the task by its full name (not the server's
//! other tools, and not the next task), and a spawned session starts its
//! servers before any task, reporting them as `McpServer` events.

use crate::support::*;
use serde_json::{Value, json};
use std::path::Path;
use stepwise::agent::{AgentEvent, Decision, LoopSettings, spawn_agent};
use stepwise::config::mcp::{McpServerSettings, McpSettings};
use tokio_util::sync::CancellationToken;

fn settings_with_server() -> LoopSettings {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/mcp_server.py");
    LoopSettings {
        mcp: McpSettings {
            servers: vec![McpServerSettings {
                name: "t".into(),
                command: vec!["python3".into(), script.display().to_string()],
                env: Default::default(),
                read_only: Vec::new(),
                timeout_secs: 10,
                cwd: None,
                env_vars: Vec::new(),
            }],
        },
        ..LoopSettings::default()
    }
}

fn asked(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["event"] == "approval_requested")
        .map(|e| {
            format!(
                "{}:{}",
                e["action"]["server"].as_str().unwrap_or(""),
                e["action"]["tool"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn approving_an_mcp_tool_for_the_task_covers_that_tool_only() {
    let model = MockModel::start(vec![
        tool_call("mcp__t__echo", json!({"text": "one"})),
        tool_call("mcp__t__echo", json!({"text": "two"})),
        tool_call("mcp__t__add", json!({"a": 1, "b": 2})),
        text("Done."),
        tool_call("mcp__t__echo", json!({"text": "three"})),
        text("Done again."),
    ])
    .await;
    let ws = copy_workspace();
    let mut session = session_on(&model, ws.path(), settings_with_server());
    let decide = |r: &stepwise::agent::ApprovalRequest| {
        assert!(r.allow_for_task);
        Decision::ApproveToolForTask
    };
    let (_, events) = drive(
        &mut session,
        Some("Echo twice"),
        CancellationToken::new(),
        decide,
    )
    .await;
    assert_eq!(
        asked(&events),
        ["t:echo", "t:add"],
        "the second echo is covered"
    );
    let auto: Vec<bool> = events
        .iter()
        .filter(|e| e["event"] == "tool_running")
        .map(|e| e["auto_approved"].as_bool().unwrap())
        .collect();
    assert_eq!(auto, [false, true, false]);
    let requests = model.requests().await;
    let last = tool_messages(&requests[3]);
    assert!(
        last[2]["content"]
            .as_str()
            .unwrap()
            .contains("\"result\":\"3\""),
        "{last:?}"
    );
    // A new task asks again.
    let (_, events) = drive(
        &mut session,
        Some("Echo again"),
        CancellationToken::new(),
        |_| Decision::Approve,
    )
    .await;
    assert_eq!(asked(&events), ["t:echo"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn revoking_an_mcp_tool_takes_back_its_approval_for_the_task() {
    let model = MockModel::start(vec![
        tool_call("mcp__t__echo", json!({"text": "one"})),
        tool_call("mcp__t__echo", json!({"text": "two"})),
        text("Done."),
    ])
    .await;
    let ws = copy_workspace();
    let mut session = session_on(&model, ws.path(), settings_with_server());
    let revoker = session.revoker();
    let decide = move |_: &stepwise::agent::ApprovalRequest| {
        // As F3 would, right after the grant.
        revoker.revoke(vec![stepwise::tools::ToolId::mcp("t", "echo")]);
        Decision::ApproveToolForTask
    };
    let (_, events) = drive(
        &mut session,
        Some("Echo twice"),
        CancellationToken::new(),
        decide,
    )
    .await;
    assert_eq!(
        asked(&events),
        ["t:echo", "t:echo"],
        "the revoke made it ask again"
    );
    let scopes: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "scopes_changed")
        .map(|e| &e["approved"])
        .collect();
    assert_eq!(
        scopes.first(),
        Some(&&json!(["mcp__t__echo"])),
        "{scopes:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn no_auto_approve_mcp_makes_every_mcp_call_ask() {
    let model = MockModel::start(vec![
        tool_call("mcp__t__echo", json!({"text": "one"})),
        tool_call("mcp__t__echo", json!({"text": "two"})),
        text("Done."),
    ])
    .await;
    let ws = copy_workspace();
    let settings = LoopSettings {
        scope_policy: stepwise::agent::step::scopes::ScopePolicy::new(
            &[stepwise::tools::ToolSelector::AnyMcp],
            &[],
        ),
        ..settings_with_server()
    };
    let mut session = session_on(&model, ws.path(), settings);
    let decide = |r: &stepwise::agent::ApprovalRequest| {
        assert!(!r.allow_for_task, "configuration forbids it");
        Decision::ApproveToolForTask
    };
    let (_, events) = drive(
        &mut session,
        Some("Echo twice"),
        CancellationToken::new(),
        decide,
    )
    .await;
    assert_eq!(asked(&events), ["t:echo", "t:echo"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spawned_session_starts_its_servers_before_any_task() {
    let model = MockModel::start(vec![]).await;
    let ws = copy_workspace();
    let session = session_on(&model, ws.path(), settings_with_server());
    let (events, mut inbox) = tokio::sync::mpsc::unbounded_channel();
    let handle = spawn_agent(session, events);
    let report = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while let Some(event) = inbox.recv().await {
            if let AgentEvent::McpServer(report) = event {
                return Some(report);
            }
        }
        None
    })
    .await
    .expect("a report in time")
    .expect("a report");
    assert_eq!(report.server, "t");
    assert_eq!(report.state, stepwise::mcp::ServerState::Running);
    assert!(
        report.tools.contains(&"mcp__t__echo".to_string()),
        "{:?}",
        report.tools
    );
    assert!(model.requests().await.is_empty(), "no task was sent");
    drop(handle);
}
