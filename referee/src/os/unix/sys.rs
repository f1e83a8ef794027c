//! What the referee asks of a Unix host for itself: its open-file limit,
//! a thread's CPU time, the signals that stop a run.

use std::time::Duration;

use nix::sys::resource::{getrlimit, setrlimit, Resource};

/// The open-file limit, soft and hard; `None` if it cannot be read.
pub fn open_files() -> Option<(u64, u64)> {
    getrlimit(Resource::RLIMIT_NOFILE).ok()
}

/// Sets the open-file limit; whether it took.
pub fn set_open_files(soft: u64, hard: u64) -> bool {
    setrlimit(Resource::RLIMIT_NOFILE, soft, hard).is_ok()
}

/// The CPU time the calling thread has used.
pub fn thread_cpu_time() -> std::io::Result<Duration> {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(Duration::from)
        .map_err(std::io::Error::from)
}

/// The signals that stop a run: SIGINT (Ctrl-C) and SIGTERM.
pub struct StopSignals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl StopSignals {
    /// Listens for them (inside the runtime); `None` if it cannot.
    pub fn new() -> Option<StopSignals> {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(term), Ok(int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return None;
        };
        Some(StopSignals { term, int })
    }

    /// The next one, as the exit code it gives: 130 for SIGINT, 143 for
    /// SIGTERM.
    pub async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.term.recv() => 143,
            _ = self.int.recv() => 130,
        }
    }
}
