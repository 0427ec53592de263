//! What a session's event pump and its request handlers share: the
//! running turn (its cancel token, where its end is reported, its receipt,
//! the tools rejected for it), the tools approved for the rest of the task,
//! and what the session said so far.
//!
//! What must stay true: a turn's end is reported once, by the pump, after
//! every update of the turn was sent; the lock is never held across an
//! `await`; what is kept of what a session said stays within its budget.

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
    /// What the session said, said again to a client that loads it while
    /// it is open.
    pub said: Said,
}

/// Every update a session sent (its replay, then its turns), up to a
/// budget: the oldest go first, and a replay says that they went.
#[derive(Default)]
pub(super) struct Said {
    updates: std::collections::VecDeque<(SessionUpdate, usize)>,
    bytes: usize,
    dropped: bool,
}

/// How much a session keeps of what it said.
const SAID_BUDGET: usize = 16 * 1024 * 1024;

impl Said {
    /// Keep an update that was sent (pieces of one message joined).
    pub fn keep(&mut self, update: SessionUpdate) {
        self.keep_within(update, SAID_BUDGET);
    }

    fn keep_within(&mut self, update: SessionUpdate, budget: usize) {
        let size = serde_json::to_vec(&update).map_or(0, |v| v.len());
        self.bytes += size;
        match (self.updates.back_mut(), &update) {
            (
                Some((SessionUpdate::AgentMessageChunk(last), kept)),
                SessionUpdate::AgentMessageChunk(next),
            ) if matches!(
                (&last.content, &next.content),
                (ContentBlock::Text(_), ContentBlock::Text(_))
            ) =>
            {
                if let (ContentBlock::Text(last), ContentBlock::Text(next)) =
                    (&mut last.content, &next.content)
                {
                    last.text.push_str(&next.text);
                }
                *kept += size;
            }
            _ => self.updates.push_back((update, size)),
        }
        while self.bytes > budget
            && let Some((_, size)) = self.updates.pop_front()
        {
            self.bytes -= size;
            self.dropped = true;
        }
    }

    /// Everything kept, after a note when older updates were let go.
    pub fn all(&self) -> Vec<SessionUpdate> {
        let note = self
            .dropped
            .then(|| super::map::note("(Earlier updates of this session are not kept.)"));
        note.into_iter()
            .chain(self.updates.iter().map(|(u, _)| u.clone()))
            .collect()
    }

    /// Take everything kept (to keep it again after other updates).
    pub fn take(&mut self) -> Vec<SessionUpdate> {
        self.bytes = 0;
        self.updates.drain(..).map(|(u, _)| u).collect()
    }
}

pub(super) type SharedState = Arc<Mutex<Shared>>;

pub(super) fn lock(shared: &SharedState) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(text: &str) -> SessionUpdate {
        super::super::map::message(text)
    }

    #[test]
    fn pieces_of_a_message_are_joined_and_the_oldest_go_past_the_budget() {
        let mut said = Said::default();
        said.keep_within(chunk("a"), 10_000);
        said.keep_within(chunk("b"), 10_000);
        said.keep_within(super::super::map::user_message("next"), 10_000);
        let all = said.all();
        assert_eq!(all.len(), 2);
        let first = serde_json::to_value(&all[0]).unwrap();
        assert_eq!(first["content"]["text"], "ab");
        let big = "x".repeat(600);
        for _ in 0..40 {
            said.keep_within(super::super::map::user_message(&big), 10_000);
        }
        assert!(said.bytes <= 10_000, "{}", said.bytes);
        let all = said.all();
        let note = serde_json::to_value(&all[0]).unwrap();
        assert_eq!(note["sessionUpdate"], "agent_thought_chunk", "{note}");
        assert!(all.len() < 20);
    }
}
