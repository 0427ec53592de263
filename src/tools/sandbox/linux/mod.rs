//! The Linux sandbox: probing what the kernel offers (once), preparing the
//! child's plan and ruleset before `fork`, and supervising the run.
//!
//! What must stay true: the probe decides the state word and the plan alike,
//! so what is shown is what is set up.

mod child;
mod reap;
mod rules;

use super::{Network, Policy, State};
use child::{IdMaps, NetMethod, Plan};
pub use reap::Supervisor;
use std::path::Path;
use std::sync::OnceLock;
use tokio::process::Command;

/// What this kernel offers, probed once.
#[derive(Debug, Clone, Copy)]
struct Probe {
    /// The Landlock ABI version (0: none).
    landlock: i32,
    net: Option<NetMethod>,
}

fn probe() -> Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    *PROBE.get_or_init(|| Probe {
        landlock: landlock_abi(),
        net: probe_net(),
    })
}

fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the documented version query: no ruleset, no size.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

/// Try each way into a network namespace in a throwaway child.
fn probe_net() -> Option<NetMethod> {
    // SAFETY: the child makes only async-signal-safe calls and `_exit`s; the
    // parent waits for exactly that pid.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            // A user namespace first, also for root: only outside the
            // initial one does `PR_SET_DUMPABLE` keep root's tests out of
            // stepwise's /proc entry (they have no capabilities there).
            let code = if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) == 0 {
                1
            } else if libc::unshare(libc::CLONE_NEWNET) == 0 {
                0
            } else {
                2
            };
            libc::_exit(code);
        }
        if pid < 0 {
            return None;
        }
        let mut status = 0;
        if libc::waitpid(pid, &mut status, 0) != pid || !libc::WIFEXITED(status) {
            return None;
        }
        match libc::WEXITSTATUS(status) {
            0 => Some(NetMethod::Plain),
            1 => Some(NetMethod::UserNs),
            _ => None,
        }
    }
}

pub fn state(policy: &Policy) -> State {
    let p = probe();
    let network = if policy.network {
        Network::Allowed
    } else if p.net.is_some() {
        Network::Namespace
    } else if p.landlock >= 4 {
        Network::TcpOnly
    } else {
        Network::Open
    };
    State {
        files: p.landlock >= 1,
        network,
        limits: true,
        off: false,
    }
}

/// Install the plan as the command's `pre_exec` hook.
pub fn install(
    command: &mut Command,
    root: &Path,
    temp: &Path,
    policy: &Policy,
    state: &State,
) -> Result<Supervisor, String> {
    reap::become_subreaper();
    let p = probe();
    let net = match state.network {
        Network::Namespace => p.net,
        _ => None,
    };
    let ruleset = if state.files {
        let block_tcp = state.network == Network::TcpOnly;
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        Some(rules::build(&root, temp, policy, block_tcp)?)
    } else {
        None
    };
    let l = policy.limits;
    let mut plan = Plan {
        rlimits: vec![
            (libc::RLIMIT_AS, l.memory_bytes, l.memory_bytes),
            // The soft limit sends SIGXCPU (named in the result); the hard
            // one, a little later, kills a process that ignores it.
            (
                libc::RLIMIT_CPU,
                l.cpu_seconds,
                l.cpu_seconds.saturating_add(5),
            ),
            (libc::RLIMIT_FSIZE, l.file_size_bytes, l.file_size_bytes),
            (libc::RLIMIT_NOFILE, l.open_files, l.open_files),
        ],
        net,
        nproc: (net == Some(NetMethod::UserNs)).then_some(l.processes),
        ruleset,
        maps: IdMaps::new(),
    };
    // SAFETY: `Plan::apply` is async-signal-safe (see its module).
    unsafe {
        command.pre_exec(move || plan.apply());
    }
    Ok(Supervisor::default())
}
