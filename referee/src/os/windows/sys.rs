//! What the referee asks of a Windows host for itself: no open-file limit
//! to raise (handles are limited per process far above any run's need),
//! a thread's CPU time, Ctrl-C and Ctrl-Break.

use std::time::Duration;

use windows_sys::Win32::Foundation::FILETIME;
use windows_sys::Win32::System::Threading::{GetCurrentThread, GetThreadTimes};

/// No open-file limit to read.
pub fn open_files() -> Option<(u64, u64)> {
    None
}

/// No open-file limit to set.
pub fn set_open_files(_: u64, _: u64) -> bool {
    false
}

/// The CPU time the calling thread has used (user and kernel).
pub fn thread_cpu_time() -> std::io::Result<Duration> {
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: the pseudo-handle of this thread; four FILETIMEs written.
    let ok = unsafe {
        GetThreadTimes(
            GetCurrentThread(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    let ticks = |t: FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
    Ok(Duration::from_nanos((ticks(kernel) + ticks(user)) * 100))
}

/// What stops a run: Ctrl-C and Ctrl-Break at the referee's console.
pub struct StopSignals {
    c: tokio::signal::windows::CtrlC,
    brk: tokio::signal::windows::CtrlBreak,
}

impl StopSignals {
    /// Listens for them (inside the runtime); `None` if it cannot.
    pub fn new() -> Option<StopSignals> {
        let c = tokio::signal::windows::ctrl_c().ok()?;
        let brk = tokio::signal::windows::ctrl_break().ok()?;
        Some(StopSignals { c, brk })
    }

    /// The next one, as the exit code it gives: 130 for Ctrl-C (as for
    /// SIGINT), 143 for Ctrl-Break (as for SIGTERM).
    pub async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.c.recv() => 130,
            _ = self.brk.recv() => 143,
        }
    }
}
