//! Context compaction over a long session, the cost estimate and `--max-cost`.

use crate::support::*;
use serde_json::{Value, json};
use stepwise::agent::{Decision, FinishReason, LoopSettings, Session};
use stepwise::config::models::ModelInfo;
use tokio_util::sync::CancellationToken;

fn session(model: &MockModel, dir: &std::path::Path, settings: LoopSettings) -> Session {
    session_on(model, dir, settings)
}

async fn run(s: &mut Session, task: &str) -> (FinishReason, Vec<Value>) {
    drive(s, Some(task), CancellationToken::new(), |_| {
        Decision::Approve
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_session_of_large_reads_stays_under_the_budget_and_completes() {
    let ws = copy_workspace();
    for i in 0..5 {
        std::fs::write(
            ws.path().join(format!("big{i}.txt")),
            format!("{i}").repeat(6_000),
        )
        .unwrap();
    }
    let steps = 300;
    let mut script: Vec<Reply> = (0..steps)
        .map(|i| tool_call("read_file", json!({"path": format!("big{}.txt", i % 5)})))
        .collect();
    script.push(text("Read them all."));
    let model = MockModel::start(script).await;
    let limit = 12_000;
    let mut s = session(
        &model,
        ws.path(),
        LoopSettings {
            max_steps: steps + 5,
            context_limit: limit,
            ..LoopSettings::default()
        },
    );
    let (reason, events) = run(&mut s, "read everything").await;
    assert_eq!(reason, FinishReason::Answered);
    let requests = model.raw_requests().await;
    let (summaries, turns): (Vec<_>, Vec<_>) = requests
        .iter()
        .partition(|r| String::from_utf8_lossy(&r.body).contains(SUMMARIZE_MARKER));
    assert_eq!(turns.len(), steps as usize + 1);
    // 300 steps of call + stub outgrow the budget: older turns get summarized too.
    assert!(!summaries.is_empty());
    let largest = requests
        .iter()
        .map(|r| r.body.len() as u64 / 4)
        .max()
        .unwrap();
    assert!(
        largest <= limit + limit / 20,
        "a request of ~{largest} tokens passed the {limit} budget"
    );
    let compactions: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "compacted")
        .collect();
    // Each compaction makes room for several steps, not one (prompt caches stay useful).
    assert!(
        !compactions.is_empty() && compactions.len() < steps as usize / 3,
        "{}",
        compactions.len()
    );
    assert!(
        compactions
            .iter()
            .all(|c| c["after_tokens"].as_u64() < c["before_tokens"].as_u64())
    );
    // Stubs say what was elided.
    assert!(turns.iter().any(
        |r| String::from_utf8_lossy(&r.body).contains("[read_file big")
            && String::from_utf8_lossy(&r.body).contains("bytes, elided]")
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn when_eliding_is_not_enough_older_turns_are_summarized() {
    let ws = copy_workspace();
    let script = rambling_script();
    let model = MockModel::start(script).await;
    let mut s = session(
        &model,
        ws.path(),
        LoopSettings {
            context_limit: 6_000,
            // The rambling model repeats list_files on purpose: no loop detection here.
            max_repeats: 0,
            ..LoopSettings::default()
        },
    );
    let (reason, events) = run(&mut s, "ramble").await;
    assert_eq!(reason, FinishReason::Answered);
    let summarized: u64 = events
        .iter()
        .filter(|e| e["event"] == "compacted")
        .map(|e| e["summarized"].as_u64().unwrap())
        .sum();
    assert!(summarized > 0, "{events:#?}");
    let bodies = model.requests().await;
    let last = bodies.last().unwrap().to_string();
    assert!(last.contains("Summary of the earlier conversation"));
    assert!(last.contains("ramble"), "the task message is kept");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupt_does_not_wait_for_a_slow_summary() {
    let ws = copy_workspace();
    let script = rambling_script();
    let model = std::sync::Arc::new(
        MockModel::start_with_summary_delay(script, std::time::Duration::from_secs(60)).await,
    );
    let mut s = session(
        &model,
        ws.path(),
        LoopSettings {
            context_limit: 6_000,
            // The rambling model repeats list_files on purpose: no loop detection here.
            max_repeats: 0,
            ..LoopSettings::default()
        },
    );
    let cancel = CancellationToken::new();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move { while rx.recv().await.is_some() {} });
    // Interrupt as soon as the (slow) summary request has reached the server.
    let (trigger, watched) = (cancel.clone(), model.clone());
    tokio::spawn(async move {
        loop {
            let asked = watched.requests().await;
            if asked
                .iter()
                .any(|b| b.to_string().contains(SUMMARIZE_MARKER))
            {
                trigger.cancel();
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    });
    let started = std::time::Instant::now();
    let reason = s.run_task("ramble", &tx, cancel).await;
    drop(tx);
    assert_eq!(reason, FinishReason::Cancelled);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let bodies = model.requests().await;
    assert!(
        bodies
            .iter()
            .any(|b| b.to_string().contains(SUMMARIZE_MARKER)),
        "the summary was being waited for when the interrupt came"
    );
}

/// Six replies of long assistant text plus a tool call, then a final answer:
/// more than eliding tool results can fit into a small budget.
fn rambling_script() -> Vec<Reply> {
    let chatter = "I am thinking out loud at length. ".repeat(200);
    let mut script: Vec<Reply> = (0..6)
        .map(|_| Reply::Sse {
            chunks: vec![
                json!({"choices":[{"index":0,"delta":{"content": chatter}}]}).to_string(),
                json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":format!("c{}", rand_id()),"function":{"name":"list_files","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}).to_string(),
            ],
            done: true,
        })
        .collect();
    script.push(text("done"));
    script
}

fn rand_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[tokio::test(flavor = "multi_thread")]
async fn cost_is_estimated_from_prices_and_max_cost_stops_the_task() {
    let ws = copy_workspace();
    let model = MockModel::start(vec![
        tool_call("list_files", json!({})),
        tool_call("list_files", json!({})),
        tool_call("list_files", json!({})),
        text("never reached"),
    ])
    .await;
    let pricing = ModelInfo {
        context_window: None,
        input: Some(1000.0),
        cached_input: None,
        cache_write_input: None,
        output: Some(1000.0),
    };
    let mut s = session(
        &model,
        ws.path(),
        LoopSettings {
            pricing: Some(pricing),
            max_cost: Some(0.000_001),
            ..LoopSettings::default()
        },
    );
    let (reason, events) = run(&mut s, "list").await;
    assert_eq!(reason, FinishReason::CostLimit);
    assert_eq!(
        model.requests().await.len(),
        1,
        "stopped before the second request"
    );
    let cost = events.iter().find(|e| e["event"] == "cost").unwrap();
    assert!(cost["task_usd"].as_f64().unwrap() > 0.0);
    let finished = events.last().unwrap();
    assert_eq!(finished["reason"]["reason"], "cost_limit");
    assert!(finished["cost_usd"].as_f64().unwrap() > 0.0);
    assert!(finished["usage"]["completion_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_prices_give_no_cost_events() {
    let ws = copy_workspace();
    let model = MockModel::start(vec![text("hi")]).await;
    let mut s = session(&model, ws.path(), LoopSettings::default());
    let (_, events) = run(&mut s, "hi").await;
    assert!(events.iter().any(|e| e["event"] == "usage"));
    assert!(!events.iter().any(|e| e["event"] == "cost"));
    assert_eq!(events.last().unwrap()["cost_usd"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_tool_result_is_cut_to_what_is_left_of_the_budget() {
    let ws = copy_workspace();
    let big: String = (0..1_600)
        .map(|i| format!("line {i:05} of a large file\n"))
        .collect();
    assert!(big.len() > 40_000);
    std::fs::write(ws.path().join("big.txt"), &big).unwrap();
    let model = MockModel::start(vec![
        tool_call("read_file", json!({"path": "big.txt"})),
        text("read the head"),
    ])
    .await;
    // --context-window 6000 at the default 70 % budget.
    let limit = 4_200;
    let mut s = session(
        &model,
        ws.path(),
        LoopSettings {
            context_limit: limit,
            ..LoopSettings::default()
        },
    );
    let (reason, events) = run(&mut s, "read big.txt").await;
    assert_eq!(reason, FinishReason::Answered);
    let requests = model.requests().await;
    let sizes: Vec<u64> = requests
        .iter()
        .map(|r| r.to_string().len() as u64 / 4)
        .collect();
    // The budget is an estimate (about four bytes a token); the window is 6000.
    assert!(sizes.iter().all(|&t| t <= limit + limit / 20), "{sizes:?}");
    let result = tool_messages(&requests[1])
        .first()
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_default();
    let result: Value = serde_json::from_str(&result).unwrap_or_default();
    assert!(
        result["content"]
            .as_str()
            .unwrap_or_default()
            .starts_with("line 00000 of a large file\n")
    );
    let note = result["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("cut to fit the context window") && note.contains("of 1600 lines"),
        "{note}"
    );
    // What the user sees of the call is not cut.
    let finished = events
        .iter()
        .find(|e| e["event"] == "tool_finished")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        finished["result"]["content"].as_str().map(str::len),
        Some(big.len())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_compaction_that_removes_nothing_is_not_reported() {
    let ws = copy_workspace();
    let model = MockModel::start(vec![text("ok")]).await;
    let mut s = session(
        &model,
        ws.path(),
        LoopSettings {
            context_limit: 1_000,
            ..LoopSettings::default()
        },
    );
    // The task message alone passes the budget, and there is nothing to elide.
    let (reason, events) = run(&mut s, &"a long task. ".repeat(800)).await;
    assert_eq!(reason, FinishReason::Answered);
    assert!(
        !events.iter().any(|e| e["event"] == "compacted"),
        "{events:#?}"
    );
}

/// The server's context-overflow answer: OpenAI's 400 or llama.cpp's 500.
fn overflow(status: u16) -> Reply {
    let body = if status == 400 {
        json!({"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})
    } else {
        json!({"error":{"code":500,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9100,"n_ctx":8192}})
    };
    Reply::Error {
        status,
        body: body.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_context_overflow_compacts_once_and_tries_again_then_stops_clearly() {
    let reads = || {
        (0..3)
            .map(|_| tool_call("read_file", json!({"path": "calculator.py"})))
            .collect::<Vec<_>>()
    };
    let ws = copy_workspace();
    let mut script = reads();
    script.extend([overflow(400), text("fits now")]);
    let model = MockModel::start(script).await;
    let mut s = session(&model, ws.path(), LoopSettings::default());
    let (reason, events) = run(&mut s, "read").await;
    assert_eq!(reason, FinishReason::Answered);
    assert!(!events.iter().any(|e| e["event"] == "retrying"));
    let compacted: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "compacted")
        .collect();
    assert_eq!(compacted.len(), 1);
    assert!(compacted[0]["elided"].as_u64() > Some(0));
    let sizes: Vec<usize> = model
        .requests()
        .await
        .iter()
        .map(|r| r.to_string())
        .filter(|r| !r.contains(SUMMARIZE_MARKER))
        .map(|r| r.len())
        .collect();
    assert!(sizes[4] < sizes[3], "{sizes:?}");

    // llama.cpp's 500 after the compaction too: stop, saying what to change.
    let mut script = reads();
    script.extend([overflow(500), overflow(500), text("never")]);
    let model = MockModel::start(script).await;
    let mut s = session(&model, ws.path(), LoopSettings::default());
    let (reason, _) = run(&mut s, "read").await;
    let FinishReason::Error(message) = reason else {
        panic!("{reason:?}")
    };
    assert!(
        message.contains("exceeds the available context size")
            && message.contains("still did not fit")
            && message.contains("--context-window"),
        "{message}"
    );
    let turns = model
        .requests()
        .await
        .iter()
        .filter(|r| !r.to_string().contains(SUMMARIZE_MARKER))
        .count();
    assert_eq!(turns, 5);

    // Nothing to compact in the first request: one request, then stop.
    let model = MockModel::start(vec![overflow(400), text("never")]).await;
    let mut s = session(&model, ws.path(), LoopSettings::default());
    let (reason, _) = run(&mut s, "hi").await;
    assert!(
        matches!(reason, FinishReason::Error(ref m) if m.contains("freed nothing")),
        "{reason:?}"
    );
    assert_eq!(model.requests().await.len(), 1);
}
