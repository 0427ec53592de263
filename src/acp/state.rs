//! What a session's event pump and its request handlers share: the
//! running turn (its cancel token, where its end is reported, its receipt,
//! the tools rejected for it), the tools approved for the rest of the task,
//! and what the session said so far.
//!
//! What must stay true: a turn's end is reported once, by the pump, after
//! every update of the turn was sent; the lock is never held across an
//! `await`.

use crate::agent::{FinishReason, Receipt, ToolId};
use agent_client_protocol_schema::v1::{ContentBlock, SessionUpdate};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// How a turn ended.
#[derive(Debug)]
pub(super) struct Ended {
    pub reason: FinishReason,
    pub receipt: Option<Receipt>,
}

/// The running turn.
pub(super) struct Turn {
    /// Numbers the turn's tool call ids (a model may reuse its own).
    pub number: u32,
    pub cancel: CancellationToken,
    pub done: Option<oneshot::Sender<Ended>>,
    pub receipt: Option<Receipt>,
    /// Tools the client rejected for the rest of the turn (`reject_always`).
    pub rejected: Vec<ToolId>,
    /// The workspace's writing turn, once this turn asked to change
    /// something; let go when the turn ends.
    pub writing: Option<tokio::sync::OwnedMutexGuard<()>>,
}

/// What the pump and the request handlers share.
#[derive(Default)]
pub(super) struct Shared {
    pub turn: Option<Turn>,
    pub turns: u32,
    /// The tools approved for the rest of the task (from `ScopesChanged`).
    pub approved: Vec<ToolId>,
    /// Every update the session sent (its replay, then its turns), said
    /// again to a client that loads the session while it is open.
    pub said: Vec<SessionUpdate>,
}

impl Shared {
    /// Keep an update that was sent (pieces of one message joined).
    pub fn keep_said(&mut self, update: SessionUpdate) {
        if let (
            Some(SessionUpdate::AgentMessageChunk(last)),
            SessionUpdate::AgentMessageChunk(next),
        ) = (self.said.last_mut(), &update)
            && let (ContentBlock::Text(last), ContentBlock::Text(next)) =
                (&mut last.content, &next.content)
        {
            last.text.push_str(&next.text);
            return;
        }
        self.said.push(update);
    }
}

pub(super) type SharedState = Arc<Mutex<Shared>>;

pub(super) fn lock(shared: &SharedState) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}
