//! Every process a run starts, found and killed. Where the run has its own
//! PID namespace, the kernel already kills everything in it when the run's
//! PID 1 ends (see `child`); this is the second wall, and the only one
//! without that namespace. Stepwise is a child
//! subreaper, so a grandchild that calls `setsid()` or double-forks is
//! re-parented to stepwise instead of escaping; the run's processes are the
//! test process, the processes re-parented to stepwise since it started,
//! and all their descendants (read from `/proc`).
//!
//! Stepwise is a subreaper only while a run is going (counted, for runs
//! that overlap): between runs, an orphan of anything else stepwise started
//! (a `git` helper's daemon, an editor's child) goes to init, which reaps
//! it, instead of staying a zombie of stepwise's. Left open: such an
//! orphan made *during* a run stays stepwise's child afterwards (it cannot be
//! told from a process stepwise started itself, which tokio or std must be
//! left to wait for), so it is reaped only when stepwise exits. The final kill loop sleeps
//! between rounds, so it runs on tokio's blocking pool.
//!
//! What must stay true: only the test process, its descendants, and
//! processes re-parented to stepwise that started at or after it (and, when
//! the run has its own network namespace, live in that namespace, so that a
//! concurrent run or stepwise's own `git` is never touched) are killed; killing
//! repeats until none is left (a fork bomb keeps forking while it dies), and
//! the zombies re-parented to stepwise are reaped.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// Rounds of kill-and-look before giving up on a process that will not die.
const KILL_ROUNDS: usize = 200;

/// How many runs are going (stepwise is a subreaper while this is not 0).
static RUNS: Mutex<usize> = Mutex::new(0);

fn set_subreaper(on: bool) {
    // SAFETY: a plain prctl; failure leaves orphans to init, as before.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, libc::c_ulong::from(on));
    }
}

/// One more run: stepwise becomes the reaper of orphans from test runs.
fn arm_subreaper() {
    let mut runs = RUNS.lock().unwrap_or_else(|e| e.into_inner());
    if *runs == 0 {
        set_subreaper(true);
    }
    *runs += 1;
}

/// One run less: the last one hands orphans back to init.
fn disarm_subreaper() {
    let mut runs = RUNS.lock().unwrap_or_else(|e| e.into_inner());
    *runs = runs.saturating_sub(1);
    if *runs == 0 {
        set_subreaper(false);
    }
}

/// Whether stepwise is a subreaper now.
#[cfg(test)]
fn is_subreaper() -> bool {
    let mut on: libc::c_int = 0;
    // SAFETY: PR_GET_CHILD_SUBREAPER writes one int.
    unsafe { libc::prctl(libc::PR_GET_CHILD_SUBREAPER, &mut on as *mut libc::c_int) };
    on != 0
}

struct Proc {
    pid: i32,
    ppid: i32,
    zombie: bool,
    start: u64,
}

fn read_proc(pid: i32) -> Option<Proc> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Proc {
        pid,
        zombie: matches!(fields.first(), Some(&"Z") | Some(&"X")),
        ppid: fields.get(1)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

fn all_processes() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(read_proc)
        .collect()
}

/// Watches and ends the processes of one run.
#[derive(Default)]
pub struct Supervisor {
    run: Run,
    /// The empty, unreadable file that covers the root's `.env` files.
    veil: Option<tempfile::TempPath>,
    /// The run's private `/dev/shm`, removed with it.
    shm: Option<tempfile::TempDir>,
    /// The run's control group, emptied and removed with it.
    group: Option<super::cgroup::RunGroup>,
    /// Every `__pycache__` of the workspace is covered for the run.
    covers_pycache: bool,
    /// The run has a private `/tmp`.
    private_tmp: bool,
    /// Stepwise's end of the socket the run's disk comes by (see
    /// `overlay`), until it came.
    disk_socket: Option<std::os::fd::OwnedFd>,
    /// The run's disk: the root of the tmpfs that holds its layer and
    /// temporary folders, kept open (and so alive) until this is dropped.
    disk: Option<std::os::fd::OwnedFd>,
    armed: bool,
}

/// Which processes belong to the run.
#[derive(Default, Clone)]
struct Run {
    child: Option<i32>,
    since: u64,
    /// The run's own network namespace, when it has one.
    netns: Option<std::path::PathBuf>,
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        if std::mem::take(&mut self.armed) {
            disarm_subreaper();
        }
    }
}

/// Whether `fd` is on a tmpfs.
fn is_tmpfs(fd: &std::os::fd::OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    // SAFETY: fstatfs into a zeroed struct on a live descriptor.
    unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        #[allow(clippy::unnecessary_cast)]
        let tmpfs = libc::fstatfs(fd.as_raw_fd(), &mut st) == 0 && st.f_type as i64 == TMPFS_MAGIC;
        tmpfs
    }
}

fn netns_of(pid: &str) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/ns/net")).ok()
}

impl Supervisor {
    /// Become the subreaper for this run (until this is dropped).
    pub fn arm(&mut self) {
        if !std::mem::replace(&mut self.armed, true) {
            arm_subreaper();
        }
    }

    /// An empty file no one may read, kept until the run ends.
    pub fn veil(&mut self) -> Result<std::path::PathBuf, String> {
        use std::os::unix::fs::PermissionsExt;
        let fail = |e: std::io::Error| format!("could not create the sandbox's cover file: {e}");
        let file = tempfile::Builder::new()
            .prefix("stepwise-veil-")
            .tempfile()
            .map_err(fail)?;
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o000))
            .map_err(fail)?;
        let path = file.into_temp_path();
        let out = path.to_path_buf();
        self.veil = Some(path);
        Ok(out)
    }

    /// The run's own folder in the host's `/dev/shm` (`None`: there is none).
    pub fn shm(&mut self) -> Result<Option<std::path::PathBuf>, String> {
        let host = std::path::Path::new("/dev/shm");
        if !host.is_dir() {
            return Ok(None);
        }
        let dir = tempfile::Builder::new()
            .prefix("stepwise-run-")
            .tempdir_in(host)
            .map_err(|e| format!("could not create the run's /dev/shm: {e}"))?;
        let path = dir.path().to_path_buf();
        self.shm = Some(dir);
        Ok(Some(path))
    }

    /// A control group bounding the whole run, where one can be made: the
    /// descriptors the run's process joins it through (none: no group).
    pub fn run_group(&mut self, memory: u64, processes: u64) -> Vec<std::os::fd::RawFd> {
        // One over the limit: stepwise's own count (`watch`) sees the run
        // pass it, ends the run and names the limit; the group's bound
        // keeps a fork bomb from getting further meanwhile.
        self.group = super::cgroup::RunGroup::create(memory, processes.saturating_add(1));
        self.group
            .as_ref()
            .map(|g| g.join_fds())
            .unwrap_or_default()
    }

    /// The run gets a private `/tmp` (then its `TMPDIR`).
    pub fn set_private_tmp(&mut self, on: bool) {
        self.private_tmp = on;
    }

    pub fn private_tmp(&self) -> bool {
        self.private_tmp
    }

    /// Every `__pycache__` of the workspace is covered for the run.
    pub fn set_covers_pycache(&mut self, on: bool) {
        self.covers_pycache = on;
    }

    pub fn covers_pycache(&self) -> bool {
        self.covers_pycache
    }

    /// Whether memory and processes are bounded for the whole run.
    pub fn whole_run(&self) -> bool {
        self.group.is_some()
    }

    /// Whether the run's group refused a fork or a thread (its process limit).
    pub fn pids_refused(&self) -> bool {
        self.group.as_ref().is_some_and(|g| g.pids_refused())
    }

    /// Whether the kernel killed a process of the run for the run's memory.
    pub fn out_of_memory(&self) -> bool {
        self.group.as_ref().is_some_and(|g| g.oom_killed())
    }

    /// The run's disk comes by `socket` once it has started.
    pub fn set_disk_socket(&mut self, socket: std::os::fd::OwnedFd) {
        self.disk_socket = Some(socket);
    }

    /// The root of the run's disk (`None`: it has none, or it never came).
    pub fn disk(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.disk.as_ref().map(|fd| fd.as_fd())
    }

    /// Whether the run was to have a disk of its own (see `disk`).
    pub fn has_disk(&self) -> bool {
        self.disk_socket.is_some() || self.disk.is_some()
    }

    pub fn started(&mut self, pid: Option<u32>) {
        // The child sent the disk before the run's own code ran, and before
        // the spawn returned; a descriptor of anything but a tmpfs is not it.
        if let Some(socket) = &self.disk_socket {
            self.disk = super::overlay::receive_fd(socket).filter(is_tmpfs);
        }
        let run = &mut self.run;
        run.child = pid.and_then(|p| i32::try_from(p).ok());
        run.since = run.child.and_then(read_proc).map_or(0, |p| p.start);
        let own = run.child.and_then(|c| netns_of(&c.to_string()));
        run.netns = own.filter(|ns| Some(ns) != netns_of("self").as_ref());
    }

    /// Whether more of the run's processes are alive than `limit`.
    pub fn over_processes(&self, limit: u64) -> bool {
        let live = self.run.members().iter().filter(|p| !p.zombie).count();
        live as u64 > limit
    }

    /// Kill and reap the run's processes on the blocking pool (the loop
    /// sleeps between rounds while a fork bomb dies).
    pub async fn kill_all(&mut self) {
        let run = self.run.clone();
        let work = tokio::task::spawn_blocking(move || run.kill_all());
        if work.await.is_err() {
            // The pool is gone (the runtime is shutting down): kill here.
            self.run.kill_all();
        }
    }
}

impl Run {
    /// A process re-parented to stepwise that belongs to this run.
    fn adopted(&self, p: &Proc, me: i32) -> bool {
        p.ppid == me
            && p.start >= self.since
            && self
                .netns
                .as_ref()
                .is_none_or(|ns| netns_of(&p.pid.to_string()).as_ref() == Some(ns))
    }

    /// The run's processes (zombies included).
    fn members(&self) -> Vec<Proc> {
        let Some(child) = self.child else {
            return Vec::new();
        };
        let me = std::process::id() as i32;
        let all = all_processes();
        let mut children: HashMap<i32, Vec<usize>> = HashMap::new();
        for (i, p) in all.iter().enumerate() {
            children.entry(p.ppid).or_default().push(i);
        }
        let mut queue: Vec<usize> = all
            .iter()
            .enumerate()
            .filter(|(_, p)| p.pid == child || self.adopted(p, me))
            .map(|(i, _)| i)
            .collect();
        let mut seen = vec![false; all.len()];
        let mut out = Vec::new();
        while let Some(i) = queue.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            queue.extend(children.get(&all[i].pid).into_iter().flatten());
            out.push(i);
        }
        let mut all: Vec<Option<Proc>> = all.into_iter().map(Some).collect();
        out.into_iter().filter_map(|i| all[i].take()).collect()
    }

    fn kill_all(&self) {
        let me = std::process::id() as i32;
        let mut killed = std::collections::HashSet::new();
        for _ in 0..KILL_ROUNDS {
            let live: Vec<i32> = self
                .members()
                .iter()
                .filter(|p| !p.zombie)
                .map(|p| p.pid)
                .collect();
            for &pid in &live {
                // SAFETY: a plain signal to a process of this run.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                killed.insert(pid);
            }
            // Reap what this loop killed and stepwise inherited; a zombie's
            // namespace can no longer be read, so only these are known to be ours.
            let mut waiting = false;
            for p in all_processes() {
                if p.zombie && p.ppid == me && killed.contains(&p.pid) && Some(p.pid) != self.child
                {
                    // SAFETY: waits for one known pid without blocking.
                    unsafe { libc::waitpid(p.pid, std::ptr::null_mut(), libc::WNOHANG) };
                    waiting = true;
                }
            }
            if live.is_empty() && !waiting {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stepwise_is_a_subreaper_only_while_a_run_is_going() {
        // The only test in this binary that arms a supervisor.
        assert!(!is_subreaper());
        let mut first = Supervisor::default();
        first.arm();
        let mut second = Supervisor::default();
        second.arm();
        assert!(is_subreaper());
        drop(first);
        assert!(is_subreaper(), "a run is still going");
        drop(second);
        assert!(!is_subreaper(), "orphans go to init between runs");
    }
}
