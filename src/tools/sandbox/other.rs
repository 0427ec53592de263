//! Systems other than Linux: no confinement, said plainly ("not sandboxed");
//! the environment allowlist and the temporary folder still apply, and the
//! process group is still killed at the end of the run.
//!
//! What must stay true: nothing here claims a restriction.

use super::{Network, Policy, State};
use std::path::Path;
use tokio::process::Command;

pub fn state(_policy: &Policy) -> State {
    State {
        network: Network::Open,
        off: false,
        ..State::off()
    }
}

pub fn install(
    _command: &mut Command,
    _root: &Path,
    _temp: &Path,
    _policy: &Policy,
    _state: &State,
    _layer: Option<&super::layers::LayerPlan>,
) -> Result<Supervisor, String> {
    Ok(Supervisor)
}

/// Nothing to supervise beyond the process group.
#[derive(Default)]
pub struct Supervisor;

impl Supervisor {
    pub fn started(&mut self, _pid: Option<u32>) {}

    pub fn has_disk(&self) -> bool {
        false
    }

    /// No run has a disk of its own here.
    #[cfg(unix)]
    pub fn disk(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        None
    }

    pub fn whole_run(&self) -> bool {
        false
    }

    pub fn out_of_memory(&self) -> bool {
        false
    }

    pub fn pids_refused(&self) -> bool {
        false
    }

    pub fn covers_pycache(&self) -> bool {
        false
    }

    pub fn private_tmp(&self) -> bool {
        false
    }

    pub fn over_processes(&self, _limit: u64) -> bool {
        false
    }

    pub async fn kill_all(&mut self) {}
}
