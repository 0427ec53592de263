//! The UI's worker: one thread, started on first use, that runs in order
//! the work drawing needs but no frame should wait for (syntax colours of
//! diff hunks and code blocks, freeing a large replaced diff). Results go
//! back through the channel each job brings; the UI takes them with
//! `try_recv` at its next layout, so nothing here blocks the UI thread.
//!
//! Why one thread and not one per job: starting a thread costs the UI
//! thread tens of microseconds each, and a burst of them (a hunk review
//! showing five hunks) competes with the UI thread for the cores. Why a
//! lower priority (Linux: nice [`NICE`], for this thread only): on a busy
//! machine the UI thread is scheduled first, so the worker's work never
//! lengthens a frame; the worker takes what time is left.
//!
//! What must stay true: a job never runs on the UI thread unless [`queue`]
//! said no thread could be started (the caller then decides); a job that
//! panics loses only its own result (its channel reports a disconnect):
//! the jobs after it still run.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender};

/// One piece of work.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// How much lower than the UI thread's the worker's priority is.
pub const NICE: i32 = 10;

/// The queue of the running worker (`None` until the first job, or after
/// its thread ended).
static QUEUE: Mutex<Option<Sender<Job>>> = Mutex::new(None);

/// Run `job` on the worker, after the jobs queued before it; `Err(job)`
/// when no worker thread can be started.
pub fn queue(job: Job) -> Result<(), Job> {
    let mut queue = QUEUE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let job = match queue.as_ref() {
        Some(tx) => match tx.send(job) {
            Ok(()) => return Ok(()),
            // The thread is gone (it cannot be, short of an abort): start another.
            Err(returned) => returned.0,
        },
        None => job,
    };
    let (tx, rx) = std::sync::mpsc::channel::<Job>();
    let started = std::thread::Builder::new()
        .name("ui-worker".into())
        .spawn(move || work(rx));
    if started.is_err() {
        *queue = None;
        return Err(job);
    }
    match tx.send(job) {
        Ok(()) => {
            *queue = Some(tx);
            Ok(())
        }
        Err(returned) => Err(returned.0),
    }
}

/// Compute `f` on the worker; its result arrives on the receiver (`None`:
/// no worker thread, compute it elsewhere).
pub fn compute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<Receiver<T>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let job: Job = Box::new(move || {
        let _ = tx.send(f());
    });
    queue(job).ok().map(|()| rx)
}

fn work(jobs: Receiver<Job>) {
    lower_priority();
    while let Ok(job) = jobs.recv() {
        // The panic hook has already reported it; the next job runs.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
    }
}

/// Lower this thread's priority by [`NICE`] (Linux only; elsewhere, and if
/// refused, the worker runs at the UI thread's priority).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread, no memory passed.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let now = libc::getpriority(libc::PRIO_PROCESS, tid);
        libc::setpriority(libc::PRIO_PROCESS, tid, (now + NICE).min(19));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const WAIT: Duration = Duration::from_secs(10);

    #[test]
    fn jobs_run_in_order_off_the_calling_thread() {
        let caller = std::thread::current().id();
        let receivers: Vec<_> = (0..20)
            .map(|i| compute(move || (i, std::thread::current().id())).expect("a worker"))
            .collect();
        let mut ran = Vec::new();
        for rx in receivers {
            let (i, on) = rx.recv_timeout(WAIT).expect("a result");
            assert_ne!(on, caller);
            ran.push(i);
        }
        assert_eq!(ran, (0..20).collect::<Vec<_>>());
    }

    #[test]
    fn a_panicking_job_loses_only_its_own_result() {
        let failed = compute(|| -> u8 { panic!("a job that fails") }).expect("a worker");
        assert!(failed.recv_timeout(WAIT).is_err(), "its channel is closed");
        let next = compute(|| 7).expect("a worker after the panic");
        assert_eq!(next.recv_timeout(WAIT), Ok(7));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_worker_runs_below_the_priority_of_its_caller() {
        // SAFETY: a plain system call on the calling thread.
        let nice = || unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::getpriority(libc::PRIO_PROCESS, tid)
        };
        let here = nice();
        let there = compute(nice).expect("a worker");
        let there = there.recv_timeout(WAIT).expect("a result");
        assert_eq!(
            there,
            (here + NICE).min(19),
            "worker {there}, caller {here}"
        );
    }
}
