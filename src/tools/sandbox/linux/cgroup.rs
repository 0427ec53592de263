//! A control group per test run, where the machine lets stepwise make one:
//! memory and the process count bounded for the whole run (every process of
//! it together), which per-process resource limits cannot do (four
//! processes under a 256 MiB address-space limit use a gigabyte between
//! them). cgroup v2 where stepwise's own group can hold children with the
//! `memory` and `pids` controllers (a delegated or namespaced root); else
//! cgroup v1's `memory` and `pids` hierarchies, under stepwise's own groups
//! there.
//!
//! A stepwise that was itself killed (`kill -9`) leaves its runs' groups
//! behind: the first group a stepwise makes in a folder removes the empty
//! `stepwise-run-PID-*` groups there whose stepwise is gone. Groups a run
//! made inside its own are emptied and removed with it, deepest first.
//! The `pids` controller counts threads as well as processes; when it
//! refused a fork, the run's result names the process limit as measured.
//!
//! What must stay true: the run joins its group as the first thing its
//! process does, before it can fork (the child writes `0` to a
//! `cgroup.procs` opened here, so no process of the run starts outside);
//! the group is emptied (every member killed) and removed when the run
//! ends; where no group can be made the run goes on with the per-process
//! limits and says so (`Limits::whole_run`), never claiming more.

use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const ROOT: &str = "/sys/fs/cgroup";

/// One run's group (one folder in v2, one per hierarchy in v1).
pub struct RunGroup {
    /// The group's folders, each with the `cgroup.procs` the child joins.
    dirs: Vec<(PathBuf, File)>,
    /// Where the kernel counts OOM kills (`memory.events` or `memory.oom_control`).
    oom_file: PathBuf,
}

/// A name no other run of this or another stepwise uses.
fn fresh_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("stepwise-run-{}-{n}", std::process::id())
}

/// stepwise's own group in a hierarchy: the path after `ID:CONTROLLERS:` in
/// `/proc/self/cgroup` (`controller` empty: the v2 line `0::`).
fn own_path(controller: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        let matches = if controller.is_empty() {
            names.is_empty()
        } else {
            names.split(',').any(|n| n == controller)
        };
        // A path out of the hierarchy (`..`, as cgroup namespaces show
        // groups outside them) is no group stepwise can make children in.
        let path = path.trim_start_matches('/');
        (matches && !path.split('/').any(|part| part == "..")).then(|| path.to_string())
    })
}

/// Write a control file of a group (never creating one: a group's files
/// are the kernel's).
fn write(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(text.as_bytes())
}

impl RunGroup {
    /// A group bounding the whole run to `memory` bytes and `processes`
    /// processes, or `None` where this machine lets stepwise make none.
    pub fn create(memory: u64, processes: u64) -> Option<RunGroup> {
        Self::v2(memory, processes).or_else(|| Self::v1(memory, processes))
    }

    fn v2(memory: u64, processes: u64) -> Option<RunGroup> {
        let parent = Path::new(ROOT).join(own_path("")?);
        sweep_once(&parent);
        let controllers = std::fs::read_to_string(parent.join("cgroup.subtree_control")).ok()?;
        let enabled = |c: &str| controllers.split_whitespace().any(|n| n == c);
        if !(enabled("memory") && enabled("pids")) {
            return None;
        }
        let dir = parent.join(fresh_name());
        std::fs::create_dir(&dir).ok()?;
        let oom_file = dir.join("memory.events");
        let set = write(&dir.join("memory.max"), &memory.to_string())
            .and_then(|()| write(&dir.join("memory.swap.max"), "0").or(Ok(())))
            .and_then(|()| write(&dir.join("pids.max"), &processes.to_string()))
            .and_then(|()| procs(&dir));
        match set {
            Ok(file) => Some(RunGroup {
                dirs: vec![(dir, file)],
                oom_file,
            }),
            Err(_) => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    fn v1(memory: u64, processes: u64) -> Option<RunGroup> {
        let mem = Path::new(ROOT).join("memory").join(own_path("memory")?);
        let pids = Path::new(ROOT).join("pids").join(own_path("pids")?);
        sweep_once(&mem);
        sweep_once(&pids);
        let name = fresh_name();
        let mut group = RunGroup {
            dirs: Vec::new(),
            oom_file: mem.join(&name).join("memory.oom_control"),
        };
        for (parent, limits) in [
            (
                mem,
                vec![
                    ("memory.limit_in_bytes", memory.to_string()),
                    ("memory.memsw.limit_in_bytes", memory.to_string()),
                ],
            ),
            (pids, vec![("pids.max", processes.to_string())]),
        ] {
            let dir = parent.join(&name);
            std::fs::create_dir(&dir).ok()?;
            let file = procs(&dir);
            // Dropped with the group on any failure below: removed again.
            let Ok(file) = file else {
                let _ = std::fs::remove_dir(&dir);
                return None;
            };
            group.dirs.push((dir.clone(), file));
            for (i, (name, value)) in limits.iter().enumerate() {
                // Swap accounting may be off (no `memsw` file): the first one is enough.
                if write(&dir.join(name), value).is_err() && i == 0 {
                    return None;
                }
            }
        }
        Some(group)
    }

    /// The descriptors the run's process writes `0` to, to join the group.
    pub fn join_fds(&self) -> Vec<RawFd> {
        self.dirs.iter().map(|(_, f)| f.as_raw_fd()).collect()
    }

    /// Whether the `pids` controller refused a fork or a thread of the run.
    pub fn pids_refused(&self) -> bool {
        self.dirs.iter().any(|(dir, _)| {
            let text = std::fs::read_to_string(dir.join("pids.events")).unwrap_or_default();
            text.lines().any(|line| {
                let mut words = line.split_whitespace();
                words.next() == Some("max") && words.next().is_some_and(|n| n != "0")
            })
        })
    }

    /// Whether the kernel killed a process of the run for the group's memory.
    pub fn oom_killed(&self) -> bool {
        let text = std::fs::read_to_string(&self.oom_file).unwrap_or_default();
        text.lines().any(|line| {
            let mut words = line.split_whitespace();
            words.next() == Some("oom_kill") && words.next().is_some_and(|n| n != "0")
        })
    }
}

/// Whether this machine lets stepwise make a group for a run (one is made
/// and removed again, once per process, by the sandbox's probe).
pub fn offered() -> bool {
    RunGroup::create(1 << 40, 1 << 22).is_some()
}

/// The group's `cgroup.procs`, opened for writing (close-on-exec).
fn procs(dir: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .open(dir.join("cgroup.procs"))
}

impl Drop for RunGroup {
    fn drop(&mut self) {
        for (dir, _) in self.dirs.iter().rev() {
            remove_group(dir);
        }
    }
}

/// The groups below `dir`, deepest first, then `dir` itself.
fn groups_within(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                out.extend(groups_within(&entry.path()));
            }
        }
    }
    out.push(dir.to_path_buf());
    out
}

/// Kill what is left in the group `dir` and in the groups it holds, then
/// remove them, deepest first (the kernel refuses while a member is still
/// dying, so a few tries).
fn remove_group(dir: &Path) {
    // v2: every process of the group and of groups it made, at once.
    let _ = write(&dir.join("cgroup.kill"), "1");
    for group in groups_within(dir) {
        for _ in 0..100 {
            let members = std::fs::read_to_string(group.join("cgroup.procs")).unwrap_or_default();
            for pid in members.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                // SAFETY: a plain signal to a member of this run's group.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            if std::fs::remove_dir(&group).is_ok() || !group.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Sweep `parent` for groups of stepwise processes that are gone, once
/// per folder and process.
fn sweep_once(parent: &Path) {
    static SWEPT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
    if swept.iter().any(|p| p == parent) {
        return;
    }
    swept.push(parent.to_path_buf());
    drop(swept);
    for stale in stale_groups(parent) {
        remove_if_empty(&stale);
    }
}

/// Remove the group `dir` and the groups it holds, deepest first, killing
/// nothing: a group with a process left in it stays. (A stepwise in another
/// PID namespace sharing this folder would look gone from here; its live
/// runs are never touched. A run's processes die with its PID 1, so a
/// killed stepwise's groups are empty.)
fn remove_if_empty(dir: &Path) {
    for group in groups_within(dir) {
        let _ = std::fs::remove_dir(&group);
    }
}

/// The `stepwise-run-PID-N` groups in `parent` whose PID is no process.
fn stale_groups(parent: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("stepwise-run-")) else {
                return false;
            };
            let pid = rest.split('-').next().and_then(|p| p.parse::<i32>().ok());
            // SAFETY: signal 0 only asks whether the process exists.
            pid.is_some_and(|pid| {
                pid > 0
                    && unsafe { libc::kill(pid, 0) } != 0
                    && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
            })
        })
        .map(|e| e.path())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_of_a_stepwise_that_is_gone_are_stale_and_removed_deepest_first() {
        let parent = tempfile::tempdir().unwrap();
        let me = std::process::id();
        let gone = i32::MAX - 7;
        for name in [
            format!("stepwise-run-{gone}-0/made-by-the-run/deeper"),
            format!("stepwise-run-{me}-3"),
            "stepwise-run-1-0".to_string(),
            "other-group".to_string(),
        ] {
            std::fs::create_dir_all(parent.path().join(name)).unwrap();
        }
        let stale = stale_groups(parent.path());
        assert_eq!(
            stale,
            [parent.path().join(format!("stepwise-run-{gone}-0"))]
        );
        // Plain folders stand in for groups: removed, deepest first.
        remove_if_empty(&stale[0]);
        assert!(!stale[0].exists());
        assert!(parent.path().join(format!("stepwise-run-{me}-3")).exists());
    }

    #[test]
    fn a_group_is_removed_with_its_run() {
        // Where this machine lets stepwise make no group, there is nothing to check.
        let Some(group) = RunGroup::create(64 * 1024 * 1024, 16) else {
            return;
        };
        let dirs: Vec<PathBuf> = group.dirs.iter().map(|(d, _)| d.clone()).collect();
        assert!(!dirs.is_empty() && dirs.iter().all(|d| d.is_dir()));
        assert!(!group.oom_killed());
        drop(group);
        assert!(dirs.iter().all(|d| !d.exists()), "{dirs:?}");
    }
}
