//! How long the model has sent no token while the UI waits for its reply:
//! a stream kept alive by keep-alive comments or pings is not stuck yet,
//! but the user should see how long it has been silent and when stepwise
//! gives up on it (`stream_token_timeout`).
//!
//! What must stay true: the count starts when a request is sent and starts
//! again with every piece of the reply (text or a streamed tool call); it
//! shows only while the UI waits for the model, and only after a silence a
//! healthy model does not keep ([`SHOW_AFTER`]); the run loop is woken once
//! a second while it shows, and not at all before.

use crate::agent::AgentEvent;
use crate::tui::app::{App, TaskState};
use std::time::{Duration, Instant};

/// Silence shorter than this is a model thinking as usual: nothing shown.
pub const SHOW_AFTER: Duration = Duration::from_secs(15);

impl App {
    /// Note when the model last sent something (from the core's events).
    pub(in crate::tui::app) fn note_liveness(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::ModelRequest { .. }
            | AgentEvent::AssistantDelta { .. }
            | AgentEvent::ToolCallStreaming { .. } => self.status.last_token = Some(self.now),
            AgentEvent::TaskFinished { .. } => self.status.last_token = None,
            _ => {}
        }
    }

    /// Set from `stream_token_timeout`: when stepwise gives up on a silent model.
    pub fn set_token_timeout(&mut self, timeout: Duration) {
        self.status.token_timeout = Some(timeout);
    }

    fn silent_since(&self) -> Option<Instant> {
        self.status
            .last_token
            .filter(|_| self.state() == TaskState::Thinking)
    }

    /// Whole seconds without a token, and seconds left before stepwise
    /// gives up (when the limit is known), once the silence shows.
    pub fn token_wait(&self) -> Option<(u64, Option<u64>)> {
        let silent = self.now.saturating_duration_since(self.silent_since()?);
        if silent < SHOW_AFTER {
            return None;
        }
        let left = self
            .status
            .token_timeout
            .map(|limit| limit.saturating_sub(silent).as_secs());
        Some((silent.as_secs(), left))
    }

    /// The next moment the silence shows or its count changes.
    pub(in crate::tui::app) fn token_wait_tick(&self) -> Option<Instant> {
        let since = self.silent_since()?;
        let silent = self.now.saturating_duration_since(since);
        if silent < SHOW_AFTER {
            return Some(since + SHOW_AFTER);
        }
        Some(since + Duration::from_secs(silent.as_secs() + 1))
    }
}
