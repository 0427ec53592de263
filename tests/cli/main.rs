//! The binary driven as a user drives it: `stepwise exec`, `--demo`, the
//! configuration layers and the transcript, against the mock server.

// Tests may panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod acp;
mod anthropic;
mod audit_log;
mod config_layers;
mod conventions;
mod demo;
mod exec_e2e;
mod file_tools_e2e;
mod gate;
mod json_schema;
mod mcp;
mod one_door;
mod output_hygiene;
mod projects;
mod provider_keys;
mod readme;
mod real_suites;
mod resume;
mod sandbox;
mod sandbox_escapes;
mod sandbox_hardening;
mod sandbox_home;
mod sandbox_plants;
mod sandbox_require;
mod sandbox_walls;
mod scrub;
mod staged;
mod trust;
