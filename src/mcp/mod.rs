//! MCP tools: the servers configured in `[mcp.servers]`, started in the
//! background when a session starts, and their tools offered to the model as
//! `mcp__<server>__<tool>`. [`Hub`] owns every server's state; `client`
//! talks to one server through `rmcp`, `names` checks what a server lists,
//! `result` turns an answer into text for the model.
//!
//! What must stay true: nothing a server does ends the session: a server
//! that fails to start, exits, hangs or answers garbage is marked so (with
//! one report for the front ends) and its tools are no longer offered; no
//! lock is held across an `await`; state changes reach front ends only as
//! [`ServerReport`]s taken from the hub.

mod client;
pub mod names;
pub mod result;

pub use client::CallError;
pub use names::ToolInfo;

use crate::config::mcp::{McpServerSettings, McpSettings};
use client::Connection;
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::watch;

/// Where a server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    Starting,
    Running,
    /// It could not be started, or it broke the protocol.
    Failed,
    /// It exited after it started.
    Stopped,
}

impl ServerState {
    pub fn as_str(self) -> &'static str {
        match self {
            ServerState::Starting => "starting",
            ServerState::Running => "running",
            ServerState::Failed => "failed",
            ServerState::Stopped => "stopped",
        }
    }
}

/// A server's state as front ends see it (sent when it changes, and for `/mcp`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerReport {
    pub server: String,
    pub state: ServerState,
    /// The full names of the tools it offers now.
    pub tools: Vec<String>,
    /// Why it failed or stopped, or what of its list was left out.
    pub message: Option<String>,
}

struct Entry {
    settings: McpServerSettings,
    state: ServerState,
    tools: Vec<ToolInfo>,
    message: Option<String>,
    connection: Option<Arc<Connection>>,
}

impl Entry {
    fn report(&self) -> ServerReport {
        ServerReport {
            server: self.settings.name.clone(),
            state: self.state,
            tools: self.tools.iter().map(|t| t.full_name.clone()).collect(),
            message: self.message.clone(),
        }
    }
}

struct Inner {
    root: PathBuf,
    servers: Mutex<Vec<Entry>>,
    /// Reports not yet taken by a front end.
    pending: Mutex<Vec<ServerReport>>,
    /// Bumped on every change.
    version: watch::Sender<u64>,
    started: AtomicBool,
}

/// The session's MCP servers. Cloning shares them.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Inner>,
}

impl Default for Hub {
    fn default() -> Self {
        Hub::new(&McpSettings::default(), PathBuf::from("."))
    }
}

/// A hub that may be gone (its last owner, the session, dropped it and so
/// killed its servers).
#[derive(Clone)]
pub struct WeakHub(std::sync::Weak<Inner>);

impl WeakHub {
    pub fn upgrade(&self) -> Option<Hub> {
        self.0.upgrade().map(|inner| Hub { inner })
    }
}

/// What a call of an MCP tool came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOutcome {
    Answered(result::CallText),
    Failed(String),
}

impl Hub {
    /// The configured servers, not started yet.
    pub fn new(settings: &McpSettings, root: PathBuf) -> Hub {
        let servers = settings
            .servers
            .iter()
            .map(|s| Entry {
                settings: s.clone(),
                state: ServerState::Starting,
                tools: Vec::new(),
                message: None,
                connection: None,
            })
            .collect();
        Hub {
            inner: Arc::new(Inner {
                root,
                servers: Mutex::new(servers),
                pending: Mutex::new(Vec::new()),
                version: watch::Sender::new(0),
                started: AtomicBool::new(false),
            }),
        }
    }

    fn servers(&self) -> MutexGuard<'_, Vec<Entry>> {
        // A panic while holding the lock leaves plain data; keep using it.
        self.inner.servers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers().is_empty()
    }

    /// Start every server in the background (once; later calls do nothing).
    /// Needs a tokio runtime.
    pub fn start(&self) {
        if self.inner.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let all: Vec<McpServerSettings> =
            self.servers().iter().map(|e| e.settings.clone()).collect();
        for settings in all {
            let hub = self.clone();
            tokio::spawn(async move { hub.start_one(settings).await });
        }
    }

    async fn start_one(&self, settings: McpServerSettings) {
        let started = Connection::start(&settings, &self.inner.root).await;
        let listed = match started {
            Ok(connection) => match connection.list_tools().await {
                Ok(tools) => Ok((connection, tools)),
                Err(problem) => Err(problem),
            },
            Err(problem) => Err(problem),
        };
        let name = settings.name.clone();
        match listed {
            Ok((connection, tools)) => {
                let (tools, notes) = names::offered_tools(&name, &settings.read_only, &tools);
                let message = (!notes.is_empty()).then(|| notes.join("; "));
                self.update(&name, |e| {
                    e.state = ServerState::Running;
                    e.tools = tools;
                    e.message = message;
                    e.connection = Some(Arc::new(connection));
                });
            }
            Err(problem) => self.fail(&name, ServerState::Failed, problem),
        }
    }

    /// Change one server's entry and queue its report.
    fn update(&self, server: &str, change: impl FnOnce(&mut Entry)) {
        let report = {
            let mut servers = self.servers();
            let Some(entry) = servers.iter_mut().find(|e| e.settings.name == server) else {
                return;
            };
            change(entry);
            entry.report()
        };
        tracing::info!(server, state = report.state.as_str(), "mcp server state");
        if let Ok(mut pending) = self.inner.pending.lock() {
            pending.push(report);
        }
        self.inner.version.send_modify(|v| *v += 1);
    }

    /// Mark a server failed or stopped: its tools are no longer offered.
    fn fail(&self, server: &str, state: ServerState, problem: String) {
        self.update(server, |e| {
            e.state = state;
            e.tools.clear();
            e.message = Some(problem);
            e.connection = None;
        });
    }

    /// Wait (at most `limit`) until no server is still starting.
    pub async fn wait_started(&self, limit: Duration) {
        let mut changes = self.inner.version.subscribe();
        let starting = |hub: &Hub| {
            hub.servers()
                .iter()
                .any(|e| e.state == ServerState::Starting)
        };
        let wait = async {
            while starting(self) {
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(limit, wait).await;
    }

    /// Resolves at the next change of any server (for a front end that
    /// listens); ends when the hub is gone.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }

    /// A handle that does not keep the servers running.
    pub fn downgrade(&self) -> WeakHub {
        WeakHub(Arc::downgrade(&self.inner))
    }

    /// The reports queued since the last call.
    pub fn take_reports(&self) -> Vec<ServerReport> {
        self.inner
            .pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default()
    }

    /// Every server's state now.
    pub fn reports(&self) -> Vec<ServerReport> {
        self.servers().iter().map(Entry::report).collect()
    }

    /// The tools of the running servers (a server found to have exited is marked stopped first).
    pub fn offered(&self) -> Vec<ToolInfo> {
        let gone: Vec<(String, String)> = self
            .servers()
            .iter()
            .filter_map(|e| {
                let c = e.connection.as_ref().filter(|c| c.is_closed())?;
                Some((
                    e.settings.name.clone(),
                    c.with_stderr("the server exited".into()),
                ))
            })
            .collect();
        for (name, why) in gone {
            self.fail(&name, ServerState::Stopped, why);
        }
        self.servers()
            .iter()
            .filter(|e| e.state == ServerState::Running)
            .flat_map(|e| e.tools.iter().cloned())
            .collect()
    }

    /// The offered tool of that full name.
    pub fn tool(&self, full_name: &str) -> Option<ToolInfo> {
        self.servers()
            .iter()
            .filter(|e| e.state == ServerState::Running)
            .flat_map(|e| e.tools.iter())
            .find(|t| t.full_name == full_name)
            .cloned()
    }

    /// Call a tool; a server that turns out to be gone is marked stopped.
    pub async fn call(&self, tool: &ToolInfo, arguments: Map<String, Value>) -> CallOutcome {
        let connection = self
            .servers()
            .iter()
            .find(|e| e.settings.name == tool.server)
            .and_then(|e| e.connection.clone());
        let Some(connection) = connection else {
            return CallOutcome::Failed(format!("the MCP server {} is not running", tool.server));
        };
        match connection.call(&tool.name, arguments).await {
            Ok(answer) => CallOutcome::Answered(result::call_text(&answer)),
            Err(CallError::Timeout(limit)) => CallOutcome::Failed(format!(
                "the MCP server {} did not answer within {}s; the call was abandoned",
                tool.server,
                limit.as_secs()
            )),
            Err(CallError::Refused(problem)) => CallOutcome::Failed(format!(
                "the MCP server {} refused the call: {problem}",
                tool.server
            )),
            Err(CallError::Gone(problem)) => {
                let why = format!(
                    "the server exited during a call of {}: {problem}",
                    tool.name
                );
                self.fail(&tool.server, ServerState::Stopped, why);
                CallOutcome::Failed(format!(
                    "the MCP server {} exited during the call; its tools are no longer available",
                    tool.server
                ))
            }
        }
    }
}
