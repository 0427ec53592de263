//! The Linux sandbox: probing what the kernel offers (once: user, network,
//! mount, PID, IPC and UTS namespaces, a fresh `/proc`, `mount_setattr`,
//! the seccomp filter, the Landlock ABI), preparing the child's plan and
//! ruleset before `fork`, and supervising the run.
//!
//! Root where no user namespace can be made gets the same namespaces
//! without one, and its run drops every capability (and the bounding set)
//! before Landlock: it is root only by its uid, which Landlock, the
//! read-only view and the seccomp filter confine like any other.
//!
//! What must stay true: the probe decides the state word and the plan alike,
//! so what is shown is what is set up.

mod calls;
mod cgroup;
mod child;
mod mounts;
mod overlay;
mod reap;
mod rules;
mod seccomp;

use super::{Network, Offered, Policy, State};
use child::{IdMaps, NetMethod, Plan};
pub use reap::Supervisor;
use std::path::Path;
use std::sync::OnceLock;
use tokio::process::Command;

/// What this kernel offers, probed once.
#[derive(Debug, Clone, Copy)]
struct Probe {
    offered: Offered,
    /// How to enter new namespaces (`None`: not at all).
    net: Option<NetMethod>,
    /// A tmpfs can be mounted in the run's namespace.
    tmpfs: bool,
}

impl Probe {
    /// The run's layer and temporary folders can be one tmpfs of its disk
    /// budget (see `overlay`).
    fn disk(&self) -> bool {
        self.offered.disk_held
    }
}

fn probe() -> Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    *PROBE.get_or_init(|| {
        let trial = LayerTrial::new();
        let found = probe_child(trial.as_ref().map(|t| (&t.options, &t.disk)));
        // SAFETY: geteuid cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        Probe {
            offered: Offered {
                landlock_abi: landlock_abi(),
                namespaces: found.net.is_some(),
                user_ns: found.net == Some(NetMethod::UserNs),
                pid_ns: found.pid_ns,
                read_only_view: found.read_only_view,
                root,
                seccomp: found.seccomp,
                limits: true,
                run_groups: cgroup::offered(),
                layer: found.layer,
                disk_held: found.layer && found.disk,
            },
            net: found.net,
            tmpfs: found.tmpfs,
        }
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

/// What the throwaway child found.
struct Found {
    net: Option<NetMethod>,
    /// PID, IPC and UTS namespaces, and the PID namespace's own `/proc`.
    pid_ns: bool,
    /// `mount_setattr` makes the whole tree read-only.
    read_only_view: bool,
    seccomp: bool,
    /// A tmpfs can be mounted there (to cover the `__pycache__` folders).
    tmpfs: bool,
    /// An overlay can be mounted there (the workspace layer).
    layer: bool,
    /// One with its upper folder on a tmpfs (user extended attributes on
    /// tmpfs: Linux 6.6), so that the run's disk can be one.
    disk: bool,
}

/// Folders to try an overlay on in the probe (removed with this).
struct LayerTrial {
    _dir: tempfile::TempDir,
    /// The overlay's options and the folder to mount it on.
    options: (std::ffi::CString, std::ffi::CString),
    /// The same on a run's disk: the tmpfs's folder and options, the
    /// folders to make in it, the overlay's options and target.
    disk: DiskTrial,
}

struct DiskTrial {
    dir: std::ffi::CString,
    tmpfs: std::ffi::CString,
    upper: std::ffi::CString,
    work: std::ffi::CString,
    overlay: std::ffi::CString,
    target: std::ffi::CString,
}

impl DiskTrial {
    /// In the probe's child: a tmpfs, an extended attribute of the user's
    /// on it, and an overlay with its upper folder there. Async-signal-safe.
    fn works(&self) -> bool {
        // SAFETY: mount, mkdir and setxattr on NUL-terminated paths.
        unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                self.dir.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                self.tmpfs.as_ptr().cast(),
            ) == 0
                && libc::mkdir(self.upper.as_ptr(), 0o755) == 0
                && libc::mkdir(self.work.as_ptr(), 0o755) == 0
                && libc::setxattr(
                    self.upper.as_ptr(),
                    c"user.stepwise".as_ptr(),
                    c"1".as_ptr().cast(),
                    1,
                    0,
                ) == 0
                && libc::mount(
                    c"overlay".as_ptr(),
                    self.target.as_ptr(),
                    c"overlay".as_ptr(),
                    0,
                    self.overlay.as_ptr().cast(),
                ) == 0
        }
    }
}

impl LayerTrial {
    fn new() -> Option<LayerTrial> {
        let dir = tempfile::Builder::new()
            .prefix("stepwise-probe-")
            .tempdir()
            .ok()?;
        let lower = dir.path().join("lower");
        let merged = dir.path().join("merged");
        std::fs::create_dir(&lower).ok()?;
        std::fs::create_dir(&merged).ok()?;
        let options = overlay::overlay_options(&[&lower], &dir.path().join("layer"))?;
        let target = calls::c_path(&merged)?;
        let held = dir.path().join("disk");
        let merged = dir.path().join("merged-on-disk");
        std::fs::create_dir(&merged).ok()?;
        let overlay = overlay::overlay_options(&[&lower], &held)?;
        let disk = DiskTrial {
            dir: calls::c_path(&held)?,
            tmpfs: overlay::disk_options(1)?,
            upper: calls::c_path(&held.join("upper"))?,
            work: calls::c_path(&held.join("work"))?,
            overlay,
            target: calls::c_path(&merged)?,
        };
        Some(LayerTrial {
            _dir: dir,
            options: (options, target),
            disk,
        })
    }
}

/// In a throwaway child: each way into a network and mount namespace (and
/// making `/` a slave there), with PID, IPC and UTS namespaces if it can
/// (then a grandchild, PID 1 there, mounts its `/proc`), then the seccomp
/// filter (does a Unix socket fail afterwards?).
fn probe_child(layer: Option<(&(std::ffi::CString, std::ffi::CString), &DiskTrial)>) -> Found {
    const USER_NS: i32 = 1;
    const PLAIN: i32 = 2;
    const SECCOMP: i32 = 4;
    const PID_NS: i32 = 8;
    const READ_ONLY_VIEW: i32 = 16;
    const TMPFS: i32 = 32;
    const LAYER: i32 = 64;
    const DISK: i32 = 128;
    let flags = libc::CLONE_NEWNET | libc::CLONE_NEWNS;
    let more = libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    let filter = seccomp::prepare();
    let maps = IdMaps::new();
    // SAFETY: the child makes only async-signal-safe calls and `_exit`s; the
    // parent waits for exactly that pid.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            let slave = || {
                let none = std::ptr::null::<libc::c_char>();
                let recursive = libc::MS_REC | libc::MS_SLAVE;
                libc::mount(none, c"/".as_ptr(), none, recursive, std::ptr::null()) == 0
            };
            // A user namespace first, also for root: only outside the
            // initial one does `PR_SET_DUMPABLE` keep root's tests out of
            // stepwise's /proc entry (they have no capabilities there).
            let mut pid_ns = true;
            let mut code = 0;
            for extra in [more, 0] {
                code = if libc::unshare(libc::CLONE_NEWUSER | flags | extra) == 0
                    && maps.write().is_ok()
                    && slave()
                {
                    USER_NS
                } else if libc::unshare(flags | extra) == 0 && slave() {
                    PLAIN
                } else {
                    0
                };
                if code != 0 {
                    break;
                }
                pid_ns = false;
            }
            if code != 0 && pid_ns {
                let init = libc::fork();
                if init == 0 {
                    let none = std::ptr::null::<libc::c_void>();
                    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                    let proc = c"proc".as_ptr();
                    let ok = libc::mount(proc, c"/proc".as_ptr(), proc, flags, none) == 0;
                    libc::_exit(i32::from(!ok));
                }
                let mut status = 0;
                if init > 0
                    && libc::waitpid(init, &mut status, 0) == init
                    && libc::WIFEXITED(status)
                    && libc::WEXITSTATUS(status) == 0
                {
                    code |= PID_NS;
                }
            }
            // Before the tmpfs below, which covers the trial's folders in `/tmp`.
            if code != 0
                && let Some(((options, target), disk)) = layer
            {
                let mounted = libc::mount(
                    c"overlay".as_ptr(),
                    target.as_ptr(),
                    c"overlay".as_ptr(),
                    0,
                    options.as_ptr().cast(),
                ) == 0;
                if mounted {
                    code |= LAYER;
                }
                if mounted && disk.works() {
                    code |= DISK;
                }
            }
            if code != 0 {
                let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                let tmpfs = c"tmpfs".as_ptr();
                let data = c"size=4k".as_ptr().cast();
                if libc::mount(tmpfs, c"/tmp".as_ptr(), tmpfs, flags, data) == 0 {
                    code |= TMPFS;
                }
            }
            if code != 0 && calls::set_read_only(c"/", true, true).is_ok() {
                code |= READ_ONLY_VIEW;
            }
            if filter && seccomp::install().is_ok() {
                let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
                if fd < 0 && *libc::__errno_location() == libc::EPERM {
                    code |= SECCOMP;
                }
            }
            libc::_exit(code);
        }
        let none = Found {
            net: None,
            pid_ns: false,
            read_only_view: false,
            seccomp: false,
            tmpfs: false,
            layer: false,
            disk: false,
        };
        if pid < 0 {
            return none;
        }
        let mut status = 0;
        if libc::waitpid(pid, &mut status, 0) != pid || !libc::WIFEXITED(status) {
            return none;
        }
        let code = libc::WEXITSTATUS(status);
        let net = match code & 3 {
            USER_NS => Some(NetMethod::UserNs),
            PLAIN => Some(NetMethod::Plain),
            _ => None,
        };
        Found {
            pid_ns: net.is_some() && code & PID_NS != 0,
            read_only_view: net.is_some() && code & READ_ONLY_VIEW != 0,
            tmpfs: net.is_some() && code & TMPFS != 0,
            layer: net.is_some() && code & LAYER != 0,
            disk: net.is_some() && code & DISK != 0,
            net,
            seccomp: code & SECCOMP != 0,
        }
    }
}

pub fn state(policy: &Policy) -> State {
    State::of(&probe().offered, policy.network)
}

/// Install the plan as the command's `pre_exec` hook.
pub fn install(
    command: &mut Command,
    root: &Path,
    temp: &Path,
    policy: &Policy,
    state: &State,
    layer: Option<&super::layers::LayerPlan>,
) -> Result<Supervisor, String> {
    let mut supervisor = Supervisor::default();
    let p = probe();
    let new_net = state.network == Network::Namespace;
    let net = (new_net || state.workspace).then_some(p.net).flatten();
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let l = policy.limits;
    let (mounts, shm) = if state.workspace {
        let veil = supervisor.veil()?;
        // With a layer, `/dev/shm` is a private tmpfs of the disk budget
        // (see `overlay`); else the run's own folder in the host's.
        let shm = match layer.is_some() && p.tmpfs {
            true => None,
            false => supervisor.shm()?,
        };
        let mut writable = vec![root.clone(), temp.to_path_buf()];
        writable.extend(policy.writable.iter().cloned());
        let view = state.metadata.then_some(writable.as_slice());
        let layers = temp.join("layers");
        // The run's disk: one tmpfs of its budget (see `overlay`).
        let disk = match layer {
            Some(plan) if p.disk() => {
                let (ours, theirs) = overlay::disk_socket()
                    .map_err(|e| format!("could not prepare the run's disk: {e}"))?;
                supervisor.set_disk_socket(ours);
                Some(
                    overlay::Disk::new(plan, theirs)
                        .ok_or_else(|| format!("cannot confine the path {}", plan.dir.display()))?,
                )
            }
            _ => None,
        };
        let mounts = mounts::Mounts::new(
            &root,
            &veil,
            shm.as_deref(),
            view,
            &layers,
            p.tmpfs,
            layer,
            &policy.deny,
            &policy.covered,
            disk,
        )?;
        supervisor.set_private_tmp(mounts.private_tmp_is_tmp());
        supervisor.set_covers_pycache(mounts.covers_pycache());
        (Some(mounts), shm)
    } else {
        (None, None)
    };
    let pid_ns = state.processes;
    let ruleset = if state.landlock_abi >= 1 {
        let block_tcp = state.network == Network::TcpOnly;
        Some(rules::build(
            &root,
            temp,
            policy,
            block_tcp,
            shm.as_deref(),
        )?)
    } else {
        None
    };
    // For the rules the child adds once its own `/proc` and terminals are mounted.
    let ruleset_fd = match (&ruleset, state.workspace) {
        (Some(r), true) => {
            let copy = r
                .try_clone()
                .map_err(|e| format!("could not prepare the sandbox rules: {e}"))?;
            Option::<std::os::fd::OwnedFd>::from(copy)
        }
        _ => None,
    };
    if state.unix_sockets && !seccomp::prepare() {
        return Err("could not build the sandbox's seccomp filter".into());
    }
    let budget = match state.unix_sockets {
        true => seccomp::budget(l.disk_bytes),
        false => Vec::new(),
    };
    let cgroup_procs = supervisor.run_group(l.memory_bytes, l.processes);
    let mut plan = Plan {
        cgroup_procs,
        rlimits: vec![
            // The memory a process writes (heap and private mappings), not
            // its address space: WebAssembly and other runtimes reserve far
            // more than they use (vitest's needs more than 16 GiB of it).
            (libc::RLIMIT_DATA, l.memory_bytes, l.memory_bytes),
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
        new_net,
        mounts,
        seccomp: state.unix_sockets,
        budget,
        // Root without a user namespace: its capabilities are real ones.
        drop_all_caps: p.offered.root && !p.offered.user_ns,
        nproc: (net == Some(NetMethod::UserNs)).then_some(l.processes),
        ruleset,
        ruleset_fd,
        pid_ns,
        pts_access: child::pts_access(state.landlock_abi),
        layer_grant: match layer {
            Some(_) => {
                use landlock::Access;
                let all = landlock::AccessFs::from_all(landlock::ABI::from(state.landlock_abi));
                let path = std::ffi::CString::new(root.as_os_str().as_encoded_bytes())
                    .map_err(|_| format!("cannot confine the path {}", root.display()))?;
                Some((path, all.bits()))
            }
            None => None,
        },
        maps: IdMaps::new(),
    };
    // SAFETY: `Plan::apply` is async-signal-safe (see its module).
    unsafe {
        command.pre_exec(move || plan.apply());
    }
    supervisor.arm();
    Ok(supervisor)
}
