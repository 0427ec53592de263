//! A control group per test run, where the machine lets stepwise make one:
//! memory and the process count bounded for the whole run (every process of
//! it together), which per-process resource limits cannot do (four
//! processes under a 256 MiB address-space limit use a gigabyte between
//! them). cgroup v2 where stepwise's own group can hold children with the
//! `memory` and `pids` controllers (a delegated or namespaced root); else
//! cgroup v1's `memory` and `pids` hierarchies, under stepwise's own groups
//! there.
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

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)
}

impl RunGroup {
    /// A group bounding the whole run to `memory` bytes and `processes`
    /// processes, or `None` where this machine lets stepwise make none.
    pub fn create(memory: u64, processes: u64) -> Option<RunGroup> {
        Self::v2(memory, processes).or_else(|| Self::v1(memory, processes))
    }

    fn v2(memory: u64, processes: u64) -> Option<RunGroup> {
        let parent = Path::new(ROOT).join(own_path("")?);
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
    /// Kill what is left in the group, then remove it (the kernel refuses
    /// while a member is still dying, so a few tries).
    fn drop(&mut self) {
        for (dir, _) in self.dirs.iter().rev() {
            // v2: every process of the group and of groups it made, at once.
            let _ = write(&dir.join("cgroup.kill"), "1");
            for _ in 0..100 {
                let members = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
                for pid in members.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                    // SAFETY: a plain signal to a member of this run's group.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
