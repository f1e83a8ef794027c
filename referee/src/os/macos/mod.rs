//! Process control on macOS: Unix's (`../unix/`: files, pipes, the
//! spawner thread, signals) and what macOS has of its own.
//!
//! - `process.rs`: a bot in a process group of its own, with the rlimits
//!   macOS enforces (`RLIMIT_CPU`, `RLIMIT_NOFILE`) and a nice value.
//! - `group.rs`: process groups signalled and looked for (`killpg`).
//! - `reaper.rs`: a bot's group seen gone off the game's path.
//! - `cpu.rs`: no CPU clock of a tree (`--clock cpu` is refused).
//! - `pipe.rs`, `own_exe.rs`: Unix's pipes; the referee's own path.
//!
//! macOS has no parent-death signal: a bot outlives a referee killed with
//! SIGKILL. Every other end of the referee (its exit, Ctrl-C, SIGTERM, a
//! panic) kills every bot's group first (`group::kill_all_groups`).

pub mod cpu;
pub mod group;
pub mod own_exe;
pub mod pipe;
pub mod process;
pub mod reaper;

pub use super::unix::{files, spawner, sys, Fd};
pub use nix::sys::signal::Signal;

use crate::os::Feature;

/// The operating system's name, as a refusal says it.
pub const NAME: &str = "macOS";

/// The `PATH` bots get unless `--bot-env PATH=...` says otherwise.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Nothing of the referee's environment is passed on to a bot.
pub const PASSED_ENV: &[&str] = &[];

/// What macOS can honour: the CPU-time and open-file rlimits, nice values.
/// Not: a sandbox, cgroups (a freezer, a CPU share, a process limit of a
/// bot's own: `RLIMIT_NPROC` counts every process of the user), a memory
/// limit (`RLIMIT_AS` is not enforced), the CPU time of a whole tree.
pub fn supports(feature: Feature) -> bool {
    matches!(
        feature,
        Feature::LimitCpuSeconds | Feature::LimitFiles | Feature::BotNice
    )
}

/// Whether this referee may give a process a priority above the usual one:
/// root's right on macOS.
pub fn may_raise_priority() -> bool {
    nix::unistd::geteuid().is_root()
}
