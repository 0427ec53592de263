//! The full-screen terminal UI (being built under issue 3).

use crate::config::Config;

/// Run the full-screen app and return the process exit code.
pub fn run(_runtime: &tokio::runtime::Runtime, _config: Config) -> i32 {
    eprintln!("stepwise: the full-screen UI is not available yet; use `stepwise exec TASK`");
    2
}
