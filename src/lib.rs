//! stepwise: a coding agent for the terminal. A model proposes one action per
//! step; the program holds every permission, shows the diff, and acts only on
//! the user's approval.
//!
//! - [`agent`]: the step loop, model protocols, events and approvals (no UI).
//! - [`llm`]: OpenAI-compatible client with SSE streaming.
//! - [`tools`]: workspace confinement, file tools, the test runner.
//! - [`diff`]: line diffs of proposed edits.
//! - [`config`]: configuration from flags, environment, `stepwise.toml` and `.env`, and the model table.
//! - [`audit`]: the JSONL session transcript; [`lock`]: one stepwise per workspace.
//! - [`setup`]: building a session from the configuration (HTTP or scripted model).
//! - [`present`]: the English wording of events, shared by both front ends.
//! - [`headless`]: `stepwise exec`; [`tui`]: the full-screen app.

pub mod agent;
pub mod audit;
pub mod config;
pub mod diff;
pub mod headless;
pub mod llm;
pub mod lock;
pub mod present;
pub mod setup;
pub mod state_dir;
pub mod tools;
pub mod tui;
