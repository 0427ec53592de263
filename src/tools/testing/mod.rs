//! Running the workspace's tests: finding its test commands (`test_commands`,
//! `test_infra`), running one in the sandbox (`test_runner`), the typed run
//! (`test_run`) and what its output says (`test_summary`, with `summary_js` and
//! `summary_lines`; `ansi` for colours).
//!
//! What must stay true: whether a run passed is decided in one place,
//! `test_summary::judge`, from its exit status and the runner's own summary.

pub mod ansi;
pub(super) mod summary_js;
pub(super) mod summary_lines;
pub mod test_commands;
pub mod test_infra;
pub mod test_run;
pub mod test_runner;
pub mod test_summary;
