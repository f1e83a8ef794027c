//! Process control on Linux.
//!
//! - `process.rs`: a bot's command made to start in a group of its own,
//!   with the parent-death signal, rlimits, its cgroups entered, a nice
//!   value; a running tree reniced or pinned to CPUs.
//! - `group.rs`: process groups signalled, looked for, and killed all at
//!   the referee's end.
//! - `cpu.rs`: the CPU time of a process tree, from `/proc`.
//! - `spawner.rs`: the one long-lived thread every bot is forked from.
//! - `reaper.rs`: making sure an ended bot's whole tree is gone, in the
//!   background; the referee's exit waits for it.
//! - `own_exe.rs`: the executable the referee started from, which it runs
//!   of itself (and sandboxes bind) for the whole run, whatever its path
//!   names later.

pub mod cpu;
pub mod group;
pub mod own_exe;
pub mod process;
pub mod reaper;
pub mod spawner;

/// The operating system's name, as a refusal says it.
pub const NAME: &str = "Linux";

/// Linux can honour every feature a run may ask for (whether this host
/// offers it, a kernel or a cgroup delegated, is probed before the run).
pub fn supports(_: crate::os::Feature) -> bool {
    true
}
