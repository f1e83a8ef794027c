//! The operating system's process control, behind one seam.
//!
//! What a bot process needs of its host — a group of its own, a parent-death
//! signal, rlimits, a nice value and CPUs, a reaper that sees its tree gone,
//! the referee's own executable — is implemented once per operating system
//! and chosen here, in one place (`#[cfg]` appears nowhere else in the
//! referee): `linux/` today.
//!
//! - `command.rs`: a bot's command made absolute, its directory and
//!   environment (every OS).
//! - `linux/`: the Linux implementation (`process.rs`: groups, signals,
//!   limits; `spawner.rs`: the thread bots are forked from; `reaper.rs`: an
//!   ended tree made sure of; `own_exe.rs`: the referee's own executable).

mod command;

#[cfg(target_os = "linux")]
#[path = "linux/mod.rs"]
mod imp;

pub(crate) use command::find_on_path;
pub use command::{Launch, LaunchError, DEFAULT_PATH};
pub use imp::{own_exe, process, reaper, spawner};
