//! Reasoning models and parallel calls on the wire, each in its provider's
//! documented or reported shape: DeepSeek's `reasoning_content` goes back on
//! the assistant turn that called tools and never on one that did not;
//! OpenRouter's `reasoning_details` go back merged, in the order they came;
//! Ollama's parallel calls, all streamed at `index: 0` with their own ids,
//! stay separate calls.

use crate::network_faults::{run_with, session_at};
use crate::support::*;
use serde_json::{Value, json};
use std::time::Duration;
use stepwise::agent::FinishReason;
use tokio_util::sync::CancellationToken;

/// A streamed reply of these deltas (one chunk each), then `finish`, a usage chunk and `[DONE]`.
fn chunks(deltas: &[Value], finish: &str) -> Reply {
    let chunk = |delta: &Value, finish: Option<&str>| {
        json!({"id":"r1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":delta,"logprobs":null,"finish_reason":finish}],"usage":null}).to_string()
    };
    let mut out: Vec<String> = deltas.iter().map(|d| chunk(d, None)).collect();
    out.push(chunk(
        &json!({"content":"","reasoning_content":null}),
        Some(finish),
    ));
    out.push(json!({"id":"r1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":9,"total_tokens":39}}).to_string());
    Reply::Sse {
        chunks: out,
        done: true,
    }
}

fn assistant_turns(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "assistant")
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn deepseek_reasoning_goes_back_on_the_tool_call_turn_and_not_on_the_answer() {
    // DeepSeek thinking mode: `reasoning_content` deltas, then the call; the
    // answer of the same task thinks again before its text.
    let call = chunks(
        &[
            json!({"role":"assistant","content":null,"reasoning_content":""}),
            json!({"content":null,"reasoning_content":"The user wants"}),
            json!({"content":null,"reasoning_content":" the file read."}),
            json!({"tool_calls":[{"index":0,"id":"call_00_x1","type":"function","function":{"name":"read_file","arguments":""}}]}),
            json!({"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"calc"}}]}),
            json!({"tool_calls":[{"index":0,"function":{"arguments":"ulator.py\"}"}}]}),
        ],
        "tool_calls",
    );
    let answer = chunks(
        &[
            json!({"role":"assistant","content":null,"reasoning_content":"It has add."}),
            json!({"content":"It defines add and subtract."}),
        ],
        "stop",
    );
    let model = MockModel::start(vec![call, answer, text("second task done")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, _) = run_with(
        &mut s,
        Some("what is in calculator.py?"),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(reason, FinishReason::Answered);
    let (reason, _) = run_with(&mut s, Some("and now?"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);

    let requests = model.requests().await;
    assert_eq!(requests.len(), 3);
    // The step after the call: the call's turn carries its reasoning.
    let turns = assistant_turns(&requests[1]);
    assert_eq!(turns.len(), 1);
    assert_eq!(
        turns[0]["reasoning_content"],
        "The user wants the file read."
    );
    assert_eq!(turns[0]["tool_calls"][0]["id"], "call_00_x1");
    // The next task: still on the call's turn, never on the answer's.
    let turns = assistant_turns(&requests[2]);
    assert_eq!(turns.len(), 2);
    assert_eq!(
        turns[0]["reasoning_content"],
        "The user wants the file read."
    );
    assert_eq!(turns[1]["content"], "It defines add and subtract.");
    assert!(
        turns[1].get("reasoning_content").is_none(),
        "a turn without tool calls carries no reasoning: {}",
        turns[1]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn openrouter_reasoning_details_go_back_merged_and_in_order() {
    // OpenRouter: `reasoning` text plus `reasoning_details` pieces (a
    // reasoning.text whose text and signature come in several chunks, then
    // an encrypted block), then the call.
    let call = chunks(
        &[
            json!({"role":"assistant","content":"","reasoning":"Need","reasoning_details":[{"type":"reasoning.text","text":"Need","format":"anthropic-claude-v1","index":0}]}),
            json!({"role":"assistant","content":"","reasoning":" the file.","reasoning_details":[{"type":"reasoning.text","text":" the file.","format":"anthropic-claude-v1","index":0}]}),
            json!({"role":"assistant","content":"","reasoning_details":[{"type":"reasoning.text","signature":"EqQBCkgIBxABGAIiQ==","format":"anthropic-claude-v1","index":0}]}),
            json!({"role":"assistant","content":"","reasoning_details":[{"type":"reasoning.encrypted","data":"gAAAAABo","id":"rs_0a1","format":"openai-responses-v1","index":1}]}),
            json!({"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"toolu_vrtx_01","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"calculator.py\"}"}}]}),
        ],
        "tool_calls",
    );
    let model = MockModel::start(vec![call, text("read it")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, _) = run_with(&mut s, Some("read calculator.py"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    let requests = model.requests().await;
    let turns = assistant_turns(&requests[1]);
    assert_eq!(
        turns[0]["reasoning_details"],
        json!([
            {"type":"reasoning.text","text":"Need the file.","format":"anthropic-claude-v1","signature":"EqQBCkgIBxABGAIiQ==","index":0},
            {"type":"reasoning.encrypted","data":"gAAAAABo","id":"rs_0a1","format":"openai-responses-v1","index":1}
        ])
    );
    assert!(
        turns[0].get("reasoning").is_none(),
        "only the details go back"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn gemini_thought_signatures_still_go_back_next_to_reasoning_fields() {
    // Gemini's OpenAI-compatible endpoint: no `index`, the signature in `extra_content`.
    let signed = Reply::Sse {
        chunks: vec![json!({"choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"c2ln"}},"function":{"arguments":"{\"path\":\"calculator.py\"}","name":"read_file"},"id":"g1","type":"function"}]},"index":0}],"object":"chat.completion.chunk"}).to_string()],
        done: true,
    };
    let model = MockModel::start(vec![signed, text("done")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, _) = run_with(&mut s, Some("hi"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    let turns = assistant_turns(&model.requests().await[1]);
    assert_eq!(
        turns[0]["tool_calls"][0]["extra_content"],
        json!({"google":{"thought_signature":"c2ln"}})
    );
    assert!(turns[0].get("reasoning_content").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn ollamas_parallel_calls_at_index_zero_stay_apart_by_id() {
    // Ollama's OpenAI-compatible stream: every parallel call whole in its own
    // chunk at `index: 0`, each with its own id, then a finish chunk.
    let parallel = Reply::Sse {
        chunks: vec![
            json!({"id":"chatcmpl-412","object":"chat.completion.chunk","created":1745000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_a1b2c3d4","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"calculator.py\"}"}}]},"finish_reason":null}]}).to_string(),
            json!({"id":"chatcmpl-412","object":"chat.completion.chunk","created":1745000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_e5f6a7b8","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"test_calculator.py\"}"}}]},"finish_reason":null}]}).to_string(),
            json!({"id":"chatcmpl-412","object":"chat.completion.chunk","created":1745000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]}).to_string(),
        ],
        done: true,
    };
    let model = MockModel::start(vec![parallel, text("both read")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("read both"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    let proposed: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "tool_call_proposed")
        .collect();
    assert_eq!(proposed.len(), 2, "{proposed:?}");
    let requests = model.requests().await;
    let turn = &assistant_turns(&requests[1])[0];
    let calls: Vec<(&str, &str)> = turn["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap(),
                c["function"]["arguments"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("call_a1b2c3d4", r#"{"path":"calculator.py"}"#),
            ("call_e5f6a7b8", r#"{"path":"test_calculator.py"}"#)
        ]
    );
    let answered: Vec<&str> = tool_messages(&requests[1])
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap_or_default().to_string())
        .map(|id| {
            if id == "call_a1b2c3d4" {
                "a"
            } else if id == "call_e5f6a7b8" {
                "b"
            } else {
                "?"
            }
        })
        .collect();
    assert_eq!(
        answered,
        ["a", "b"],
        "each call is answered under its own id"
    );
    let results = tool_messages(&requests[1]);
    assert!(results[0]["content"].as_str().unwrap().contains("def add"));
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("class Test")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn think_blocks_in_the_content_are_not_the_answer() {
    // Qwen3 behind a server without a reasoning parser: the thinking streams
    // as content, inside <think> tags split across chunks.
    let answer = chunks(
        &[
            json!({"role":"assistant","content":"<th"}),
            json!({"content":"ink>\nThe user asks what the"}),
            json!({"content":" project is. Keep it short.\n</think>\n\n"}),
            json!({"content":"A small calculator with tests."}),
        ],
        "stop",
    );
    let model = MockModel::start(vec![answer, text("second")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("what is this?"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    let finals: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "final_answer")
        .collect();
    assert_eq!(finals[0]["text"], "A small calculator with tests.");
    assert!(!finals[0].to_string().contains("think"), "{}", finals[0]);
    let (reason, _) = run_with(&mut s, Some("more?"), CancellationToken::new()).await;
    assert_eq!(reason, FinishReason::Answered);
    let turns = assistant_turns(&model.requests().await[1]);
    assert_eq!(turns[0]["content"], "A small calculator with tests.");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_openai_refusal_is_recorded_as_a_refusal_not_as_the_answer() {
    // OpenAI streams a refusal in `delta.refusal`, content null, then "stop".
    let refused = chunks(
        &[
            json!({"role":"assistant","content":null,"refusal":""}),
            json!({"refusal":"I'm sorry, I can't"}),
            json!({"refusal":" help with that."}),
        ],
        "stop",
    );
    let model = MockModel::start(vec![refused, text("never")]).await;
    let ws = copy_workspace();
    let mut s = session_at(&model.base_url(), ws.path(), 0, Duration::from_secs(10));
    let (reason, events) = run_with(&mut s, Some("do it"), CancellationToken::new()).await;
    assert_eq!(
        reason,
        FinishReason::Refused("I'm sorry, I can't help with that.".into())
    );
    let error = events.iter().find(|e| e["event"] == "error");
    assert_eq!(
        error.map(|e| e["message"].clone()),
        Some(json!(
            "the model refused the request (stop reason \"refusal\"): I'm sorry, I can't help with that."
        )),
        "{events:?}"
    );
    assert!(!events.iter().any(|e| e["event"] == "final_answer"));
    assert_eq!(model.requests().await.len(), 1);
}
