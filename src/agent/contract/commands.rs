//! What a front end can ask of a running session (`AgentCommand`). Commands
//! that change the task's approvals are handled even while a task runs: the
//! runner routes them to the session's control channel (see `runner`).

use crate::tools::ToolId;
use tokio_util::sync::CancellationToken;

#[derive(Debug)]
pub enum AgentCommand {
    /// Run a task; cancelling the token interrupts it (stream dropped, tests killed).
    RunTask {
        task: String,
        cancel: CancellationToken,
    },
    /// Go on after an error or interrupt without a new user message. Refused
    /// (with an `Error` event) when the conversation has no task yet.
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
    /// Take back "approve for the rest of the task" for these tools (`/revoke`);
    /// takes effect before the next tool call, even while a task runs.
    RevokeApprovals(Vec<ToolId>),
    /// Ask for this model from the next request on (`/model NAME`); answered
    /// with `ModelChanged`, or `Error` when the model cannot switch.
    SetModel(String),
    /// Ask the server which models it offers (`/model` alone); answered
    /// with `ModelsListed`.
    ListModels,
    /// Work in a stage from the next task on, or step by step again
    /// (`/stage`); answered with `StageChanged`, or `Error`.
    SetStaged(bool),
}
