//! The CPU time of a bot's tree on macOS: not counted. macOS can tell a
//! live process's own CPU time (`proc_pid_rusage`) but not that of the
//! processes it started and that exited, so `--clock cpu` is refused
//! (`mod.rs`, `supports`) rather than undercount a bot that thinks in
//! workers.

use std::time::Duration;

/// None: see the module's note.
pub fn tree_cpu_time(_pid: u32) -> Option<Duration> {
    None
}
