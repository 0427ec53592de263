//! Prompt caching on the scripted seed task, for both wire APIs: what each
//! request repeats of the one before (what a server's prompt cache can
//! serve), printed as the cacheable share.
//!
//! The share of a step is the byte-identical prefix it shares with the
//! previous request, in the order the server reads the prompt (tools, then
//! system and messages; a JSON body's key order means nothing to a cache),
//! as a part of the previous request ("kept") and of this one ("cached").
//! Anthropic's `cache_control` marks are left out of the comparison: they
//! say where to cache, they are not content, and the newest one moves on
//! with every step as it must.

use crate::support::anthropic::{self as api, MockApi};
use crate::support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use stepwise::agent::{Decision, FinishReason, LoopSettings, Session};
use stepwise::config::models::ModelTable;
use stepwise::llm::{AnthropicModel, HttpModel};
use stepwise::tools::Workspace;
use tokio_util::sync::CancellationToken;

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn strip_cache_marks(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("cache_control");
            map.values_mut().for_each(strip_cache_marks);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_cache_marks),
        _ => {}
    }
}

/// The prompt as the server reads it: tools, system (Anthropic), messages.
fn prompt_bytes(body: &Value) -> Vec<u8> {
    let mut body = body.clone();
    strip_cache_marks(&mut body);
    let mut out = body["tools"].to_string().into_bytes();
    out.extend(body["system"].to_string().into_bytes());
    for m in body["messages"].as_array().into_iter().flatten() {
        out.extend(m.to_string().into_bytes());
    }
    out
}

/// (kept, cached) in percent, the lowest kept share and the mean cached share, printed per step.
fn shares(api: &str, bodies: &[Value]) -> (f64, f64) {
    let (mut lowest_kept, mut cached_sum) = (100.0f64, 0.0);
    for (step, pair) in bodies.windows(2).enumerate() {
        let (a, b) = (prompt_bytes(&pair[0]), prompt_bytes(&pair[1]));
        let n = common_prefix(&a, &b);
        let kept = 100.0 * n as f64 / a.len() as f64;
        let cached = 100.0 * n as f64 / b.len() as f64;
        println!(
            "{api} step {}: {n} bytes repeated: {kept:.1}% of the previous request kept, {cached:.1}% of this one cacheable",
            step + 2
        );
        lowest_kept = lowest_kept.min(kept);
        cached_sum += cached;
    }
    let mean_cached = cached_sum / (bodies.len() - 1) as f64;
    println!(
        "{api}: lowest kept {lowest_kept:.1}%, mean cacheable {mean_cached:.1}% over {} requests",
        bodies.len()
    );
    (lowest_kept, mean_cached)
}

async fn run_seed(model: Arc<dyn stepwise::llm::ChatModel>, ws: &std::path::Path) -> Vec<Value> {
    let pricing = ModelTable::builtin().lookup(&model.label()).cloned();
    let mut s = Session::new(
        LoopSettings {
            max_steps: 20,
            pricing,
            ..LoopSettings::default()
        },
        model,
        Workspace::open(ws).unwrap(),
    );
    let (reason, events) = drive(&mut s, Some("add divide"), CancellationToken::new(), |_| {
        Decision::Approve
    })
    .await;
    assert_eq!(reason, FinishReason::Answered);
    events
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_requests_keep_a_stable_prefix_and_one_cache_key_per_session() {
    let model = MockModel::start(seed_script("unittest")).await;
    let ws = copy_workspace();
    let http = HttpModel::new(&model.base_url(), "gpt-4.1", None)
        .unwrap()
        .with_prompt_cache_key("stepwise-test-session");
    run_seed(Arc::new(http), ws.path()).await;
    let bodies = model.requests().await;
    assert_eq!(bodies.len(), 8);
    let (lowest_kept, mean_cached) = shares("openai", &bodies);
    assert!(lowest_kept >= 98.0, "{lowest_kept}");
    assert!(mean_cached > 85.0, "{mean_cached}");
    assert!(
        bodies
            .iter()
            .all(|b| b["prompt_cache_key"] == "stepwise-test-session"),
        "one key for the whole session"
    );
    // Without a key (any server but OpenAI's own), no such field is sent.
    let model = MockModel::start(vec![text("hi")]).await;
    let plain = HttpModel::new(&model.base_url(), "local", None).unwrap();
    run_seed(Arc::new(plain), ws.path()).await;
    assert!(model.requests().await[0].get("prompt_cache_key").is_none());
}

/// The seed task in Anthropic's wire shape: the same steps as `seed_script`.
fn anthropic_seed() -> Vec<Reply> {
    let call = |id: &str, name: &str, input: Value| api::tool_use(id, name, input);
    vec![
        call("toolu_01", "list_files", json!({"path": "."})),
        call("toolu_02", "read_file", json!({"path": "calculator.py"})),
        call(
            "toolu_03",
            "read_file",
            json!({"path": "test_calculator.py"}),
        ),
        call(
            "toolu_04",
            "replace_text",
            json!({"path": "calculator.py", "old": "    return a - b\n", "new": format!("    return a - b{}", DIVIDE_FN.trim_end_matches('\n').to_string() + "\n")}),
        ),
        call(
            "toolu_05",
            "replace_text",
            json!({"path": "test_calculator.py", "old": "from calculator import add, subtract\n", "new": "from calculator import add, divide, subtract\n"}),
        ),
        call(
            "toolu_06",
            "replace_text",
            json!({"path": "test_calculator.py", "old": "        self.assertEqual(subtract(1, 4), -3)\n", "new": format!("        self.assertEqual(subtract(1, 4), -3){}", DIVIDE_TESTS.trim_end_matches('\n').to_string() + "\n")}),
        ),
        call("toolu_07", "run_tests", json!({"command": "unittest"})),
        api::text("Added divide with two tests; all pass."),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_requests_mark_at_most_four_breakpoints_and_each_marked_prefix_is_reused() {
    let mock = MockApi::messages(anthropic_seed()).await;
    let ws = copy_workspace();
    let model = AnthropicModel::new(&mock.uri(), "claude-sonnet-4-5", None).unwrap();
    let events = run_seed(Arc::new(model), ws.path()).await;
    let bodies = mock.bodies().await;
    assert_eq!(bodies.len(), 8);
    // Every reply reports 50 fresh input tokens, 20 written to the cache, 300
    // read from it and 25 out: priced at $3, $3.75, $0.30 and $15 per million.
    let finished = events
        .iter()
        .find(|e| e["event"] == "task_finished")
        .unwrap();
    assert_eq!(
        finished["usage"]["cache_write_tokens"],
        8 * api::CACHE_CREATED
    );
    assert_eq!(finished["usage"]["cached_tokens"], 8 * api::CACHE_READ);
    let cost = finished["cost_usd"].as_f64().unwrap();
    let expected = 8.0 * (50.0 * 3.0 + 300.0 * 0.30 + 20.0 * 3.75 + 25.0 * 15.0) / 1e6;
    assert!((cost - expected).abs() < 1e-9, "{cost} vs {expected}");
    for body in &bodies {
        let marks = body.to_string().matches("\"cache_control\"").count();
        assert_eq!(marks.min(4), marks, "at most four breakpoints");
        let tools = body["tools"].as_array().unwrap();
        assert_eq!(tools.last().unwrap()["cache_control"]["type"], "ephemeral");
        assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
        let last_turn = body["messages"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last_turn["role"], "user");
        let last_block = last_turn["content"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(
            last_block["cache_control"]["type"], "ephemeral",
            "{last_turn}"
        );
    }
    for pair in bodies.windows(2) {
        // Everything up to the last breakpoint (the whole of the earlier
        // request) is a byte-identical prefix of the next one.
        let (a, b) = (prompt_bytes(&pair[0]), prompt_bytes(&pair[1]));
        assert!(b.starts_with(&a), "the marked prefix changed");
    }
    let (lowest_kept, mean_cached) = shares("anthropic", &bodies);
    assert!(lowest_kept >= 98.0 && mean_cached > 85.0);
}
