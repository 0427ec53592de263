//! Runs a `Session` as its own tokio task, driven by typed commands. This is
//! how an interactive front end (the TUI) uses the core. Commands run one at
//! a time, except revocations: a router forwards them to the session's
//! `Revoker` at once, so a revoke never waits for the running task to end.
//! After each command (and once at the start) the session's changed files
//! go out when they changed, so a front end never keeps its own list.

use super::contract::{AgentCommand, AgentEvent, EventSender};
use super::session::Session;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The front end's side of a spawned session.
pub struct AgentHandle {
    pub commands: mpsc::UnboundedSender<AgentCommand>,
    /// The session's task (it ends when `commands` is dropped, or panics).
    pub task: JoinHandle<()>,
}

/// Spawn the session; it runs commands one at a time until the command
/// channel closes. `SessionReady` is sent first.
pub fn spawn_agent(mut session: Session, events: EventSender) -> AgentHandle {
    let _ = events.send(AgentEvent::SessionReady {
        rules: session.rule_files(),
        sandbox: session.sandbox_state(),
        limits: session.sandbox_limits(),
    });
    if let Some(stage) = session.stage_name() {
        let _ = events.send(AgentEvent::StageChanged {
            message: format!("Staged: tasks work in the stage {stage}; each changeset is reviewed once its tests pass."),
            stage: Some(stage),
        });
    }
    for restored in session.restored_events() {
        let _ = events.send(restored);
    }
    let mut files = session.changed_paths();
    if !files.is_empty() {
        let _ = events.send(AgentEvent::SessionFiles {
            files: files.clone(),
        });
    }
    forward_mcp_reports(session.mcp_hub(), &events);
    let (commands, mut inbox) = mpsc::unbounded_channel();
    let (work_tx, mut work) = mpsc::unbounded_channel();
    let revoker = session.revoker();
    // Ends when the front end drops `commands`; dropping `work_tx` then ends the session.
    tokio::spawn(async move {
        while let Some(command) = inbox.recv().await {
            match command {
                AgentCommand::RevokeApprovals(tools) => {
                    revoker.revoke(tools);
                }
                other => {
                    if work_tx.send(other).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let task = tokio::spawn(async move {
        while let Some(command) = work.recv().await {
            match command {
                AgentCommand::RunTask { task, cancel } => {
                    session.run_task(&task, &events, cancel).await;
                }
                AgentCommand::Resume { cancel } => {
                    session.resume(&events, cancel).await;
                }
                AgentCommand::Compact => session.compact_now(&events).await,
                AgentCommand::ShowDiff => session.show_diff(&events).await,
                AgentCommand::Undo { all, cancel } => session.undo(all, &events, cancel).await,
                AgentCommand::ClearConversation => session.clear(),
                AgentCommand::SetModel(model) => session.set_model(&model, &events),
                AgentCommand::ListModels => session.list_models(&events).await,
                AgentCommand::SetStaged(on) => session.set_staged(on, &events),
                // The router above takes these; one arriving here goes the same way.
                AgentCommand::RevokeApprovals(tools) => {
                    session.revoker().revoke(tools);
                }
            }
            // After every command: what a resumed session would start from.
            session.checkpoint();
            let now = session.changed_paths();
            if now != files {
                files = now;
                let _ = events.send(AgentEvent::SessionFiles {
                    files: files.clone(),
                });
            }
        }
    });
    AgentHandle { commands, task }
}

/// Start the MCP servers now (in the background: nothing waits for them) and
/// send each change of their state as it happens. Holds the event channel
/// and the servers only weakly: it never keeps a front end's inbox open, nor
/// the servers alive once the session is gone.
fn forward_mcp_reports(hub: crate::mcp::Hub, events: &EventSender) {
    if hub.is_empty() {
        return;
    }
    hub.start();
    let events = events.downgrade();
    let mut changes = hub.changes();
    let hub = hub.downgrade();
    tokio::spawn(async move {
        loop {
            let Some(live) = hub.upgrade() else {
                return;
            };
            for report in live.take_reports() {
                let Some(events) = events.upgrade() else {
                    return;
                };
                let _ = events.send(AgentEvent::McpServer(report));
            }
            drop(live);
            if changes.changed().await.is_err() {
                return;
            }
        }
    });
}
