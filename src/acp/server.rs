//! The ACP agent's connection: read the client's lines from stdin, answer
//! `initialize`, start sessions (`session/new`, `session/load`), run
//! prompts, take cancels and revocations, close sessions, and route the
//! client's answers to the permission requests waiting for them. One process
//! serves any number of sessions, on one folder or on several; those on one
//! folder share its lock and take turns at changing it.
//!
//! What must stay true: nothing but JSON-RPC reaches stdout (logs go to
//! stderr); a line that is not a message gets an error answer (-32700,
//! -32600), an unknown method -32601, bad parameters -32602, and the loop
//! goes on; closed stdin cancels every turn and ends the process cleanly.

use super::map;
use super::rpc::{self, Incoming, METHOD_NOT_FOUND, Outbox, RpcError};
use super::session::Live;
use super::start::{Start, Trust, session_config};
use super::trust::{self, Settled};
use super::turn::WritingSlot;
use crate::config::{LogSetting, ResumeFrom};
use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, CloseSessionRequest, CloseSessionResponse, Implementation,
    InitializeResponse, LoadSessionRequest, LoadSessionResponse, NewSessionRequest,
    NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse, SessionCapabilities,
    SessionCloseCapabilities, SessionNotification,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::AsyncBufReadExt;

/// The extension method that takes back "allow for the rest of the task".
pub const REVOKE: &str = "_stepwise/revoke";

/// Serve one client on stdin/stdout until stdin closes; the exit code.
pub async fn run(start: Start) -> i32 {
    init_logging();
    let (out, lines) = Outbox::new();
    let writer = tokio::spawn(rpc::write_lines(lines, tokio::io::stdout()));
    let server = Arc::new(Server {
        start,
        out: out.clone(),
        sessions: Mutex::new(HashMap::new()),
        slots: Mutex::new(HashMap::new()),
        next: AtomicU64::new(1),
        hunks: AtomicBool::new(false),
    });
    let mut input = tokio::io::BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) => match std::str::from_utf8(&line) {
                Ok(text) => server.clone().line(text),
                Err(_) => out.respond(
                    Value::Null,
                    Err(RpcError::new(rpc::PARSE_ERROR, "parse error: not UTF-8")),
                ),
            },
            Err(e) => {
                tracing::warn!("cannot read stdin: {e}");
                break;
            }
        }
    }
    server.close();
    // Everything said before stdin closed is written; what the ending
    // sessions still say has a moment, but cannot keep the process alive.
    out.flush().await;
    drop(server);
    drop(out);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
    0
}

/// Logs go to stderr only (stdout is the protocol's).
fn init_logging() {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::WARN)
        .with_target(false)
        .try_init();
}

struct Server {
    start: Start,
    out: Arc<Outbox>,
    sessions: Mutex<HashMap<String, Arc<Live>>>,
    /// Each workspace's writing turn, shared by its sessions.
    slots: Mutex<HashMap<PathBuf, std::sync::Weak<tokio::sync::Mutex<()>>>>,
    next: AtomicU64,
    /// The client can choose hunks (`clientCapabilities._meta.stepwise.hunks`).
    hunks: AtomicBool,
}

fn params<T: DeserializeOwned>(value: Value) -> Result<T, RpcError> {
    serde_json::from_value(value)
        .map_err(|e| RpcError::invalid_params(format!("invalid params: {e}")))
}

fn to_json(value: impl serde::Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|e| RpcError::internal(e.to_string()))
}

impl Server {
    fn line(self: Arc<Self>, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        match rpc::parse(line) {
            Incoming::Request { id, method, params } => {
                tokio::spawn(async move {
                    let result = self.request(&method, params).await;
                    self.out.respond(id, result);
                });
            }
            Incoming::Notification { method, params } => self.notification(&method, params),
            Incoming::Response { id, outcome } => {
                if !self.out.resolve(&id, outcome) {
                    // A late answer to a request whose turn was cancelled, say.
                    tracing::debug!("an answer to no waiting request (id {id})");
                }
            }
            Incoming::Invalid { id, error } => self.out.respond(id, Err(error)),
        }
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        match method {
            "initialize" => {
                let chooses =
                    super::permission::client_chooses_hunks(&params["clientCapabilities"]);
                self.hunks.store(chooses, Ordering::Relaxed);
                to_json(self.initialize())
            }
            "authenticate" => Ok(json!({})),
            "session/new" => self.new_session(self::params(params)?).await,
            "session/load" => self.load_session(self::params(params)?).await,
            "session/prompt" => self.prompt(self::params(params)?).await,
            "session/close" => self.close_session(self::params(params)?).await,
            REVOKE => self.revoke(params),
            other => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            )),
        }
    }

    fn notification(&self, method: &str, params: Value) {
        if method == "session/cancel" {
            let id = params["sessionId"].as_str().unwrap_or_default();
            match self.session(id) {
                Ok(live) => live.cancel(),
                Err(e) => tracing::warn!("session/cancel: {}", e.message),
            }
        }
    }

    fn initialize(&self) -> InitializeResponse {
        let resumable = self.start.options.log() != LogSetting::Off;
        let meta = json!({"stepwise": {"revoke": REVOKE, "hunks": true}});
        let sessions = SessionCapabilities::new().close(SessionCloseCapabilities::new());
        let capabilities = AgentCapabilities::new()
            .load_session(resumable)
            .session_capabilities(sessions)
            .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
            .meta(meta.as_object().cloned());
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(capabilities)
            .agent_info(Implementation::new("stepwise", env!("CARGO_PKG_VERSION")))
    }

    fn session(&self, id: &str) -> Result<Arc<Live>, RpcError> {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions
            .get(id)
            .cloned()
            .ok_or_else(|| RpcError::invalid_params(format!("no session {id:?}")))
    }

    /// Prepare a session on `cwd` (resuming `resume`); its id, what was
    /// prepared and where it stands with its folder's trust.
    fn open(
        &self,
        cwd: &std::path::Path,
        servers: &[agent_client_protocol_schema::v1::McpServer],
        resume: Option<&str>,
    ) -> Result<(String, crate::setup::Prepared, Trust), RpcError> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let handed = resume.map(|name| ResumeFrom::Handed(name.to_string()));
        let (config, trust) = session_config(&self.start, cwd, servers, handed)?;
        let prepared = crate::setup::prepare(&config).map_err(RpcError::invalid_params)?;
        let id = match (&prepared.resume_name, resume) {
            (_, Some(name)) => name.to_string(),
            (Some(name), None) => name.name().to_string(),
            (None, None) => format!("unlogged-{}-{n}", std::process::id()),
        };
        Ok((id, prepared, trust))
    }

    /// Start the session under `id`, or (`unique`) under `id+N` when two
    /// workspaces' transcripts got the same name; the id it runs under.
    fn keep(
        &self,
        id: &str,
        prepared: crate::setup::Prepared,
        trust: Trust,
        unique: bool,
    ) -> Result<String, RpcError> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let mut chosen = id.to_string();
        let mut n = 1;
        while sessions.contains_key(&chosen) {
            if !unique {
                return Err(RpcError::invalid_params(format!(
                    "session {id:?} is already open"
                )));
            }
            n += 1;
            chosen = format!("{id}+{n}");
        }
        let live = self.start_live(prepared, &chosen, trust);
        sessions.insert(chosen.clone(), live);
        Ok(chosen)
    }

    fn start_live(&self, prepared: crate::setup::Prepared, id: &str, trust: Trust) -> Arc<Live> {
        let hunks = self.hunks.load(Ordering::Relaxed);
        let slot = self.slot(prepared.session.workspace().root());
        Arc::new(Live::start(prepared, id, self.out.clone(), hunks, slot).trusting(trust))
    }

    /// The writing turn of the workspace at `root`.
    fn slot(&self, root: &std::path::Path) -> WritingSlot {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.retain(|_, slot| slot.strong_count() > 0);
        if let Some(slot) = slots.get(root).and_then(std::sync::Weak::upgrade) {
            return slot;
        }
        let slot = WritingSlot::default();
        slots.insert(root.to_path_buf(), Arc::downgrade(&slot));
        slot
    }

    /// `session/close`: the session ends (its turn is cancelled) and lets
    /// go of its workspace before the answer.
    async fn close_session(&self, request: CloseSessionRequest) -> Result<Value, RpcError> {
        let id = request.session_id.0.to_string();
        let live = {
            let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            sessions.remove(&id)
        };
        let live = live.ok_or_else(|| RpcError::invalid_params(format!("no session {id:?}")))?;
        live.close().await;
        to_json(CloseSessionResponse::new())
    }

    async fn new_session(&self, request: NewSessionRequest) -> Result<Value, RpcError> {
        let (id, prepared, trust) = self.open(&request.cwd, &request.mcp_servers, None)?;
        let id = self.keep(&id, prepared, trust, true)?;
        to_json(NewSessionResponse::new(id))
    }

    /// Resume the transcript named by the session id (up to a `+N` that
    /// told two open sessions apart), replay it, then answer. A session
    /// never prompted is an empty one; a session open in this process is
    /// attached to: what it said so far is said again.
    async fn load_session(&self, request: LoadSessionRequest) -> Result<Value, RpcError> {
        let id = request.session_id.0.to_string();
        if let Ok(live) = self.session(&id) {
            for update in live.said() {
                self.out.notify(
                    "session/update",
                    SessionNotification::new(id.clone(), update),
                );
            }
            return to_json(LoadSessionResponse::new());
        }
        let name = id.split('+').next().unwrap_or_default().to_string();
        let (_, prepared, trust) = self.open(&request.cwd, &request.mcp_servers, Some(&name))?;
        let mut replayed = Vec::new();
        let changes = prepared.session.recorded_changes();
        let root = prepared.session.workspace().root().to_path_buf();
        for event in prepared.session.restored_events() {
            match event {
                crate::agent::AgentEvent::SessionRestored { entries, .. } => {
                    let id = |i| format!("0:restored-{i}");
                    replayed.extend(map::replay(&entries, &changes, &root, id));
                }
                crate::agent::AgentEvent::TaskCutOff { files } => {
                    replayed.push(map::message(&crate::present::cut_off_line(&files)));
                }
                _ => {}
            }
        }
        for update in &replayed {
            self.out.notify(
                "session/update",
                SessionNotification::new(id.clone(), update.clone()),
            );
        }
        self.keep(&id, prepared, trust, false)?;
        if let Ok(live) = self.session(&id) {
            live.remember(replayed);
        }
        to_json(LoadSessionResponse::new())
    }

    /// The session to run a prompt on, once its folder's trust is settled
    /// (asked on this session at its first prompt; a trusted folder's
    /// session goes on rebuilt with the project's values).
    async fn first_prompt(&self, id: &str, live: Arc<Live>) -> Result<Arc<Live>, RpcError> {
        let mut trust = live.trust.lock().await;
        let resume = live.name.clone().map(ResumeFrom::Handed);
        match trust::settle(&self.start, &self.out, id, &mut trust, resume).await? {
            Settled::AsIs => {}
            Settled::Rebuild(config) => {
                let prepared = crate::setup::prepare(&config).map_err(RpcError::invalid_params)?;
                let rebuilt = self.start_live(prepared, id, Trust::Settled);
                rebuilt.remember(live.said());
                // Unless the session was closed while it was asked.
                let replaced = {
                    let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
                    let open = sessions.get(id).is_some_and(|l| Arc::ptr_eq(l, &live));
                    open.then(|| sessions.insert(id.to_string(), rebuilt.clone()))
                };
                drop(trust);
                live.close().await;
                if replaced.is_none() {
                    rebuilt.close().await;
                    return Err(RpcError::invalid_params(format!(
                        "session {id:?} was closed"
                    )));
                }
                return Ok(rebuilt);
            }
        }
        drop(trust);
        self.session(id)
    }

    async fn prompt(&self, request: PromptRequest) -> Result<Value, RpcError> {
        let task = map::prompt_text(&request.prompt).map_err(RpcError::invalid_params)?;
        let id = request.session_id.0.to_string();
        let live = self.session(&id)?;
        let live = self.first_prompt(&id, live).await?;
        let ended = live.prompt(task).await?;
        let mut stepwise = json!({"finish": ended.reason});
        if let Some(receipt) = &ended.receipt {
            stepwise["receipt"] = to_json(receipt)?;
        }
        let meta = json!({"stepwise": stepwise});
        let response =
            PromptResponse::new(map::stop_reason(&ended.reason)).meta(meta.as_object().cloned());
        to_json(response)
    }

    fn revoke(&self, params: Value) -> Result<Value, RpcError> {
        let id = params["sessionId"].as_str().unwrap_or_default();
        let live = self.session(id)?;
        let names: Option<Vec<String>> = match params.get("tools") {
            None | Some(Value::Null) => None,
            Some(tools) => Some(self::params(tools.clone())?),
        };
        let revoked = live.revoke(names.as_deref());
        let names: Vec<String> = revoked.iter().map(ToString::to_string).collect();
        Ok(json!({"revoked": names}))
    }

    /// Stdin closed: cancel every turn, fail every waiting request, end the sessions.
    fn close(&self) {
        let sessions: Vec<Arc<Live>> = {
            let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            sessions.drain().map(|(_, live)| live).collect()
        };
        for live in &sessions {
            live.cancel();
        }
        self.out.fail_waiting();
    }
}
