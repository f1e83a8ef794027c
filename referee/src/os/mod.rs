//! The operating system's process control, behind one seam.
//!
//! What a bot process needs of its host — a process group of its own, a
//! parent-death signal, rlimits, a nice value and CPUs, a reaper that sees
//! its tree gone, the referee's own executable — is implemented once per
//! operating system and chosen here, in the one place the referee names an
//! operating system (`#[cfg]`): `linux/`, `macos/` and `windows/` (each
//! with its tour in its `mod.rs`); Linux and macOS share `unix/` (files,
//! pipes, the spawner thread, signals). Each implementation offers the
//! same names: `cpu`, `files`, `group`, `own_exe`, `pipe`, `process`,
//! `reaper`, `spawner`, `sys`, a pipe's end (`Fd`), the calls a bot's tree
//! takes (`Signal`), `DEFAULT_PATH`, `PASSED_ENV`. Every OS shares:
//!
//! - `command.rs`: a bot's command made absolute, its directory and
//!   environment;
//! - `limits.rs`: the limits a bot runs under;
//! - `abilities.rs`: what this OS can honour of what a run may ask for
//!   (`--sandbox`, the cgroup limits...), which settings validation asks
//!   before anything starts.
//!
//! Above this seam: `crate::bot` (a bot process as the table sees it),
//! `crate::sandbox` and `crate::cgroup` (Linux's confinement), which use it
//! and which it never uses.

mod abilities;
mod command;
mod limits;

// The implementation for this operating system, as `imp` (one per OS, its
// module named for it, so that a path in a test's name is its file's).
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

pub use abilities::{Feature, Host, HOST};
pub use command::find_on_path;
pub use command::{Launch, LaunchError};
pub use imp::{cpu, files, group, own_exe, pipe, process, reaper, spawner, sys};
pub use imp::{may_raise_priority, Fd, Signal, DEFAULT_PATH, PASSED_ENV};
pub use limits::ResourceLimits;
