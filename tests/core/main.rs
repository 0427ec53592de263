//! The core's integration tests in one binary: the step loop, the tools, the
//! confinement, the model client against the mock server. No terminal.

// Tests may panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod agent_loop;
mod agent_protocol;
mod agent_session;
mod apply_patch;
mod architecture;
mod confinement;
mod context_and_cost;
mod dependencies;
mod file_safety;
mod list_overview;
mod live_previews;
mod loops;
mod mcp_session;
mod model_switch;
mod network_faults;
mod one_path;
mod patch_review;
mod project_gate;
mod prompt_cache;
mod ranged_reads;
mod reasoning_wire;
mod restored_view;
mod review;
mod sandbox_cargo;
mod search_counts;
mod session_changes;
mod staged_review;
mod stream_errors;
mod stream_liveness;
mod text_calls;
mod tools;
mod tools_atomic;
mod tools_confinement_props;
mod tools_guard;
mod tools_text;
