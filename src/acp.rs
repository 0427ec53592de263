//! `stepwise acp`: stepwise as an Agent Client Protocol agent for an
//! editor, JSON-RPC on stdin/stdout. A third front end of the same shape as
//! `exec` and the TUI: it builds sessions with `setup`, drives each with
//! `agent::spawn_agent`, and turns `AgentEvent`s and approval shapes into
//! ACP messages. The protocol's types come from `agent-client-protocol-schema`;
//! the connection is the small line loop here (no runtime of its own).
//!
//! - `rpc.rs`: JSON-RPC framing, errors, the outbox and the writer task;
//! - `server.rs`: the methods (`initialize`, `session/new`, `session/load`,
//!   `session/prompt`, `session/cancel`, `session/close`,
//!   `_stepwise/revoke`), any number of sessions per process and per folder;
//! - `start.rs`: a session's configuration for the client's `cwd` (trust,
//!   the client's MCP servers); `trust.rs`: the trust question, on the
//!   session, at its first prompt;
//! - `session.rs`: one live session; `turn.rs`: its event pump; `state.rs`:
//!   what the two share (the running turn);
//! - `map.rs`: the ACP shape of each event; `permission.rs`: the options of
//!   a permission request and what an answer decides.
//!
//! What must stay true: stdout carries JSON-RPC only (logs go to stderr);
//! every write and test run waits for the client's approval, and the gate
//! and the receipt are the core's, as in the other front ends; two sessions
//! never change one folder at once (writing turns take turns); nothing here
//! tests a tool's name.

mod map;
mod permission;
mod rpc;
mod server;
mod session;
mod start;
mod state;
mod trust;
mod turn;

pub use server::{REVOKE, run};
pub use start::Start;
