//! Full-screen views over the panes: the key `help`, a tool call's `detail`,
//! and the `/diff` `session_diff`. Each owns its rows and its scroll.

pub mod detail;
pub mod help;
pub mod session_diff;
