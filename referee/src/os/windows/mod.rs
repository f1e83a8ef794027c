//! Process control on Windows.
//!
//! - `job.rs`: a Job Object per bot — kill-on-close, its limits, its CPU
//!   time and live processes.
//! - `process.rs`: a bot started suspended, put in its job, resumed.
//! - `group.rs`: the bots' jobs, held by pid; "signals" as jobs take them.
//! - `reaper.rs`: a bot's job seen empty off the game's path, then closed.
//! - `cpu.rs`: `--clock cpu` from the job's accounting.
//! - `spawner.rs`, `own_exe.rs`: starting a process; the referee's path.
//! - `pipe.rs`, `files.rs`, `sys.rs`: pipes, files and locks, the
//!   referee's own CPU clock and Ctrl-C.

pub mod cpu;
pub mod files;
pub mod group;
mod job;
pub mod own_exe;
pub mod pipe;
pub mod process;
pub mod reaper;
pub mod spawner;
pub mod sys;

use crate::os::Feature;

pub use group::Signal;

/// A pipe's or a file's end as the OS hands it over.
pub type Fd = std::os::windows::io::OwnedHandle;

/// The operating system's name, as a refusal says it.
pub const NAME: &str = "Windows";

/// Where bare program names are looked up when the run gives bots no
/// `PATH` and the referee has none.
pub const DEFAULT_PATH: &str = r"C:\Windows\System32;C:\Windows";

/// What of the referee's environment every bot is given besides `PATH`
/// and its `--bot-env`: what a Windows program needs to run at all (the
/// system folder, its temporary folder, the extensions of programs).
pub const PASSED_ENV: &[&str] = &[
    "PATH",
    "PATHEXT",
    "SystemRoot",
    "SystemDrive",
    "TEMP",
    "TMP",
];

/// What a Job Object gives: the limits of processes and memory of a bot's
/// whole tree, its CPU time with exited processes (`--clock cpu`), a CPU
/// limit per process (user time). Not: a sandbox, a freezer, a CPU share,
/// an open-file limit, nice values.
pub fn supports(feature: Feature) -> bool {
    matches!(
        feature,
        Feature::LimitProcs | Feature::LimitMemory | Feature::LimitCpuSeconds | Feature::CpuClock
    )
}

/// No priority above the usual is given to a bot (`--bot-nice` is refused).
pub fn may_raise_priority() -> bool {
    false
}
