//! The binary driven as a user drives it: `stepwise exec`, `--demo`, the
//! configuration layers and the transcript, against the mock server.

#[path = "../support/mod.rs"]
mod support;

mod audit_log;
mod config_layers;
mod demo;
mod exec_e2e;
