//! The real binary in full-screen mode through a pseudo-terminal: keys typed,
//! the settled screen read back, the terminal restored on every exit path.

// Tests may panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod git_diff;
mod keystrokes;
mod looks;
mod patch_review;
mod picker;
mod readme_captures;
mod resume;
mod review;
mod sandbox_terminal;
mod screens;
mod startup_keys;
mod trust;
