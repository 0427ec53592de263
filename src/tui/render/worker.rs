//! The UI's workers: two threads, each started on first use, that run in
//! order the work drawing needs but no frame should wait for. Results go
//! back through the channel each job brings; the UI takes them with
//! `try_recv` at its next layout, so nothing here blocks the UI thread.
//!
//! Two lanes, so that what the user is looking at is never queued behind
//! bulk work: [`Lane::Colours`] (syntax colours of diff hunks and code
//! blocks: small jobs, wanted for the lines in view) and [`Lane::Bulk`]
//! (live previews of long streaming edits, and freeing large replaced
//! diffs: jobs that may take 100 ms, one after another).
//!
//! Why threads kept, not one per job: starting a thread costs the UI
//! thread tens of microseconds each, and a burst of them (a hunk review
//! showing five hunks) competes with the UI thread for the cores. Why a
//! lower priority (Linux: nice [`NICE`], for these threads only): on a busy
//! machine the UI thread is scheduled first, so the workers' work never
//! lengthens a frame; they take what time is left.
//!
//! What must stay true: a job never runs on the UI thread unless [`queue`]
//! said no thread could be started (the caller then decides). A job that
//! panics does not stop its lane (the jobs after it still run), though in
//! the app the panic hook has restored the terminal by then, and the run
//! loop ends as for a panic anywhere.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender};

/// One piece of work.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// How much lower than the UI thread's the workers' priority is.
pub const NICE: i32 = 10;

/// Which worker runs a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lane {
    /// Syntax colours for what is in view.
    Colours,
    /// Live previews and frees.
    Bulk,
}

/// The queue of each lane's running worker (`None` until its first job).
static COLOURS: Mutex<Option<Sender<Job>>> = Mutex::new(None);
static BULK: Mutex<Option<Sender<Job>>> = Mutex::new(None);

/// Run `job` on `lane`'s worker, after the jobs queued there before it;
/// `Err(job)` when no worker thread can be started.
pub fn queue(lane: Lane, job: Job) -> Result<(), Job> {
    let (queue, name) = match lane {
        Lane::Colours => (&COLOURS, "ui-colours"),
        Lane::Bulk => (&BULK, "ui-bulk"),
    };
    let mut queue = queue
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
        .name(name.into())
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

/// Compute `f` on `lane`'s worker; its result arrives on the receiver
/// (`None`: no worker thread, compute it elsewhere).
pub fn compute<T: Send + 'static>(
    lane: Lane,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<Receiver<T>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let job: Job = Box::new(move || {
        let _ = tx.send(f());
    });
    queue(lane, job).ok().map(|()| rx)
}

/// Free `value` on the bulk worker (here, without one).
pub fn free<T: Send + 'static>(value: T) {
    let _ = queue(Lane::Bulk, Box::new(move || drop(value)));
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
    fn jobs_run_in_order_off_the_calling_thread_one_thread_a_lane() {
        let caller = std::thread::current().id();
        let receivers: Vec<_> = (0..20)
            .map(|i| {
                let lane = [Lane::Colours, Lane::Bulk][i % 2];
                let job = move || (i, lane, std::thread::current().id());
                compute(lane, job).expect("a worker")
            })
            .collect();
        let (mut ran, mut threads) = (Vec::new(), std::collections::HashMap::new());
        for rx in receivers {
            let (i, lane, on) = rx.recv_timeout(WAIT).expect("a result");
            assert_ne!(on, caller);
            assert_eq!(*threads.entry(lane).or_insert(on), on, "one thread a lane");
            ran.push(i);
        }
        assert_eq!(ran, (0..20).collect::<Vec<_>>());
        assert_ne!(threads[&Lane::Colours], threads[&Lane::Bulk]);
    }

    #[test]
    fn colours_are_not_queued_behind_bulk_work() {
        let (release, held) = std::sync::mpsc::channel::<()>();
        let bulk = compute(Lane::Bulk, move || held.recv_timeout(WAIT).is_ok());
        let bulk = bulk.expect("a worker");
        let colours = compute(Lane::Colours, || "coloured").expect("a worker");
        assert_eq!(
            colours.recv_timeout(WAIT),
            Ok("coloured"),
            "while bulk work runs"
        );
        assert!(bulk.try_recv().is_err(), "the bulk job is still held");
        release.send(()).expect("the bulk job waits");
        assert_eq!(bulk.recv_timeout(WAIT), Ok(true));
    }

    #[test]
    fn a_panicking_job_loses_only_its_own_result() {
        let failed = compute(Lane::Bulk, || -> u8 { panic!("a job that fails") });
        let failed = failed.expect("a worker");
        assert!(failed.recv_timeout(WAIT).is_err(), "its channel is closed");
        let next = compute(Lane::Bulk, || 7).expect("a worker after the panic");
        assert_eq!(next.recv_timeout(WAIT), Ok(7));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_workers_run_below_the_priority_of_their_caller() {
        // SAFETY: a plain system call on the calling thread.
        let nice = || unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::getpriority(libc::PRIO_PROCESS, tid)
        };
        let here = nice();
        for lane in [Lane::Colours, Lane::Bulk] {
            let there = compute(lane, nice).expect("a worker");
            let there = there.recv_timeout(WAIT).expect("a result");
            assert_eq!(
                there,
                (here + NICE).min(19),
                "{lane:?} {there}, caller {here}"
            );
        }
    }
}
