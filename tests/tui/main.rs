//! The full-screen UI's state machine and rendering, without a terminal:
//! scenario events fed to an `App`, frames drawn into a `TestBackend`, and
//! snapshots of every visible state.

// Tests may panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod commands;
mod diff_lazy;
mod exit;
mod failures;
mod hints;
mod keystrokes;
mod layers;
mod live_order;
mod live_patch;
mod looks;
mod mcp;
mod model_switch;
mod panes;
mod patch_review;
mod picker;
mod prompts;
mod provider_words;
mod restored;
mod review;
mod run_output;
mod scroll_resize;
mod session;
mod snapshots;
mod state;
mod stream_faults;
mod task_approval;
