//! Test harness shared by the integration tests: a mock OpenAI-compatible
//! server on 127.0.0.1 (wiremock) that plays scripted replies in real wire
//! format (SSE chunks or JSON bodies) and records every request, plus temp
//! copies of the sample workspace.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use wiremock::matchers::{body_partial_json, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// One scripted HTTP reply of the mock model.
#[derive(Clone)]
pub enum Reply {
    /// `text/event-stream` body made of these `data:` payloads (a `[DONE]` is appended when `done`).
    Sse { chunks: Vec<String>, done: bool },
    /// A non-streaming `application/json` chat completion.
    Json(Value),
    /// An error status with a body.
    Error { status: u16, body: String },
    /// Any response (headers, delays) built directly.
    Custom(ResponseTemplate),
}

impl Reply {
    fn template(&self) -> ResponseTemplate {
        match self {
            Reply::Sse { chunks, done } => {
                let mut body = String::new();
                for c in chunks {
                    body.push_str("data: ");
                    body.push_str(c);
                    body.push_str("\n\n");
                }
                if *done {
                    body.push_str("data: [DONE]\n\n");
                }
                ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
            }
            Reply::Json(v) => {
                ResponseTemplate::new(200).set_body_raw(v.to_string(), "application/json")
            }
            Reply::Error { status, body } => {
                ResponseTemplate::new(*status).set_body_raw(body.clone(), "application/json")
            }
            Reply::Custom(template) => template.clone(),
        }
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "model": "mock",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
    .to_string()
}

fn usage_chunk() -> String {
    json!({"id": "chatcmpl-mock", "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
        .to_string()
}

/// A streamed reply calling one tool, its arguments split into several chunks.
pub fn tool_call(name: &str, arguments: Value) -> Reply {
    tool_calls(&[(name, arguments)])
}

/// A streamed reply calling several tools in order.
pub fn tool_calls(calls: &[(&str, Value)]) -> Reply {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": null}), None)];
    for (i, (name, arguments)) in calls.iter().enumerate() {
        let id = format!("call_{}_{}", name, next_id());
        chunks.push(chunk(
            json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        let text = arguments.to_string();
        // Split at arbitrary byte positions (on char boundaries), including inside escapes.
        let pieces = split_in(&text, 3);
        for piece in pieces {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    chunks.push(chunk(json!({}), Some("tool_calls")));
    chunks.push(usage_chunk());
    Reply::Sse { chunks, done: true }
}

/// A streamed plain-text reply (a final answer under native tool calling).
pub fn text(answer: &str) -> Reply {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), Some(""))];
    for piece in split_in(answer, 4) {
        chunks.push(chunk(json!({"content": piece}), Some("")));
    }
    chunks.push(chunk(json!({}), Some("stop")));
    chunks.push(usage_chunk());
    Reply::Sse { chunks, done: true }
}

/// A non-streaming JSON completion whose message content is `content`.
pub fn json_completion(content: &str) -> Reply {
    Reply::Json(json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }))
}

/// The same reply, sent only after `ms` milliseconds.
pub fn delayed(reply: Reply, ms: u64) -> Reply {
    Reply::Custom(
        reply
            .template()
            .set_delay(std::time::Duration::from_millis(ms)),
    )
}

pub fn error(status: u16, message: &str) -> Reply {
    Reply::Error {
        status,
        body: json!({"error": {"message": message, "type": "invalid_request_error"}}).to_string(),
    }
}

fn split_in(text: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(parts).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn next_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Marker of stepwise's summarization request (see `src/agent/model/context.rs`).
pub const SUMMARIZE_MARKER: &str = "You compress the history";

struct Script {
    replies: Mutex<VecDeque<Reply>>,
    summary_delay: std::time::Duration,
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body);
        // Summaries are answered on the side, without using up the script.
        if body.contains(SUMMARIZE_MARKER) {
            return text("Summary: the user asked for work; files were read.")
                .template()
                .set_delay(self.summary_delay);
        }
        match self.replies.lock().ok().and_then(|mut r| r.pop_front()) {
            // Report usage like a real server would: about four bytes a token.
            Some(Reply::Sse { chunks, done }) => Reply::Sse {
                chunks: chunks
                    .into_iter()
                    .map(|c| {
                        c.replace(
                            "\"prompt_tokens\":100,",
                            &format!("\"prompt_tokens\":{},", request.body.len() / 4),
                        )
                    })
                    .collect(),
                done,
            }
            .template(),
            Some(reply) => reply.template(),
            None => error(400, "mock model: no scripted reply left").template(),
        }
    }
}

/// A running mock model server.
pub struct MockModel {
    server: MockServer,
}

impl MockModel {
    /// Start a server on 127.0.0.1 answering `POST /v1/chat/completions` with `replies` in order.
    pub async fn start(replies: Vec<Reply>) -> MockModel {
        Self::start_with_summary_delay(replies, std::time::Duration::ZERO).await
    }

    /// Like `start`, with summarization requests answered only after `delay`.
    pub async fn start_with_summary_delay(
        replies: Vec<Reply>,
        summary_delay: std::time::Duration,
    ) -> MockModel {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(Script {
                replies: Mutex::new(replies.into()),
                summary_delay,
            })
            .mount(&server)
            .await;
        MockModel { server }
    }

    /// One server playing several models: each request is answered from
    /// the script of the model it names (`"model"` in its body).
    pub async fn start_per_model(scripts: Vec<(&str, Vec<Reply>)>) -> MockModel {
        let server = MockServer::start().await;
        for (model, replies) in scripts {
            Mock::given(method("POST"))
                .and(path("/v1/chat/completions"))
                .and(body_partial_json(json!({ "model": model })))
                .respond_with(Script {
                    replies: Mutex::new(replies.into()),
                    summary_delay: std::time::Duration::ZERO,
                })
                .mount(&server)
                .await;
        }
        MockModel { server }
    }

    /// The base URL to pass as `--base-url` / `OPENAI_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.server.uri())
    }

    /// JSON bodies of every request received so far.
    pub async fn requests(&self) -> Vec<Value> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .map(|r| serde_json::from_slice(&r.body).unwrap_or(Value::Null))
            .collect()
    }

    /// Raw requests (headers included).
    pub async fn raw_requests(&self) -> Vec<Request> {
        self.server.received_requests().await.unwrap_or_default()
    }
}

/// The repo's sample workspace.
pub fn sample_workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("workspace")
}

/// A fresh temp copy of the sample workspace (the repo's own copy is never touched).
pub fn copy_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(&sample_workspace(), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read workspace") {
        let entry = entry.expect("entry");
        let name = entry.file_name();
        let name_str = name.to_string_lossy();
        if name_str == "__pycache__" || name_str == ".pytest_cache" {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Whether `python3 -m pytest` works here (tests needing it skip with a reason otherwise).
pub fn pytest_available() -> bool {
    std::process::Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Shared text of the seed scenario's edits.
pub const DIVIDE_FN: &str = "\n\ndef divide(a, b):\n    \"\"\"Return a divided by b; dividing by zero raises ValueError.\"\"\"\n    if b == 0:\n        raise ValueError(\"cannot divide by zero\")\n    return a / b\n";

pub const DIVIDE_TESTS: &str = "\n\nclass TestDivide(unittest.TestCase):\n    def test_divides_two_numbers(self):\n        self.assertEqual(divide(6, 3), 2)\n\n    def test_divide_by_zero_raises(self):\n        with self.assertRaises(ValueError):\n            divide(1, 0)\n";

/// The scripted model replies of the seed task: list, read both files, add
/// `divide` and its tests with `replace_text`, run the tests, finish.
pub fn seed_script(runner: &str) -> Vec<Reply> {
    vec![
        tool_call("list_files", json!({"path": "."})),
        tool_call("read_file", json!({"path": "calculator.py"})),
        tool_call("read_file", json!({"path": "test_calculator.py"})),
        tool_call(
            "replace_text",
            json!({
                "path": "calculator.py",
                "old": "    return a - b\n",
                "new": format!("    return a - b{}", DIVIDE_FN.trim_end_matches('\n').to_string() + "\n"),
            }),
        ),
        tool_call(
            "replace_text",
            json!({
                "path": "test_calculator.py",
                "old": "from calculator import add, subtract\n",
                "new": "from calculator import add, divide, subtract\n",
            }),
        ),
        tool_call(
            "replace_text",
            json!({
                "path": "test_calculator.py",
                "old": "        self.assertEqual(subtract(1, 4), -3)\n",
                "new": format!("        self.assertEqual(subtract(1, 4), -3){}", DIVIDE_TESTS.trim_end_matches('\n').to_string() + "\n"),
            }),
        ),
        tool_call("run_tests", json!({"command": runner})),
        text("Added `divide(a, b)` raising ValueError on zero, with two tests. All tests pass."),
    ]
}

/// The stepwise binary under test.
/// The JSON events a `--json` run printed, one per stdout line.
pub fn json_events(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

pub fn stepwise_bin() -> &'static str {
    env!("CARGO_BIN_EXE_stepwise")
}

/// Environment that keeps the binary hermetic: no inherited key or base URL.
pub fn hermetic_env(cmd: &mut std::process::Command) -> &mut std::process::Command {
    for var in stepwise::config::providers::KEY_VARS {
        cmd.env_remove(var);
    }
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("STEPWISE_MODEL")
        .env_remove("STEPWISE_PROVIDER")
}

pub fn tool_messages(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .map(|m| m.iter().filter(|m| m["role"] == "tool").cloned().collect())
        .unwrap_or_default()
}

pub fn shared<T>(v: T) -> Arc<Mutex<T>> {
    Arc::new(Mutex::new(v))
}

/// A session on `dir` talking to the mock model, with these loop settings.
pub fn session_on(
    model: &MockModel,
    dir: &Path,
    settings: stepwise::agent::LoopSettings,
) -> stepwise::agent::Session {
    let http =
        stepwise::llm::HttpModel::new(&model.base_url(), "mock-model", None).expect("http client");
    stepwise::agent::Session::new(
        settings,
        Arc::new(http),
        stepwise::tools::Workspace::open(dir).expect("workspace"),
    )
}

/// Run a task (or resume, with `None`) to its end, answering each approval
/// with `decide`; returns how it ended and every event as JSON.
pub async fn drive(
    session: &mut stepwise::agent::Session,
    task: Option<&str>,
    cancel: tokio_util::sync::CancellationToken,
    decide: impl Fn(&stepwise::agent::ApprovalRequest) -> stepwise::agent::Decision + Send + 'static,
) -> (stepwise::agent::FinishReason, Vec<Value>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let collector = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(event) = rx.recv().await {
            seen.push(serde_json::to_value(&event).expect("events serialize"));
            if let stepwise::agent::AgentEvent::ApprovalRequested(request) = event {
                let decision = decide(&request);
                let _ = request.reply.send(decision);
            }
        }
        seen
    });
    let reason = match task {
        Some(task) => session.run_task(task, &tx, cancel).await,
        None => session.resume(&tx, cancel).await,
    };
    drop(tx);
    (reason, collector.await.expect("collector"))
}

pub mod anthropic;
pub mod docs;
pub mod pty;
pub mod tui;
