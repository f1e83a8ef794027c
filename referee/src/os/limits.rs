//! The limits a bot process runs under, on every operating system (each
//! implementation applies what it can: `linux/process.rs`).

/// Optional per-bot resource limits (Linux `setrlimit`), applied in the child just
/// before it runs the bot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResourceLimits {
    /// Address space, bytes (`RLIMIT_AS`).
    pub memory_bytes: Option<u64>,
    /// CPU seconds (`RLIMIT_CPU`).
    pub cpu_seconds: Option<u64>,
    /// Open files (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
    /// Processes in the bot's tree: a `pids` cgroup of its own (`crate::cgroup`),
    /// never `RLIMIT_NPROC`, which counts every process of the user.
    pub processes: Option<u64>,
    /// CPU bandwidth of the bot's tree, in thousandths of one core: a `cpu`
    /// cgroup of its own (`crate::cgroup`).
    pub cpu_millicores: Option<u64>,
    /// `--clock cpu` reads the tree's CPU time from a cgroup of its own, which
    /// counts processes that exited too (`cpu.rs`).
    pub cpu_accounting: bool,
    /// The bot is frozen while it is not on move (`--freeze-waiting`).
    pub freezer: bool,
    /// The nice value its whole tree runs at (`--bot-nice`; 0 is the usual
    /// priority). Set before the bot runs: in the child for a bot of its
    /// own (`configure`), on the init for one in a kept sandbox
    /// (`process.rs`), on the tree for one built ahead once it is released.
    pub nice: i32,
}
