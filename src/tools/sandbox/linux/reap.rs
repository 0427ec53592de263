//! Every process a run starts, found and killed: stepwise is a child
//! subreaper, so a grandchild that calls `setsid()` or double-forks is
//! re-parented to stepwise instead of escaping; the run's processes are the
//! test process, the processes re-parented to stepwise since it started,
//! and all their descendants (read from `/proc`).
//!
//! What must stay true: only the test process, its descendants, and
//! processes re-parented to stepwise that started at or after it (and, when
//! the run has its own network namespace, live in that namespace, so that a
//! concurrent run or stepwise's own `git` is never touched) are killed; killing
//! repeats until none is left (a fork bomb keeps forking while it dies), and
//! the zombies re-parented to stepwise are reaped.

use std::collections::HashMap;
use std::sync::Once;
use std::time::Duration;

/// How often the process count is checked while tests run.
const WATCH_EVERY: Duration = Duration::from_millis(100);
/// Rounds of kill-and-look before giving up on a process that will not die.
const KILL_ROUNDS: usize = 200;

static SUBREAPER: Once = Once::new();

/// Make stepwise the reaper of orphans from its test runs (once per process).
pub fn become_subreaper() {
    SUBREAPER.call_once(|| {
        // SAFETY: a plain prctl; failure leaves orphans to init, as before.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
        }
    });
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
    child: Option<i32>,
    since: u64,
    /// The run's own network namespace, when it has one.
    netns: Option<std::path::PathBuf>,
}

fn netns_of(pid: &str) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/ns/net")).ok()
}

impl Supervisor {
    pub fn started(&mut self, pid: Option<u32>) {
        self.child = pid.and_then(|p| i32::try_from(p).ok());
        self.since = self.child.and_then(read_proc).map_or(0, |p| p.start);
        let own = self.child.and_then(|c| netns_of(&c.to_string()));
        self.netns = own.filter(|ns| Some(ns) != netns_of("self").as_ref());
    }

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

    pub async fn watch(&self, limit: u64) {
        loop {
            tokio::time::sleep(WATCH_EVERY).await;
            let live = self.members().iter().filter(|p| !p.zombie).count();
            if live as u64 > limit {
                return;
            }
        }
    }

    pub fn kill_all(&mut self) {
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
