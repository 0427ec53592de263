//! A session as a front end sees it: where the key goes, the project rules,
//! what the spawned agent reports first, and what `/continue` may resume.

use crate::support::*;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use stepwise::agent::{AgentEvent, FinishReason, LoopSettings, RetryPolicy, Session};
use stepwise::config::Protocol;
use stepwise::llm::HttpModel;
use stepwise::tools::Workspace;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{approve, kinds, run, session};

#[tokio::test(flavor = "multi_thread")]
async fn the_api_key_goes_only_into_the_authorization_header() {
    let model = MockModel::start(vec![text("hi")]).await;
    let ws = copy_workspace();
    let key = stepwise::config::ApiKey::new("sk-header-only").unwrap();
    let http = HttpModel::new(&model.base_url(), "m", Some(key)).unwrap();
    let mut s = Session::new(
        LoopSettings {
            max_steps: 5,
            test_timeout: Duration::from_secs(5),
            protocol: Protocol::Tools,
            retry: RetryPolicy::default(),
            ..LoopSettings::default()
        },
        Arc::new(http),
        Workspace::open(ws.path()).unwrap(),
    );
    let (reason, events) = run(&mut s, "hello", approve).await;
    assert_eq!(reason, FinishReason::Answered);
    let raw = model.raw_requests().await;
    assert_eq!(
        raw[0].headers.get("authorization").unwrap(),
        "Bearer sk-header-only"
    );
    assert!(!String::from_utf8_lossy(&raw[0].body).contains("sk-header-only"));
    assert!(
        !serde_json::to_string(&events)
            .unwrap()
            .contains("sk-header-only")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn project_rules_reach_the_model_and_are_reread_per_task() {
    let model = MockModel::start(vec![text("ok"), text("ok again")]).await;
    let ws = copy_workspace();
    std::fs::write(ws.path().join("AGENTS.md"), "Always use type hints.\n").unwrap();
    let mut s = session(&model, ws.path(), 5, Protocol::Tools);
    let (_, events) = run(&mut s, "first", approve).await;
    assert_eq!(events[0]["rules"], json!(["AGENTS.md"]));
    std::fs::write(ws.path().join("AGENTS.md"), "Never use global state.\n").unwrap();
    run(&mut s, "second", approve).await;
    let requests = model.requests().await;
    let system = |i: usize| {
        requests[i]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        system(0).contains("Always use type hints.")
            && system(0).contains("Project rules (from AGENTS.md)")
    );
    assert!(system(1).contains("Never use global state.") && !system(1).contains("type hints"));
    assert_eq!(
        requests[1]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "system")
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_spawned_agent_reports_its_rule_files_first() {
    let model = MockModel::start(vec![]).await;
    let ws = copy_workspace();
    std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
    std::fs::write(ws.path().join("AGENTS.md"), "Always use type hints.\n").unwrap();
    std::fs::write(ws.path().join(".stepwise/rules.md"), "Be brief.\n").unwrap();
    let s = session(&model, ws.path(), 5, Protocol::Tools);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let agent = stepwise::agent::spawn_agent(s, tx);
    match rx.recv().await {
        Some(AgentEvent::SessionReady {
            rules,
            sandbox,
            limits,
        }) => {
            assert_eq!(rules, ["AGENTS.md", ".stepwise/rules.md"]);
            assert!(
                !sandbox.is_empty(),
                "the session says how tests are confined"
            );
            assert!(limits.contains("disk"), "{limits}");
        }
        other => panic!("expected SessionReady first, got {other:?}"),
    }
    drop(agent.commands);
    let _ = agent.task.await;
    assert!(model.requests().await.is_empty(), "no model request for it");
}

#[tokio::test(flavor = "multi_thread")]
async fn continuing_a_conversation_without_a_task_is_refused_by_the_core() {
    let model = MockModel::start(vec![text("first answer"), text("resumed")]).await;
    let ws = copy_workspace();
    let mut s = session(&model, ws.path(), 5, Protocol::Tools);
    let (reason, events) = drive(&mut s, None, CancellationToken::new(), approve).await;
    assert_eq!(kinds(&events), ["resume_refused"], "nothing else happens");
    assert_eq!(
        events[0]["message"],
        "nothing to continue: send a task first"
    );
    assert!(matches!(reason, FinishReason::Error(_)));
    assert!(model.requests().await.is_empty());
    // After a task there is something to continue; after /clear there is not.
    run(&mut s, "the task", approve).await;
    let (_, events) = drive(&mut s, None, CancellationToken::new(), approve).await;
    assert_eq!(events[0]["event"], "task_started");
    s.clear();
    let (_, events) = drive(&mut s, None, CancellationToken::new(), approve).await;
    assert_eq!(kinds(&events), ["resume_refused"]);
    assert_eq!(model.requests().await.len(), 2);
}
