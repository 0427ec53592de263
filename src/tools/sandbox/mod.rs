//! Test runs in a sandbox. Owns everything between "the user approved
//! `run_tests`" and the process starting: the minimal environment, a private
//! temporary folder (inside one folder per user that every run is hidden
//! from), a session of its own without a terminal, and on Linux a Landlock
//! ruleset (write only the workspace, the temporary folder and the build
//! outputs; read in `HOME` only what its allow-list names, see `paths`, and
//! elsewhere everything but the hidden paths and the terminal devices;
//! no TCP or signals outside the run), a network namespace with only
//! loopback, PID, IPC and UTS namespaces with the run's own `/proc`, a mount
//! namespace (a read-only view of everything but the writable folders;
//! every `.git` and hard-linked files read-only, each folder of installed
//! packages a throwaway layer, every file the deny list names and every
//! `.stepwise` unreadable at any depth, `HOME`'s hidden entries covered,
//! private `/tmp` and `/dev/shm`; the run's layer and those on one tmpfs
//! of the disk budget where the kernel allows, see `linux::overlay`), a
//! seccomp filter (no socket families but IPv4/IPv6, no `TIOCSTI`, no
//! keyrings, no `fallocate` past the disk budget), resource limits, and a
//! subreaper that kills every descendant when the run ends. As root without a user
//! namespace, the run drops every capability before Landlock.
//! [`State`] (in `state`) says which of these a run gets; `plants` finds
//! what a run may have planted for code outside to run.
//!
//! What must stay true: everything the child does after `fork` is prepared
//! before it (rulesets opened, paths and strings built), so the `pre_exec`
//! hook only makes system calls; whatever the sandbox promised and could not
//! set up makes the run fail to start rather than run unconfined; the state
//! word ([`State::label`]) says only what is in force; `require` refuses a
//! run that would not be fully isolated; other systems compile and say "not
//! sandboxed".

#[cfg(unix)]
mod disk;
pub mod env;
pub mod layers;
pub mod limits;
mod paths;
mod run_folder;
use run_folder::runs_folder;
pub mod plants;
#[cfg(unix)]
pub mod run_search;
mod state;
#[cfg(unix)]
mod workspaces;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as platform;
#[cfg(not(target_os = "linux"))]
mod other;
#[cfg(not(target_os = "linux"))]
use other as platform;

pub use crate::config::sandbox::{SandboxMode, SandboxSettings};
pub use layers::layered;
pub use limits::{Evidence, Limit, Limits};
pub use state::{Network, Offered, State};
use std::path::{Path, PathBuf};
use tokio::process::Command;

/// How often a run's disk use is read (its processes are counted every
/// other time: that reads all of `/proc`).
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// How test runs are confined, from the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub mode: SandboxMode,
    /// The tests may use the network.
    pub network: bool,
    /// Folders writable besides the workspace and the temporary folder.
    pub writable: Vec<PathBuf>,
    /// Build output folders to create before a run when they are missing.
    pub create_first: Vec<PathBuf>,
    /// Caches of downloaded code, read-only to runs, and what fills each.
    pub code_caches: Vec<(PathBuf, &'static str)>,
    /// Paths the tests may not read.
    pub hidden: Vec<PathBuf>,
    pub limits: Limits,
    /// Extra environment variable names passed to the tests.
    pub test_env: Vec<String>,
    /// Configured build output folders of the workspace (see `layers`).
    pub build_outputs: Vec<String>,
    /// A staged task's stage (its overlay-format upper folder): the run
    /// sees it above the workspace, as the tools do.
    pub stage: Option<PathBuf>,
    /// The workspace's deny list (the fixed names and `deny_paths`): the
    /// files it names are covered for a run at any depth, as the file
    /// tools refuse them.
    pub deny: crate::tools::workspace::deny::DenyList,
    /// Set for each run by [`prepare`], covered in the run's mount
    /// namespace: the entries of `HOME` outside its allow-list (see
    /// `paths`; a tool sees them missing rather than refused), then the
    /// other workspaces' `.stepwise` folders (see `workspaces`).
    pub covered: Vec<PathBuf>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy::new(&SandboxSettings::default(), &[])
    }
}

impl Policy {
    pub fn new(settings: &SandboxSettings, test_env: &[String]) -> Self {
        Policy {
            mode: settings.mode,
            network: settings.network,
            writable: paths::writable(&settings.writable),
            create_first: paths::outputs_to_create(),
            code_caches: paths::code_caches(),
            hidden: paths::hidden(settings.hidden.as_deref()),
            limits: Limits::from_settings(settings),
            test_env: test_env.to_vec(),
            build_outputs: settings.build_outputs.clone(),
            stage: None,
            deny: crate::tools::workspace::deny::DenyList::default(),
            covered: Vec::new(),
        }
    }
}

/// The state a run would get now under `policy` (probed once, then cached).
pub fn state(policy: &Policy) -> State {
    if policy.mode == SandboxMode::Off {
        return State::off();
    }
    platform::state(policy)
}

/// Why `require` refuses to run tests on this system (`None`: it does not).
pub fn refusal(policy: &Policy, state: &State) -> Option<String> {
    (policy.mode == SandboxMode::Require && !state.complete()).then(|| {
        format!(
            "[sandbox] mode = \"require\" and this system lacks {}; tests cannot run fully isolated (set mode = \"auto\" to run them with what is available)",
            state.missing().join(", ")
        )
    })
}

/// Refuse to start a session whose tests could not run as `require` demands.
pub fn check_required(policy: &Policy) -> Result<(), String> {
    match refusal(policy, &state(policy)) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// Make stepwise's own memory and environment unreadable to other processes
/// of the same user (`/proc/<pid>/environ`, ptrace). Call first in `main`.
pub fn protect_self() {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain prctl on the calling process.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0);
    }
}

/// A prepared run: its temporary folder (removed when this is dropped) and
/// the process supervision. Keep it alive until the run has ended.
pub struct Confined {
    pub state: State,
    limits: Limits,
    code_caches: Vec<(PathBuf, &'static str)>,
    supervisor: platform::Supervisor,
    /// Where the run's writes went (`None`: straight into the workspace).
    layer: Option<layers::LayerPlan>,
    /// The run's temporary folder (taken when this is dropped).
    temp: Option<tempfile::TempDir>,
    /// The folder holding every run's temporary folder.
    runs: PathBuf,
    /// What the run's file systems had free when it started.
    #[cfg(unix)]
    disk: Option<disk::Watch>,
}

/// Set up `command` (already given its program, arguments and folder) to run
/// under `policy` in `root`: environment, temporary folder, confinement.
/// `Err`: the run must not start (a message for the model and the user).
pub fn prepare(command: &mut Command, root: &Path, policy: &Policy) -> Result<Confined, String> {
    let state = state(policy);
    if let Some(why) = refusal(policy, &state) {
        return Err(format!("the tests were not run: {why}"));
    }
    if !state.off {
        // The run could not create them itself (their parent is read-only).
        for dir in &policy.create_first {
            std::fs::create_dir_all(dir).map_err(|e| {
                format!(
                    "the tests were not run: could not create the build output folder {}: {e}",
                    dir.display()
                )
            })?;
        }
    }
    // Twice: another stepwise may remove the (empty) runs folder between
    // making it and making the run's folder in it.
    let made = || {
        let runs = runs_folder()?;
        let temp = tempfile::Builder::new().prefix("run-").tempdir_in(&runs)?;
        Ok::<_, std::io::Error>((runs, temp))
    };
    let (runs, temp) = made()
        .or_else(|_| made())
        .map_err(|e| format!("could not create the test run's temporary folder: {e}"))?;
    // Other runs' temporary folders (this user's, now and later) are hidden.
    let mut policy = policy.clone();
    policy.hidden.push(runs.clone());
    // With a layer, what the run writes (but its build outputs) is held in
    // memory until stepwise reads it.
    if state.layer
        && let Some(memory) = limits::machine_memory()
    {
        policy.limits.within_memory(memory);
    }
    let layer = layers::layer_plan(root, temp.path(), &state, &mut policy);
    // This workspace gets no layer where the kernel offers one (a path too
    // long for the overlay's options): the state says so, and `require`
    // refuses the run.
    let mut state = state;
    if state.layer && layer.is_none() {
        state.layer = false;
        state.disk_held = false;
        if let Some(why) = refusal(&policy, &state) {
            return Err(format!("the tests were not run: {why}"));
        }
    }
    if !state.off {
        hide_home(root, temp.path(), &mut policy);
    }
    let policy = &policy;
    command.env_clear().envs(env::build(
        std::env::vars_os(),
        &policy.test_env,
        temp.path(),
    ));
    if let Some(build) = layer.as_ref().and_then(|l| l.build.as_ref()) {
        // Build outputs go to the workspace's build layer, whatever the
        // user's environment names (a target folder shared with other
        // projects, the user's own Go cache).
        if build.outputs.iter().any(|o| o == Path::new("target")) {
            command.env("CARGO_TARGET_DIR", root.join("target"));
        } else {
            command.env("CARGO_TARGET_DIR", build.dir.join("cargo-target"));
        }
        command.env("GOCACHE", build.dir.join("go-build"));
    }
    detach_from_terminal(command);
    let supervisor = if state.off {
        platform::Supervisor::default()
    } else {
        platform::install(command, root, temp.path(), policy, &state, layer.as_ref())?
    };
    // The run's `/tmp` is its own (inside the disk budget); where the
    // workspace is in `/tmp`, its temporary folder is covered by its
    // disk's folder for it (see `linux::overlay`).
    if supervisor.private_tmp() {
        for var in ["TMPDIR", "TMP", "TEMP"] {
            command.env(var, "/tmp");
        }
    }
    let mut limits = policy.limits;
    limits.whole_run = supervisor.whole_run();
    // Read last, so that the run's own folders are made already.
    #[cfg(unix)]
    let disk = (!state.off).then(|| {
        let shm = Path::new("/dev/shm");
        let folders = [root, temp.path(), shm].into_iter();
        disk::Watch::new(
            folders.chain(policy.writable.iter().map(PathBuf::as_path)),
            limits.disk_bytes,
        )
    });
    Ok(Confined {
        #[cfg(unix)]
        disk,
        code_caches: if state.off {
            Vec::new()
        } else {
            policy.code_caches.clone()
        },
        state,
        limits,
        layer,
        temp: Some(temp),
        runs,
        supervisor,
    })
}

/// Make the home folders allow-lists for the run (see `paths`): what
/// toolchains need and the run's own folders stay; every other entry is
/// hidden (Landlock), and those of `HOME` are covered by mounts too.
fn hide_home(root: &Path, temp: &Path, policy: &mut Policy) {
    let (home, others) = paths::homes();
    let mut given: Vec<PathBuf> = [root, temp]
        .into_iter()
        .chain(policy.writable.iter().map(PathBuf::as_path))
        .chain(policy.code_caches.iter().map(|(p, _)| p.as_path()))
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    given.sort();
    given.dedup();
    // Spelt as the listing spells them (below the canonical `HOME`),
    // without resolving each: most do not exist.
    let written = std::env::var_os("HOME").map(PathBuf::from);
    let whole: Vec<PathBuf> = policy
        .hidden
        .iter()
        .map(|p| match (&written, &home) {
            (Some(w), Some(h)) if w != h => p
                .strip_prefix(w)
                .map_or_else(|_| p.clone(), |rest| h.join(rest)),
            _ => p.clone(),
        })
        .collect();
    let hide = |home: &Path| {
        let mut allowed = paths::home_allowed(home);
        allowed.extend(given.iter().cloned());
        paths::home_hidden(home, &allowed, &whole)
    };
    if let Some(home) = home {
        let hidden = hide(&home);
        policy.covered.extend(hidden.iter().cloned());
        policy.hidden.extend(hidden);
    }
    for other in others {
        policy.hidden.extend(hide(&other));
    }
    #[cfg(unix)]
    if let Ok(root) = std::fs::canonicalize(root) {
        policy.covered.extend(workspaces::others(&root));
    }
}

/// Start the run in a session of its own, with no controlling terminal
/// (so `/dev/tty` leads nowhere and `TIOCSTI` has no terminal to type into,
/// CVE-2017-5226), and with every descriptor beyond the standard three
/// closed at `exec` (a terminal stepwise holds, a descriptor it inherited):
/// the run gets `/dev/null` as input and the two output pipes, nothing else.
/// In every mode, `off` included. The session leader's process group is its
/// own, so the group kill at the end of the run still reaches it.
fn detach_from_terminal(command: &mut Command) {
    #[cfg(target_os = "linux")]
    // SAFETY: setsid, close_range and fcntl are async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
            if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) == 0 {
                return Ok(());
            }
            for fd in 3..4096 {
                let flags = libc::fcntl(fd, libc::F_GETFD);
                if flags >= 0 {
                    libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
                }
            }
            Ok(())
        });
    }
    // Elsewhere: at least a process group of its own, for the group kill.
    #[cfg(all(unix, not(target_os = "linux")))]
    command.process_group(0);
    #[cfg(not(unix))]
    let _ = command;
}

impl Confined {
    /// The run's private temporary folder (removed with this).
    pub fn temp(&self) -> &Path {
        self.temp.as_ref().map_or(self.runs.as_path(), |t| t.path())
    }

    /// The run's `TMPDIR`: the folder for what it writes for itself
    /// (inside its disk budget where it has a disk of its own).
    pub fn run_tmp(&self) -> &Path {
        match self.supervisor.private_tmp() {
            true => Path::new("/tmp"),
            false => self.temp(),
        }
    }

    /// Where the run's writes went (`None`: straight into the workspace).
    pub fn layer(&self) -> Option<&layers::LayerPlan> {
        self.layer.as_ref()
    }

    /// The overlay's upper folder, as stepwise reads it after the run: on
    /// the run's own disk (which only the descriptor stepwise holds still
    /// reaches), else in the run's temporary folder. An error where the
    /// run was to have its own disk and it never came.
    pub fn layer_upper(&self) -> Option<Result<PathBuf, String>> {
        let plan = self.layer.as_ref()?;
        #[cfg(target_os = "linux")]
        if self.supervisor.has_disk() {
            use std::os::fd::AsRawFd;
            return Some(match self.supervisor.disk() {
                Some(fd) => Ok(PathBuf::from(format!(
                    "/proc/self/fd/{}/upper",
                    fd.as_raw_fd()
                ))),
                None => Err("the run's layer never reached stepwise".into()),
            });
        }
        Some(Ok(plan.upper()))
    }

    /// Whether the run filled its own disk (see `disk`): measured, after it.
    pub fn disk_full(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let Some(fd) = self.supervisor.disk() {
            return disk::Own::read(fd).is_some_and(|o| o.full());
        }
        false
    }

    /// Call once the process has started.
    pub fn started(&mut self, pid: Option<u32>) {
        self.supervisor.started(pid);
    }

    /// Resolves when the run passes a limit stepwise watches: its disk use
    /// (see `disk`) or its process count (never, where stepwise can count
    /// neither).
    pub async fn over_limit(&self) -> Limit {
        const PROCESSES_EVERY: u32 = 2;
        let mut round = 0u32;
        loop {
            tokio::time::sleep(WATCH_EVERY).await;
            #[cfg(unix)]
            match self
                .disk
                .as_ref()
                .and_then(|w| w.over(self.supervisor.disk()))
            {
                Some(disk::Over::Budget) => return Limit::Disk,
                Some(disk::Over::Floor) => return Limit::DiskFloor,
                None => {}
            }
            round = round.wrapping_add(1);
            if round.is_multiple_of(PROCESSES_EVERY)
                && self.supervisor.over_processes(self.limits.processes)
            {
                return Limit::Processes;
            }
        }
    }

    /// Kill every process the run started, wherever it went (`setsid`, a
    /// double fork), and reap them.
    pub async fn kill_all(&mut self) {
        self.supervisor.kill_all().await;
    }

    /// What to tell the user about a failed run that tried to fill a code
    /// cache: which cache, and the command to fill it outside stepwise.
    pub fn cache_note(&self, output: &str) -> Option<String> {
        let fill = self
            .code_caches
            .iter()
            .find(|(path, _)| output.contains(&*path.to_string_lossy()))
            .map(|(path, fill)| (path.display().to_string(), *fill))
            .or_else(|| {
                const WORDS: &[(&str, &str)] = &[
                    ("failed to download", "cargo fetch"),
                    ("but --offline was specified", "cargo fetch"),
                    ("failed to get `", "cargo fetch"),
                    ("ENOTCACHED", "npm ci"),
                    ("go: downloading", "go mod download"),
                ];
                WORDS
                    .iter()
                    .find(|(word, _)| output.contains(word))
                    .map(|(_, fill)| ("a tool cache".to_string(), *fill))
            })?;
        Some(format!(
            "the run could not fill {}: caches of downloaded code are read-only in test runs (later builds outside the sandbox run what is in them) and the network is off; run `{}` outside stepwise, then run the tests again",
            fill.0, fill.1
        ))
    }

    /// Whether the kernel killed a process of the run for the whole run's
    /// memory (its control group's limit).
    pub fn out_of_memory(&self) -> bool {
        self.supervisor.out_of_memory()
    }

    /// Whether every `__pycache__` of the workspace is covered for the run
    /// (else Python must be pointed away from them, see `mounts`).
    pub fn covers_pycache(&self) -> bool {
        self.supervisor.covers_pycache()
    }

    /// Whether the run's control group refused a fork or a thread.
    pub fn pids_refused(&self) -> bool {
        self.supervisor.pids_refused()
    }

    /// The description of a limit, e.g. `memory limit (1024 MiB …)`.
    pub fn describe(&self, limit: Limit) -> String {
        limit.describe(&self.limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partial() -> State {
        let offered = Offered {
            landlock_abi: 3,
            namespaces: false,
            user_ns: false,
            pid_ns: false,
            read_only_view: false,
            root: false,
            seccomp: true,
            limits: true,
            run_groups: false,
            layer: false,
            disk_held: false,
        };
        State::of(&offered, false)
    }

    #[test]
    fn the_state_word_says_only_what_is_in_force() {
        assert_eq!(partial().label(), "sandbox: no network isolation");
        let full = State {
            network: Network::Namespace,
            workspace: true,
            processes: true,
            metadata: true,
            layer: true,
            ..partial()
        };
        assert_eq!(full.label(), "sandboxed");
        assert!(full.complete());
        let bare = State {
            landlock_abi: 0,
            files: false,
            ..full.clone()
        };
        assert_eq!(bare.label(), "not sandboxed");
        let off = state(&Policy {
            mode: SandboxMode::Off,
            ..Policy::default()
        });
        assert_eq!(off.label(), "not sandboxed");
    }

    #[test]
    fn require_refuses_what_auto_accepts() {
        let require = Policy {
            mode: SandboxMode::Require,
            ..Policy::default()
        };
        let why = refusal(&require, &partial()).unwrap();
        assert!(why.contains("network isolation"), "{why}");
        assert_eq!(refusal(&Policy::default(), &partial()), None);
    }
}
