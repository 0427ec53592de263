//! Runs a `Session` as its own tokio task, driven by typed commands. This is
//! how an interactive front end (the TUI) uses the core.

use super::events::EventSender;
use super::scopes::TaskApprovals;
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
    /// Send the session's cumulative diff (`/diff`).
    ShowDiff,
    /// Revert the last change, or all of the session's (`/undo`, `/undo all`).
    Undo {
        all: bool,
        cancel: CancellationToken,
    },
    /// Elide old tool results now (`/compact`).
    Compact,
    /// Forget the conversation.
    ClearConversation,
}

/// The front end's side of a spawned session.
pub struct AgentHandle {
    pub commands: mpsc::UnboundedSender<AgentCommand>,
    pub task: JoinHandle<()>,
    /// Tools approved for the rest of the running task (revocable).
    pub approvals: TaskApprovals,
}

/// Spawn the session; it runs commands one at a time until the command channel closes.
pub fn spawn_agent(mut session: Session, events: EventSender) -> AgentHandle {
    let (commands, mut inbox) = mpsc::unbounded_channel();
    let approvals = session.task_approvals();
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
                AgentCommand::ShowDiff => session.show_diff(&events).await,
                AgentCommand::Undo { all, cancel } => session.undo(all, &events, cancel).await,
                AgentCommand::ClearConversation => session.clear(),
            }
        }
    });
    AgentHandle {
        commands,
        task,
        approvals,
    }
}
