//! Process control on Linux.
//!
//! - `process.rs`: a bot's command made to start in a group of its own,
//!   with the parent-death signal, rlimits, its cgroups entered, a nice
//!   value; a running tree reniced or pinned to CPUs.
//! - `group.rs`: process groups signalled, looked for, and killed all at
//!   the referee's end.
//! - `cpu.rs`: the CPU time of a process tree, from `/proc`.
//! - `pipe.rs`: Unix's pipes, grown and spliced as only Linux can.
//! - `reaper.rs`: making sure an ended bot's whole tree is gone, in the
//!   background; the referee's exit waits for it.
//! - `own_exe.rs`: the executable the referee started from, which it runs
//!   of itself (and sandboxes bind) for the whole run, whatever its path
//!   names later.
//!
//! What it shares with macOS is `../unix/`: files, the spawner thread (the
//! parent-death signal is tied to the thread that forks), the referee's
//! own limits and signals.

pub mod cpu;
pub mod group;
pub mod own_exe;
pub mod pipe;
pub mod process;
pub mod reaper;

pub use super::unix::{files, spawner, sys, Fd};
pub use nix::sys::signal::Signal;

/// The operating system's name, as a refusal says it.
pub const NAME: &str = "Linux";

/// Linux can honour every feature a run may ask for (whether this host
/// offers it, a kernel or a cgroup delegated, is probed before the run).
pub fn supports(_: crate::os::Feature) -> bool {
    true
}

/// The `PATH` bots get unless `--bot-env PATH=...` says otherwise. A
/// constant, so nothing of the referee's environment reaches a bot.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Nothing of the referee's environment is passed on to a bot.
pub const PASSED_ENV: &[&str] = &[];

/// Whether this referee may give a process a priority above the usual one
/// (CAP_SYS_NICE): tried on a thread of its own, which then ends (on Linux
/// a thread's nice value is its own), so the referee's is unchanged.
pub fn may_raise_priority() -> bool {
    static MAY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *MAY.get_or_init(|| {
        std::thread::spawn(|| {
            // SAFETY: setpriority(2) on the calling thread.
            unsafe { nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, -1) == 0 }
        })
        .join()
        .unwrap_or(false)
    })
}
