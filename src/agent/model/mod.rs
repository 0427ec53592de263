//! The conversation with the model: asking it for one decision (`request`, with
//! `retry`), reading its reply in either protocol (`protocol`; `live` while it
//! streams), what it is told (`prompt`, the project's `rules`), which model
//! (`switch`), and keeping the conversation inside its window (`context`,
//! `compact`, `budget`) and out of loops (`repeats`).
//!
//! What must stay true: the partial text of a failed request is never acted on;
//! nothing here changes the workspace.

pub(super) mod budget;
pub(super) mod compact;
pub(super) mod context;
pub mod live;
pub(super) mod prompt;
pub mod protocol;
pub(super) mod repeats;
pub(super) mod request;
pub(super) mod retry;
pub mod rules;
pub(super) mod switch;
