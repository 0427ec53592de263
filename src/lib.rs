//! stepwise: a coding agent for the terminal. A model proposes one action per
//! step; the program holds every permission, shows the diff, and acts only on
//! the user's approval.
//!
//! # Architecture
//!
//! Layers, from the bottom up; a module imports only from layers below it
//! (or its own folder), never up:
//!
//! 0. **The bottom**, importing nothing of stepwise: [`text`] (the one
//!    sanitizer every untrusted string passes before any front end shows
//!    it, number formatting, credential redaction, the scrubbing of known
//!    secrets, the tail of a long output) and [`tool_id`] (the tool
//!    identities: built-in names, MCP names, selectors).
//! 1. **Vocabulary**: [`diff`] (line diffs of proposed edits) and
//!    [`config`] (flags, environment, `stepwise.toml`, the model table, one
//!    range table every value passes; names tools only through `tool_id`).
//! 2. **Capabilities**: [`tools`] (tool identities, the tool registry and
//!    one folder per built-in tool, workspace confinement through `cap-std`,
//!    the deny list, patches, the test runner and its sandbox, and the
//!    layer a sandboxed run writes into with the rules that decide what of
//!    it may reach the workspace: the one door; and the stage a staged task
//!    works in, with its changeset) and [`llm`] (the
//!    OpenAI-compatible client with SSE streaming, Anthropic's Messages
//!    client, server errors, the scripted model).
//! 3. **The core**: [`agent`] — the step loop, the model protocols, approvals
//!    and the completion gate — and its contract with every front end in
//!    `agent::contract` (events out, commands in, decisions, receipts; an
//!    approval is a request carrying a `oneshot` reply). [`present`] turns
//!    events into English for both front ends (and hands on `text`'s
//!    sanitizer to them). [`mcp`]
//!    runs the configured MCP servers over stdio and hands their checked
//!    tools to the agent (each call still waits for approval).
//! 4. **Plumbing**: [`setup`] builds a session from the configuration,
//!    [`audit`] tees events into the JSONL transcript, [`resume`] writes
//!    and reads its signed checkpoints, [`lock`] and [`state_dir`] own
//!    `.stepwise/`.
//! 5. **Front ends**: [`headless`] (`stepwise exec`), [`acp`] (`stepwise
//!    acp`, the Agent Client Protocol on stdin/stdout for editors) and
//!    [`tui`] (the full-screen app, in folders by component; see its own map).
//!
//! Rules that tests check (`tests/core/architecture.rs`): the core (`agent`,
//! `llm`, `tools`, `diff`, `present`) never names `ratatui`, `crossterm`,
//! `clap`, `agent_client_protocol_schema`, `crate::tui`, `crate::headless` or
//! `crate::acp`; no files import each other in a
//! circle, nor do the top-level modules; no two folders of the TUI import
//! each other both ways. Clippy checks the rest: no `unwrap`/`expect` outside tests, no lock
//! held across an `await`, and colours named only in the TUI's theme.
//!
//! Which way the arrows run: front ends → `agent::contract` ← core; the core
//! → `tools`, `llm`, `mcp`; `tools` and `llm` → `config`, `diff`; everything
//! → `text`, `tool_id`. Nothing in
//! the core knows a front end, and no front end tests a tool's name.
//!
//! Where each concern lives:
//! - a new **tool** is one folder `tools/<name>/` (its schema, argument
//!   parsing, plan, result cut, live preview kind), its name in
//!   `tool_id.rs` and one line in `tools/calls/builtin.rs`; a test can register one with `Registry::with`;
//! - a new **setting** is one row in `config/settings.rs`;
//! - a new **event or command** goes in `agent/contract/`, its wording in
//!   [`present`] (shared by both front ends);
//! - a new **provider** is a client in `llm/` behind `llm::ChatModel`, its
//!   defaults in `config/providers.rs`;
//! - a new **key** is one row of the TUI's key map (`tui/input/keymap.rs`),
//!   which handlers, help and hints all read;
//! - a new **front end** drives `agent::spawn_agent` with `AgentCommand`s and
//!   renders `AgentEvent`s and approval shapes, as `headless`, `acp` and
//!   `tui` do.

pub mod acp;
pub mod agent;
pub mod audit;
pub mod config;
pub mod diff;
pub mod headless;
pub mod llm;
pub mod lock;
pub mod mcp;
pub mod present;
pub mod resume;
pub mod setup;
pub mod state_dir;
pub mod text;
pub mod tool_id;
pub mod tools;
pub mod tui;
