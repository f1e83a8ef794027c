//! A bot process as the table sees it, on every operating system: started,
//! talked to over its pipes line by line, its stderr drained, ended.
//!
//! - `channel.rs`: the line channel to a bot — queued writes with a deadline,
//!   lines in — over any `AsyncRead`/`AsyncWrite` pair (a process's pipes
//!   today); it knows nothing of processes.
//! - `process.rs`: one bot process's lifecycle — spawn, pid, exit status,
//!   shutdown; it hands its stdin and stdout over as a [`Channel`].
//! - `lines.rs`: the channel's framing, the capped line splitter;
//!   `pipe.rs`: the pipe it reads, which it can pause unwoken.
//! - `stderr.rs`: a bot's stderr, drained to its log up to a cap.
//! - `cpu.rs`: CPU time of a bot (its cgroup, or its process tree), for `--clock cpu`.
//!
//! Below it: the operating system's process control (`crate::os`), the
//! sandbox (`crate::sandbox`, Linux) and cgroups (`crate::cgroup`, Linux).

mod channel;
mod cleanup;
pub(crate) mod cpu;
mod lines;
mod pipe;
mod process;
mod stderr;

pub use crate::os::reaper::wait_all as wait_for_reaper;
pub use crate::os::ResourceLimits;
pub use crate::os::{Launch, LaunchError, DEFAULT_PATH};
pub use channel::{Channel, WriteError};
pub use cleanup::{install_cleanup, kill_all as kill_all_groups};
pub use cpu::CpuSource;
pub use lines::Incoming;
pub use process::{BotProcess, Spawn};
