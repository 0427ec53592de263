//! The scripted ACP client of `acp`'s tests: `stepwise acp` as a child
//! process, requests written to its stdin, every stdout line kept and
//! checked to be JSON-RPC, the agent's own requests answered by each
//! test's choice ([`Act`]).

use crate::support::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

pub(super) const KEY: &str = "sk-acp-test-key-4f1c7a";
pub(super) const WAIT: Duration = Duration::from_secs(60);

/// A scripted ACP client: the agent as a child process.
pub(super) struct Client {
    pub(super) child: Child,
    pub(super) stdin: Option<ChildStdin>,
    pub(super) inbox: mpsc::UnboundedReceiver<Value>,
    /// Every stdout line, raw.
    pub(super) lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    pub(super) next_id: u64,
    /// Every `session/update` seen so far.
    pub(super) updates: Vec<Value>,
}

impl Client {
    /// `stepwise acp` with a private config folder and the key in the environment.
    pub(super) fn spawn(home: &Path, extra: &[&str]) -> Client {
        Self::spawn_in(home, home, extra, None)
    }

    /// `spawn`, started in `cwd`, its stderr kept in `stderr` (and shown).
    pub(super) fn spawn_in(
        home: &Path,
        cwd: &Path,
        extra: &[&str],
        stderr: Option<std::sync::Arc<std::sync::Mutex<String>>>,
    ) -> Client {
        let mut cmd = Command::new(stepwise_bin());
        for var in stepwise::config::providers::KEY_VARS {
            cmd.env_remove(var);
        }
        cmd.env_remove("OPENAI_BASE_URL")
            .env_remove("STEPWISE_MODEL")
            .env_remove("STEPWISE_PROVIDER")
            .env("OPENAI_API_KEY", KEY)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("NO_PROXY", "")
            .current_dir(cwd)
            .arg("acp")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match stderr {
                Some(_) => Stdio::piped(),
                None => Stdio::inherit(),
            })
            .kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        if let (Some(kept), Some(err)) = (stderr, child.stderr.take()) {
            tokio::spawn(async move {
                let mut reader = BufReader::new(err).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    eprintln!("{line}");
                    let mut kept = kept.lock().unwrap();
                    kept.push_str(&line);
                    kept.push('\n');
                }
            });
        }
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take();
        let (tx, inbox) = mpsc::unbounded_channel();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = lines.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                seen.lock().unwrap().push(line.clone());
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(value);
                }
            }
        });
        Client {
            child,
            stdin,
            inbox,
            lines,
            next_id: 100,
            updates: Vec::new(),
        }
    }

    pub(super) async fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    pub(super) async fn send(&mut self, message: Value) {
        self.send_line(&message.to_string()).await;
    }

    pub(super) async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Send a request; its id.
    pub(super) async fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    pub(super) async fn answer(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await;
    }

    pub(super) async fn next(&mut self) -> Value {
        tokio::time::timeout(WAIT, self.inbox.recv())
            .await
            .expect("the agent answers in time")
            .expect("the agent is still running")
    }

    /// Read until the response to `id`, handing each request from the
    /// agent to `on_request` (which answers it, or not) and keeping updates.
    pub(super) async fn until<F>(&mut self, id: u64, mut on_request: F) -> Value
    where
        F: FnMut(&Value) -> Act,
    {
        loop {
            let message = self.next().await;
            if message["id"] == json!(id) && message.get("method").is_none() {
                return message;
            }
            if message["method"] == "session/update" {
                self.updates.push(message["params"].clone());
                continue;
            }
            if message.get("method").is_some() && message.get("id").is_some() {
                match on_request(&message) {
                    Act::Answer(result) => self.answer(&message["id"], result).await,
                    Act::Cancel(session) => {
                        self.notify("session/cancel", json!({"sessionId": session}))
                            .await;
                        let cancelled = json!({"outcome": {"outcome": "cancelled"}});
                        self.answer(&message["id"], cancelled).await;
                    }
                    Act::Send(method, params) => {
                        let asked = self.request(&method, params).await;
                        let _ = asked;
                    }
                }
            }
        }
    }

    pub(super) async fn initialize(&mut self) -> Value {
        let capabilities = json!({"fs": {"readTextFile": false, "writeTextFile": false}});
        self.initialize_with(capabilities).await
    }

    pub(super) async fn initialize_with(&mut self, capabilities: Value) -> Value {
        let id = self
            .request(
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
            )
            .await;
        let response = self
            .until(id, |_| panic!("no request before initialize"))
            .await;
        response["result"].clone()
    }

    pub(super) async fn new_session(&mut self, cwd: &Path) -> String {
        let id = self
            .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await;
        let response = self.until(id, |r| panic!("unexpected {r}")).await;
        response["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("{response}"))
            .to_string()
    }

    /// Send a prompt; its request id.
    pub(super) async fn prompt(&mut self, session: &str, text: &str) -> u64 {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
        .await
    }

    /// The updates of one kind.
    pub(super) fn updates_of(&self, kind: &str) -> Vec<Value> {
        self.updates
            .iter()
            .filter(|u| u["update"]["sessionUpdate"] == kind)
            .map(|u| u["update"].clone())
            .collect()
    }

    /// Close stdin and wait for a clean exit; every stdout line was JSON-RPC.
    pub(super) async fn close(mut self) {
        drop(self.stdin.take());
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("the agent exits when stdin closes")
            .unwrap();
        assert!(status.success(), "exit: {status:?}");
        // Let the reader take the last lines.
        tokio::time::sleep(Duration::from_millis(100)).await;
        for line in self.lines.lock().unwrap().iter() {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC, not {line:?}: {e}"));
            assert_eq!(value["jsonrpc"], "2.0", "{line}");
        }
    }
}

/// What the client does with a request from the agent.
pub(super) enum Act {
    Answer(Value),
    /// Send `session/cancel` for this session, then answer `cancelled`.
    Cancel(String),
    /// Leave it unanswered and send this request instead.
    #[allow(dead_code)]
    Send(String, Value),
}

pub(super) fn select(option: &str) -> Act {
    Act::Answer(json!({"outcome": {"outcome": "selected", "optionId": option}}))
}

/// The option ids of a permission request's params.
pub(super) fn option_ids(params: &Value) -> Vec<String> {
    params["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap().to_string())
        .collect()
}

pub(super) fn mock_flags(model: &MockModel) -> Vec<String> {
    vec![
        "--base-url".into(),
        model.base_url(),
        "--model".into(),
        "mock-model".into(),
    ]
}

pub(super) fn spawn_on(model: &MockModel, home: &Path) -> Client {
    let flags = mock_flags(model);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    Client::spawn(home, &flags)
}
