//! CPU time used by a bot, for `--clock cpu`.
//!
//! Where the host allows, read from the bot's own cgroup (`crate::cgroup`): the
//! kernel charges every task of it there, those that already exited included,
//! so thinking in short-lived forked workers is charged in full. Elsewhere the
//! fallback (`crate::os`'s `linux/cpu.rs`) sums, over the bot's process and its live descendants (found
//! through `/proc/PID/task/TID/children`), the run time of every live thread
//! (`schedstat`, nanoseconds) or, if larger, the process's own total with its
//! exited threads (`utime` + `stime` in `/proc/PID/stat`, clock ticks), and
//! the times of the children each process has reaped (`cutime` + `cstime`). A worker
//! that exited is then charged once its parent waits for it; one that left the
//! tree (a daemon reparented outside it, which only an unsandboxed bot can
//! make) is not. The referee warns when a run falls back (settings).

use std::time::Duration;

use crate::cgroup::CgroupCpu;
use crate::os::cpu::tree_cpu_time;

/// Where a player's CPU time is read for `--clock cpu`. A player with no
/// process of its own to read has none, and its decisions are timed on the
/// wall clock.
#[derive(Clone, Debug)]
pub enum CpuSource {
    /// Its cgroup's accounting: every task, exited ones included.
    Cgroup(CgroupCpu),
    /// The tree of its process, with what each process reaped.
    Tree(u32),
}

impl CpuSource {
    pub fn process_tree(pid: u32) -> CpuSource {
        CpuSource::Tree(pid)
    }

    /// The CPU time used so far, or `None` if it cannot be read.
    pub fn read(&self) -> Option<Duration> {
        match self {
            CpuSource::Cgroup(c) => c.read(),
            CpuSource::Tree(pid) => tree_cpu_time(*pid),
        }
    }
}
