//! What a bot's cgroup limits, how each limit is written in cgroup v1 and
//! v2, and why a cgroup could not be made.

use std::path::PathBuf;

/// What a bot's cgroup limits (those given).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CgroupLimits {
    /// Tasks in the bot's tree (`pids`).
    pub processes: Option<u64>,
    /// Bytes of memory of the whole tree (`memory`).
    pub memory: Option<u64>,
    /// CPU bandwidth of the whole tree, in thousandths of one core (`cpu`).
    pub cpu_millicores: Option<u64>,
    /// With `cpu_millicores`: the nice value the tree's CPU share is
    /// weighed as (`--bot-nice`), since in a cpu cgroup of its own its
    /// tasks' nice values rank them only among themselves. 0: the usual.
    pub cpu_nice: i32,
    /// The tree's CPU time, exited processes included, can be read.
    pub cpu_accounting: bool,
    /// The tree can be frozen and thawed.
    pub freezer: bool,
}

/// Why a bot's cgroup could not be made: the host does not offer the
/// controller, or a step of making it failed.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error(
        "no {0} cgroup controller is available to the referee (neither a \
         writable cgroup v1 hierarchy nor one delegated by cgroup v2)"
    )]
    NoController(&'static str),
    #[error("failed to create the cgroup {}: {error}", dir.display())]
    Create { dir: PathBuf, error: std::io::Error },
    #[error("failed to open {}/cgroup.procs: {error}", dir.display())]
    OpenProcs { dir: PathBuf, error: std::io::Error },
    #[error("failed to open {}: {error}", path.display())]
    Open {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("failed to set {}/{file} to {value}: {error}", dir.display())]
    Set {
        dir: PathBuf,
        file: &'static str,
        value: String,
        error: std::io::Error,
    },
}

/// The CPU bandwidth period, µs (the kernel's default); the quota is the
/// limit's share of it, so 1000 millicores is one core.
pub(super) const CPU_PERIOD_US: u64 = 100_000;

/// The kernel's scheduling weight of a task at `nice` (its
/// `sched_prio_to_weight`, 1024 at nice 0, about 1.25 times more per step
/// down), as cgroup v1's `cpu.shares`.
pub(super) fn nice_weight(nice: i32) -> u32 {
    const WEIGHTS: [u32; 40] = [
        88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100,
        4904, 3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172,
        137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
    ];
    WEIGHTS[(nice.clamp(-20, 19) + 20) as usize]
}

/// A limit to set: controller, and the files to write in order with their
/// values, in cgroup v1 and in v2.
pub(super) struct Limit {
    pub(super) controller: &'static str,
    pub(super) v1: Vec<(&'static str, String)>,
    pub(super) v2: Vec<(&'static str, String)>,
}

impl Limit {
    pub(super) fn same(
        controller: &'static str,
        v1: &'static str,
        v2: &'static str,
        value: u64,
    ) -> Limit {
        Limit {
            controller,
            v1: vec![(v1, value.to_string())],
            v2: vec![(v2, value.to_string())],
        }
    }
}
