//! `SetModel` through a spawned session against the mock server: the next
//! request asks for the new model and `ModelChanged` is sent and recorded
//! in the transcript; a scripted model refuses with an error.

use crate::support::*;
use serde_json::Value;
use stepwise::agent::{AgentCommand, AgentEvent, LoopSettings, Session, spawn_agent};
use tokio_util::sync::CancellationToken;

async fn next_event(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
    want: &str,
) -> Value {
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv())
            .await
            .expect("an event in time")
            .expect("the session is alive");
        let value = serde_json::to_value(&event).unwrap();
        if value["event"] == want {
            return value;
        }
    }
}

#[tokio::test]
async fn set_model_switches_the_next_request_and_says_so() {
    let model = MockModel::start(vec![text("first"), text("second")]).await;
    let ws = copy_workspace();
    let mut session = session_on(&model, ws.path(), LoopSettings::default());
    // The model each checkpoint names, for a later resume.
    let saved = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = saved.clone();
    session.on_checkpoint(Box::new(move |s| {
        sink.lock().unwrap().push(s.model.clone())
    }));
    let (tx, from_core) = tokio::sync::mpsc::unbounded_channel();
    // Through the transcript tee, as the UI runs it.
    let logs = tempfile::tempdir().unwrap();
    let dir =
        cap_std::fs::Dir::open_ambient_dir(logs.path(), cap_std::ambient_authority()).unwrap();
    let log = stepwise::audit::AuditLog::create(&dir, logs.path()).unwrap();
    let transcript = log.path().to_path_buf();
    let log = std::sync::Arc::new(std::sync::Mutex::new(log));
    let mut rx = stepwise::audit::tee(from_core, log, "user");
    let agent = spawn_agent(session, tx);
    let run = |task: &str| AgentCommand::RunTask {
        task: task.into(),
        cancel: CancellationToken::new(),
    };
    agent.commands.send(run("one")).unwrap();
    next_event(&mut rx, "task_finished").await;
    agent
        .commands
        .send(AgentCommand::SetModel("other-model".into()))
        .unwrap();
    let changed = next_event(&mut rx, "model_changed").await;
    assert_eq!(changed["model"], "other-model");
    agent.commands.send(run("two")).unwrap();
    next_event(&mut rx, "task_finished").await;
    let models: Vec<_> = model
        .requests()
        .await
        .iter()
        .map(|r| r["model"].clone())
        .collect();
    assert_eq!(models, ["mock-model", "other-model"]);
    assert_eq!(
        saved.lock().unwrap().last().cloned().flatten().as_deref(),
        Some("other-model"),
        "a resume goes on with the switched model"
    );
    let recorded = std::fs::read_to_string(&transcript).unwrap();
    let line = recorded
        .lines()
        .find(|l| l.contains("\"model_changed\""))
        .unwrap_or_else(|| panic!("no model_changed in {recorded}"));
    assert!(line.contains("\"other-model\""), "{line}");
}

#[tokio::test]
async fn a_scripted_model_refuses_to_switch() {
    let script = stepwise::llm::Script::parse(stepwise::setup::DEMO_SCRIPT).unwrap();
    let scripted = stepwise::llm::ScriptedModel::new(script, "demo");
    let ws = copy_workspace();
    let session = Session::new(
        LoopSettings::default(),
        std::sync::Arc::new(scripted),
        stepwise::tools::Workspace::open(ws.path()).unwrap(),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let agent = spawn_agent(session, tx);
    agent
        .commands
        .send(AgentCommand::SetModel("x".into()))
        .unwrap();
    let error = next_event(&mut rx, "error").await;
    assert!(
        error["message"].as_str().unwrap().contains("cannot switch"),
        "{error}"
    );
    agent
        .commands
        .send(AgentCommand::SetModel(" ".into()))
        .unwrap();
    let error = next_event(&mut rx, "error").await;
    assert!(
        error["message"].as_str().unwrap().contains("model name"),
        "{error}"
    );
}

#[tokio::test]
async fn list_models_answers_with_the_current_model_and_the_servers_list() {
    let api = crate::support::anthropic::MockApi::models(&["m-b", "m-a"], None).await;
    let ws = copy_workspace();
    let http = stepwise::llm::HttpModel::new(&format!("{}/v1", api.uri()), "m-a", None).unwrap();
    let session = Session::new(
        LoopSettings::default(),
        std::sync::Arc::new(http),
        stepwise::tools::Workspace::open(ws.path()).unwrap(),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let agent = spawn_agent(session, tx);
    agent.commands.send(AgentCommand::ListModels).unwrap();
    let listed = next_event(&mut rx, "models_listed").await;
    assert_eq!(
        listed["models"],
        serde_json::json!(["m-a", "m-b"]),
        "{listed}"
    );
    assert_eq!(listed["current"], "m-a");
    assert!(listed["error"].is_null());
}

/// The change-log length of each checkpoint a task of three writes (in
/// one reply) hands over, with checkpoints that take `cost` each and the
/// model's last reply `think` ms.
async fn checkpointed_changes(cost: std::time::Duration, think: u64) -> Vec<usize> {
    let write = |n: u32| {
        (
            "write_file",
            serde_json::json!({"path": format!("n{n}.txt"), "content": "x\n"}),
        )
    };
    let model = MockModel::start(vec![
        tool_calls(&[write(1), write(2), write(3)]),
        delayed(text("Done."), think),
    ])
    .await;
    let ws = copy_workspace();
    let mut session = session_on(&model, ws.path(), LoopSettings::default());
    let saved = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = saved.clone();
    session.on_checkpoint(Box::new(move |s| {
        std::thread::sleep(cost);
        sink.lock().unwrap().push(s.changes.len())
    }));
    drive(
        &mut session,
        Some("write three"),
        CancellationToken::new(),
        |_| stepwise::agent::Decision::Approve,
    )
    .await;
    saved.lock().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_change_is_checkpointed_at_once_while_checkpoints_are_cheap() {
    let counts = checkpointed_changes(std::time::Duration::ZERO, 0).await;
    // The task's start, then one per change.
    assert_eq!(counts, [0, 1, 2, 3], "{counts:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_put_off_checkpoint_is_written_once_the_models_next_reply_is_in() {
    // Each checkpoint costs 300 ms: after the first change, the next two
    // would pass the budget (50 ms and a tenth of the task's time) and are
    // put off; the model's 4 s for its last reply pays for them.
    let counts = checkpointed_changes(std::time::Duration::from_millis(300), 4000).await;
    assert_eq!(counts, [0, 1, 3], "{counts:?}");
}
