//! One ACP session: a prepared stepwise session running as its own agent
//! task (`agent::spawn_agent`) and the event pump that speaks for it
//! (`turn.rs`); prompts, cancels and revokes go through here.
//!
//! What must stay true: one turn at a time per session (a second prompt is
//! refused, not queued); the workspace lock is held until the session's
//! agent has ended (the pump holds it); a closed session takes no command.

use super::rpc::{Outbox, RpcError};
use super::start::Trust;
use super::state::{Ended, SharedState, Turn, lock};
use super::turn::{Pump, WritingSlot};
use crate::agent::{AgentCommand, ToolId};
use crate::setup::Prepared;
use agent_client_protocol_schema::v1::SessionUpdate;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

type Commands = mpsc::UnboundedSender<AgentCommand>;

/// A live session.
pub(super) struct Live {
    /// `None` once the session is closed.
    commands: Mutex<Option<Commands>>,
    shared: SharedState,
    /// Ends when the agent has ended (and the workspace is let go).
    pump: Mutex<Option<JoinHandle<()>>>,
    /// Where the session stands with its folder's trust (settled at the
    /// first prompt).
    pub trust: tokio::sync::Mutex<Trust>,
    /// Its transcript's name (`None`: not logged).
    pub name: Option<String>,
}

impl Live {
    /// Spawn the agent on `prepared` and the pump that speaks for it;
    /// `slot` is its workspace's writing turn, shared with the process's
    /// other sessions there.
    pub fn start(
        mut prepared: Prepared,
        id: &str,
        out: Arc<Outbox>,
        hunks: bool,
        slot: WritingSlot,
    ) -> Live {
        let (events, inbox) = mpsc::unbounded_channel();
        // What the transcript says decided each approval.
        let inbox = prepared.events_for_front_end(inbox, "acp client");
        let prepared_name = prepared.resume_name.as_ref().map(|n| n.name().to_string());
        let Prepared {
            session,
            lock: workspace_lock,
            ..
        } = prepared;
        let root = session.workspace().root().to_path_buf();
        let name = prepared_name;
        let handle = crate::agent::spawn_agent(session, events);
        let shared = SharedState::default();
        let pump = Pump::new(out, id.to_string(), shared.clone(), root, hunks)
            .holding(workspace_lock, slot);
        let pump = tokio::spawn(pump.run(inbox));
        Live {
            commands: Mutex::new(Some(handle.commands)),
            shared,
            pump: Mutex::new(Some(pump)),
            trust: tokio::sync::Mutex::new(Trust::Settled),
            name,
        }
    }

    /// The session with its folder's trust still to settle.
    pub fn trusting(self, trust: Trust) -> Live {
        Live {
            trust: tokio::sync::Mutex::new(trust),
            ..self
        }
    }

    /// Everything the session said so far.
    pub fn said(&self) -> Vec<SessionUpdate> {
        lock(&self.shared).said.all()
    }

    /// Keep updates said for the session before it started (its replay).
    pub fn remember(&self, updates: Vec<SessionUpdate>) {
        let mut shared = lock(&self.shared);
        let later = shared.said.take();
        for update in updates.into_iter().chain(later) {
            shared.said.keep(update);
        }
    }

    fn send(&self, command: AgentCommand) -> bool {
        let commands = self.commands.lock().unwrap_or_else(|e| e.into_inner());
        commands.as_ref().is_some_and(|c| c.send(command).is_ok())
    }

    /// End the session: cancel its turn, stop its agent, and wait (a
    /// moment at most) until it has let go of its workspace.
    pub async fn close(&self) {
        self.cancel();
        drop(
            self.commands
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        let pump = self.pump.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(pump) = pump {
            let ended = tokio::time::timeout(std::time::Duration::from_secs(10), pump).await;
            if ended.is_err() {
                tracing::warn!("a closed session's agent is still ending");
            }
        }
    }

    /// Run one task to its end (or its cancel).
    pub async fn prompt(&self, task: String) -> Result<Ended, RpcError> {
        let (done, ended) = oneshot::channel();
        let cancel = CancellationToken::new();
        {
            let mut shared = lock(&self.shared);
            if shared.turn.is_some() {
                return Err(RpcError::invalid_params(
                    "a prompt is already running in this session",
                ));
            }
            shared.turns += 1;
            shared.said.keep(super::map::user_message(&task));
            shared.turn = Some(Turn {
                number: shared.turns,
                cancel: cancel.clone(),
                done: Some(done),
                receipt: None,
                rejected: Vec::new(),
                writing: None,
            });
        }
        if !self.send(AgentCommand::RunTask { task, cancel }) {
            lock(&self.shared).turn = None;
            return Err(RpcError::internal("the session has ended"));
        }
        ended
            .await
            .map_err(|_| RpcError::internal("the session ended before the turn did"))
    }

    /// Interrupt the running turn, if any.
    pub fn cancel(&self) {
        if let Some(turn) = &lock(&self.shared).turn {
            turn.cancel.cancel();
        }
    }

    /// Take back "allow for the rest of the task" for these tools (all the
    /// approved ones when `None`); returns the tools revoked.
    pub fn revoke(&self, names: Option<&[String]>) -> Vec<ToolId> {
        let approved = lock(&self.shared).approved.clone();
        let tools: Vec<ToolId> = match names {
            None => approved,
            Some(names) => approved
                .into_iter()
                .filter(|t| names.iter().any(|n| t.to_string() == *n))
                .collect(),
        };
        if !tools.is_empty() {
            self.send(AgentCommand::RevokeApprovals(tools.clone()));
        }
        tools
    }
}
