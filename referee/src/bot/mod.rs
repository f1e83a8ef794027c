//! Bot processes: starting them, talking to them, ending them.
//!
//! - `process.rs`: one bot process — spawn, queued writes, lines in, shutdown.
//! - `lines.rs`: the capped line splitter for a bot's stdout.
//! - `cpu.rs`: CPU time of a bot's process tree, for `--clock cpu`.
//! - `unix.rs`: process groups, parent-death signal, rlimits, cleanup on exit.

mod cpu;
mod lines;
mod process;
mod unix;

pub use cpu::tree_cpu_time;
pub use lines::Incoming;
pub use process::{BotProcess, Spawn, WriteError};
pub use unix::{install_cleanup, kill_all_groups, ResourceLimits};
