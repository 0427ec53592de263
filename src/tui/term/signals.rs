//! SIGTERM, SIGHUP and SIGINT end the app cleanly (terminal restored): the
//! run loop waits on them next to keys and core events.

pub use imp::Signals;

#[cfg(unix)]
mod imp {
    use tokio::signal::unix::{Signal, SignalKind, signal};

    pub struct Signals {
        term: Signal,
        hup: Signal,
        int: Signal,
    }

    impl Signals {
        pub fn new() -> std::io::Result<Self> {
            Ok(Signals {
                term: signal(SignalKind::terminate())?,
                hup: signal(SignalKind::hangup())?,
                int: signal(SignalKind::interrupt())?,
            })
        }

        /// The number of the next signal.
        pub async fn recv(&mut self) -> i32 {
            tokio::select! {
                _ = self.term.recv() => 15,
                _ = self.hup.recv() => 1,
                _ = self.int.recv() => 2,
            }
        }
    }
}

#[cfg(not(unix))]
mod imp {
    pub struct Signals;

    impl Signals {
        pub fn new() -> std::io::Result<Self> {
            Ok(Signals)
        }

        pub async fn recv(&mut self) -> i32 {
            let _ = tokio::signal::ctrl_c().await;
            2
        }
    }
}
