//! Runs a `Session` as its own tokio task, driven by typed commands. This is
//! how an interactive front end (the TUI) uses the core.

use super::events::EventSender;
use super::session::Session;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// What a front end can ask of a running session.
#[derive(Debug)]
pub enum AgentCommand {
    /// Run a task; cancelling the token interrupts it (stream dropped, tests killed).
    RunTask {
        task: String,
        cancel: CancellationToken,
    },
    /// Go on after an error or interrupt without a new user message.
    Resume { cancel: CancellationToken },
    /// Elide old tool results now (`/compact`).
    Compact,
    /// Forget the conversation.
    ClearConversation,
}

/// The front end's side of a spawned session.
pub struct AgentHandle {
    pub commands: mpsc::UnboundedSender<AgentCommand>,
    pub task: JoinHandle<()>,
}

/// Spawn the session; it runs commands one at a time until the command channel closes.
pub fn spawn_agent(mut session: Session, events: EventSender) -> AgentHandle {
    let (commands, mut inbox) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        while let Some(command) = inbox.recv().await {
            match command {
                AgentCommand::RunTask { task, cancel } => {
                    session.run_task(&task, &events, cancel).await;
                }
                AgentCommand::Resume { cancel } => {
                    session.resume(&events, cancel).await;
                }
                AgentCommand::Compact => session.compact_now(&events).await,
                AgentCommand::ClearConversation => session.clear(),
            }
        }
    });
    AgentHandle { commands, task }
}
