//! The real binary in full-screen mode through a pseudo-terminal: keys typed,
//! the settled screen read back, the terminal restored on every exit path.

#[path = "../support/mod.rs"]
mod support;

mod review;
mod screens;
