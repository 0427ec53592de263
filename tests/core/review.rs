//! Reviewing edits in the core: applying only some hunks, writing the user's
//! edited version, and approval scopes (forbidden by configuration, revoked).

use crate::support::*;
use serde_json::{Value, json};
use stepwise::agent::step::scopes::ScopePolicy;
use stepwise::agent::{
    AgentCommand, AgentEvent, Decision, FinishReason, LoopSettings, Session, spawn_agent,
};
use stepwise::tools::{ToolId, ToolName};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub(crate) fn session(model: &MockModel, dir: &std::path::Path, settings: LoopSettings) -> Session {
    session_on(model, dir, settings)
}

/// Run a task answering approvals with `decide`; returns the events.
pub(crate) async fn run(
    s: &mut Session,
    decide: impl Fn(&stepwise::agent::ApprovalRequest) -> Decision + Send + 'static,
) -> (FinishReason, Vec<Value>) {
    drive(s, Some("edit"), CancellationToken::new(), decide).await
}

fn forty_lines() -> String {
    (1..=40).map(|i| format!("line_{i} = {i}\n")).collect()
}

fn three_hunk_version(old: &str) -> String {
    old.replace("line_2 = 2\n", "line_2 = 'two'\n")
        .replace("line_20 = 20\n", "line_20 = 'twenty'\n")
        .replace("line_38 = 38\n", "line_38 = 'thirty-eight'\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn rejecting_the_middle_hunk_writes_exactly_the_other_two_and_tells_the_model() {
    let ws = copy_workspace();
    let old = forty_lines();
    std::fs::write(ws.path().join("lines.py"), &old).unwrap();
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "lines.py"})),
        tool_call(
            "write_file",
            json!({"path": "lines.py", "content": three_hunk_version(&old)}),
        ),
        text("noted"),
    ])
    .await;
    let mut s = session(&model, ws.path(), LoopSettings::default());
    let (_, events) = run(&mut s, |r| {
        if let stepwise::agent::ApprovalAction::Edit { diff, proposed, .. } = &r.action {
            assert_eq!(diff.hunks.len(), 3);
            assert!(
                proposed.contains("'twenty'"),
                "the proposal travels with the request"
            );
        }
        Decision::ApproveHunks {
            accepted: vec![0, 2],
        }
    })
    .await;
    let expected = old
        .replace("line_2 = 2\n", "line_2 = 'two'\n")
        .replace("line_38 = 38\n", "line_38 = 'thirty-eight'\n");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("lines.py")).unwrap(),
        expected
    );
    let requests = model.requests().await;
    let result: Value =
        serde_json::from_str(tool_messages(&requests[2])[1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["success"], true);
    let rejected = result["rejected_hunks"].as_array().unwrap();
    assert_eq!(rejected.len(), 1);
    assert!(
        rejected[0]["lines"]
            .as_str()
            .unwrap()
            .contains("+line_20 = 'twenty'")
    );
    assert_eq!(result["content"], expected);
    let finished = events
        .iter()
        .filter(|e| e["event"] == "tool_finished")
        .nth(1)
        .unwrap();
    assert!(
        finished["summary"]
            .as_str()
            .unwrap()
            .contains("some hunks rejected")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn hunks_of_a_crlf_file_keep_its_line_endings() {
    let ws = copy_workspace();
    let old = forty_lines().replace('\n', "\r\n");
    std::fs::write(ws.path().join("lines.py"), &old).unwrap();
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "lines.py"})),
        tool_call("write_file", json!({"path": "lines.py", "content": three_hunk_version(&forty_lines()).replace('\n', "\r\n")})),
        text("ok"),
    ])
    .await;
    let mut s = session(&model, ws.path(), LoopSettings::default());
    run(&mut s, |_| Decision::ApproveHunks { accepted: vec![1] }).await;
    let written = std::fs::read_to_string(ws.path().join("lines.py")).unwrap();
    assert_eq!(
        written,
        old.replace("line_20 = 20\r\n", "line_20 = 'twenty'\r\n")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rejecting_every_hunk_is_a_decline() {
    let ws = copy_workspace();
    let before = std::fs::read(ws.path().join("calculator.py")).unwrap();
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calculator.py"})),
        tool_call(
            "replace_text",
            json!({"path": "calculator.py", "old": "return a + b", "new": "return b + a"}),
        ),
        text("ok"),
    ])
    .await;
    let mut s = session(&model, ws.path(), LoopSettings::default());
    let (_, events) = run(&mut s, |_| Decision::ApproveHunks { accepted: vec![] }).await;
    assert_eq!(
        std::fs::read(ws.path().join("calculator.py")).unwrap(),
        before
    );
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "tool_finished" && e["status"] == "declined")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_users_edited_version_is_written_and_the_model_sees_the_final_diff() {
    let ws = copy_workspace();
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calculator.py"})),
        tool_call(
            "replace_text",
            json!({"path": "calculator.py", "old": "return a + b", "new": "return a+b"}),
        ),
        text("ok"),
    ])
    .await;
    let mut s = session(&model, ws.path(), LoopSettings::default());
    let original = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    let mine = original.replace("return a + b", "return sum((a, b))");
    let content = mine.clone();
    run(&mut s, move |_| Decision::ApproveEdited {
        content: content.clone(),
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("calculator.py")).unwrap(),
        mine
    );
    let requests = model.requests().await;
    let result: Value =
        serde_json::from_str(tool_messages(&requests[2])[1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["user_modified"], true);
    assert!(
        result["final_diff"]
            .as_str()
            .unwrap()
            .contains("+    return sum((a, b))")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn configuration_can_forbid_approving_a_tool_for_the_whole_task() {
    let ws = copy_workspace();
    let model = MockModel::start(vec![
        tool_call("run_tests", json!({"command": "unittest"})),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("done"),
    ])
    .await;
    let settings = LoopSettings {
        scope_policy: ScopePolicy::new(&[ToolName::RUN_TESTS.into()], &[]),
        ..LoopSettings::default()
    };
    let mut s = session(&model, ws.path(), settings);
    let (_, events) = run(&mut s, |r| {
        assert!(!r.allow_for_task, "the front end is told not to offer it");
        Decision::ApproveToolForTask
    })
    .await;
    assert_eq!(
        events
            .iter()
            .filter(|e| e["event"] == "approval_requested")
            .count(),
        2
    );
}

/// Answers step 1 with "approve for task", the rest with a plain approval;
/// after step 2 finishes, `revoke` is called once. Collects the steps asked
/// and every `ScopesChanged` set.
fn revoking_collector(
    mut rx: mpsc::UnboundedReceiver<AgentEvent>,
    revoke: impl FnOnce() + Send + 'static,
) -> tokio::task::JoinHandle<(Vec<u32>, Vec<Vec<ToolId>>)> {
    tokio::spawn(async move {
        let mut revoke = Some(revoke);
        let (mut asked, mut scopes) = (Vec::new(), Vec::new());
        while let Some(event) = rx.recv().await {
            match event {
                AgentEvent::ApprovalRequested(r) => {
                    asked.push(r.step);
                    let d = if r.step == 1 {
                        Decision::ApproveToolForTask
                    } else {
                        Decision::Approve
                    };
                    let _ = r.reply.send(d);
                }
                AgentEvent::ScopesChanged { approved } => scopes.push(approved),
                AgentEvent::ToolFinished { step: 2, .. } => {
                    if let Some(revoke) = revoke.take() {
                        revoke();
                    }
                }
                AgentEvent::TaskFinished { .. } => break,
                _ => {}
            }
        }
        (asked, scopes)
    })
}

fn three_writes() -> Vec<Reply> {
    vec![
        tool_call("write_file", json!({"path": "a.md", "content": "a\n"})),
        tool_call("write_file", json!({"path": "b.md", "content": "b\n"})),
        // Slow enough that the revocation below lands before step 3 is checked.
        delayed(
            tool_call("write_file", json!({"path": "c.md", "content": "c\n"})),
            300,
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("done"),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_task_approval_asks_again() {
    let ws = copy_workspace();
    let model = MockModel::start(three_writes()).await;
    let mut s = session(&model, ws.path(), LoopSettings::default());
    let revoker = s.revoker();
    let (tx, rx) = mpsc::unbounded_channel();
    let collector = revoking_collector(rx, move || {
        assert!(revoker.revoke(vec![ToolName::WRITE_FILE.into()]));
    });
    s.run_task("three files", &tx, CancellationToken::new())
        .await;
    drop(tx);
    let (asked, scopes) = collector.await.unwrap();
    assert_eq!(
        asked,
        [1, 3, 4],
        "step 2 was covered; after the revoke step 3 asks"
    );
    assert_eq!(
        scopes,
        [vec![ToolId::from(ToolName::WRITE_FILE)], vec![]],
        "the grant and the revoke are reported; the task's end has nothing left to clear"
    );
    assert!(s.approved_tools().is_empty(), "cleared when the task ends");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoke_command_takes_effect_while_the_task_runs() {
    let ws = copy_workspace();
    let model = MockModel::start(three_writes()).await;
    let s = session(&model, ws.path(), LoopSettings::default());
    let (tx, rx) = mpsc::unbounded_channel();
    let agent = spawn_agent(s, tx);
    let commands = agent.commands.clone();
    let collector = revoking_collector(rx, move || {
        let sent = commands.send(AgentCommand::RevokeApprovals(vec![
            ToolName::WRITE_FILE.into(),
        ]));
        assert!(sent.is_ok());
    });
    agent
        .commands
        .send(AgentCommand::RunTask {
            task: "three files".into(),
            cancel: CancellationToken::new(),
        })
        .unwrap();
    let (asked, scopes) = collector.await.unwrap();
    assert_eq!(
        asked,
        [1, 3, 4],
        "the revoke did not wait for the task to end"
    );
    assert_eq!(scopes, [vec![ToolId::from(ToolName::WRITE_FILE)], vec![]]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_task_end_reports_the_approvals_it_clears() {
    let ws = copy_workspace();
    let model = MockModel::start(vec![
        tool_call("write_file", json!({"path": "a.md", "content": "a\n"})),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("done"),
    ])
    .await;
    let mut s = session(&model, ws.path(), LoopSettings::default());
    let (tx, rx) = mpsc::unbounded_channel();
    let collector = revoking_collector(rx, || {});
    s.run_task("one file", &tx, CancellationToken::new()).await;
    drop(tx);
    let (_, scopes) = collector.await.unwrap();
    assert_eq!(scopes, [vec![ToolId::from(ToolName::WRITE_FILE)], vec![]]);
}

#[test]
fn no_auto_approve_from_stepwise_toml_reaches_the_loop_policy() {
    use clap::FromArgMatches;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stepwise.toml");
    std::fs::write(
        &file,
        "no_auto_approve = [\"run_tests\"]\nno_auto_approve_paths = [\"*.toml\"]\n",
    )
    .unwrap();
    let matches = stepwise::config::command()
        .try_get_matches_from(["stepwise"])
        .unwrap();
    let cli = stepwise::config::flags::Cli::from_arg_matches(&matches).unwrap();
    let resolved = stepwise::config::resolve_with_files(&matches, &cli.options, &[file]).unwrap();
    let policy = LoopSettings::from(&resolved.config).scope_policy;
    assert!(!policy.allows(&ToolName::RUN_TESTS.into(), None));
    assert!(!policy.allows(&ToolName::WRITE_FILE.into(), Some("pyproject.toml")));
    assert!(policy.allows(&ToolName::WRITE_FILE.into(), Some("calculator.py")));
}
