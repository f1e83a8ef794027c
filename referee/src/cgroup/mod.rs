//! Per-bot process, memory and CPU limits through a cgroup of the bot's own.
//!
//! `RLIMIT_NPROC` counts every process of the *user*, so with all bots running as
//! one user, one bot's forks made another fail to start. A `pids` cgroup per bot
//! process counts that bot's tree only; a `memory` cgroup caps its whole tree
//! rather than each process; a `cpu` cgroup caps the CPU bandwidth of its whole
//! tree (`cpu.max` in v2, `cpu.cfs_quota_us` over `cpu.cfs_period_us` in v1), which
//! no rlimit can (`RLIMIT_CPU` is a total, not a rate, and per process). The
//! referee creates the cgroup under its own (cgroup
//! v1 hierarchies at `/sys/fs/cgroup/<controller>`, or cgroup v2 where the
//! controller is delegated to its cgroup's children), and the child moves itself
//! in between fork and exec by writing `0` to a `cgroup.procs` opened beforehand.
//!
//! Two features need no limit: the tree's CPU time, processes that exited
//! included (`cpu.stat`'s `usage_usec`, or cgroup v1's `cpuacct.usage`), for
//! `--clock cpu`; and the freezer (v1's `freezer.state`, or `cgroup.freeze`),
//! which stops every task of the bot while another seat is on move. CPU
//! accounting prefers cgroup v2, which needs no controller for it. The
//! freezer prefers v1 where the host has both (a hybrid host): v1 freezes a
//! task asleep in a freezable wait (a futex, `nanosleep`, `sigwait`: a Node
//! bot's helper threads) where it sleeps, and thaws it so (a task asleep in
//! `read`, `epoll_wait`, `poll` or `waitpid` is woken either way), and its
//! writes take about 3 µs; v2's `cgroup.freeze` wakes every task to trap it
//! and again to let it go, and its write takes about 20 µs once the cgroup
//! holds two tasks (a sandboxed bot and its init always are two): most of
//! the sandbox's idle cost (BENCHMARKS.md, "the freezer's cost",
//! `scripts/freeze_cost.py`). A
//! v1-frozen task dies of SIGKILL only once thawed: the referee thaws before
//! it kills, and a guard process thaws and kills for a referee that died
//! abruptly (`freeze_guard.rs`).
//!
//! - `limits.rs`: what a bot's cgroup limits, and why it could not be made;
//! - `hierarchy.rs`: where the referee may make a bot's cgroups (v1 or v2);
//! - `freezer.rs`: `--freeze-waiting`'s freezer; `freeze_guard.rs`: the
//!   process that thaws and kills a dead referee's v1-frozen bots;
//! - `cpu.rs`: a cgroup's CPU time, for `--clock cpu`.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
mod cpu;
pub mod freeze_guard;
mod freezer;
mod hierarchy;
mod limits;

use crate::os::process::ProcsFds;
use crate::os::ResourceLimits;
pub use cpu::CgroupCpu;
use freezer::{freezer_parent, Freezer};
pub use freezer::{v1_freezer_parent, FreezerExit};
use hierarchy::{feature_parent, own_cgroup, Version};
use limits::{nice_weight, Limit, CPU_PERIOD_US};
pub use limits::{CgroupError, CgroupLimits};

/// One bot's cgroups (one per hierarchy involved), removed on drop.
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<PathBuf>,
    procs: Vec<File>,
    /// Where the tree's CPU time is read, if it was asked for.
    usage: Option<CgroupCpu>,
    /// The freezer, if it was asked for.
    freezer: Option<Freezer>,
    /// Where `pids.max` was set, and to what.
    pids: Option<(PathBuf, u64)>,
}

impl Cgroup {
    /// Creates a cgroup with at most `processes` tasks and `memory` bytes (those
    /// given). Fails, saying why, where the host does not allow it.
    pub fn create(processes: Option<u64>, memory: Option<u64>) -> Result<Cgroup, CgroupError> {
        Cgroup::create_with(CgroupLimits {
            processes,
            memory,
            ..CgroupLimits::default()
        })
    }

    /// Creates a cgroup with `limits`. Fails, saying why, where the host does
    /// not allow one of them.
    pub fn create_with(limits: CgroupLimits) -> Result<Cgroup, CgroupError> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "{}{}",
            freeze_guard::prefix(std::process::id()),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let quota = |m: u64| m * CPU_PERIOD_US / 1000;
        let limits_set = [
            limits
                .processes
                .map(|n| Limit::same("pids", "pids.max", "pids.max", n)),
            limits
                .memory
                .map(|n| Limit::same("memory", "memory.limit_in_bytes", "memory.max", n)),
            limits.cpu_millicores.map(|m| Limit {
                controller: "cpu",
                v1: vec![
                    ("cpu.cfs_period_us", CPU_PERIOD_US.to_string()),
                    ("cpu.cfs_quota_us", quota(m).to_string()),
                ],
                v2: vec![("cpu.max", format!("{} {CPU_PERIOD_US}", quota(m)))],
            }),
            // The share the tree's cgroup gets, as its tasks' nice value
            // would give one task outside it.
            (limits.cpu_millicores.is_some() && limits.cpu_nice != 0).then(|| Limit {
                controller: "cpu",
                v1: vec![("cpu.shares", nice_weight(limits.cpu_nice).to_string())],
                v2: vec![("cpu.weight.nice", limits.cpu_nice.to_string())],
            }),
        ];
        let mut cgroup = Cgroup {
            dirs: Vec::new(),
            procs: Vec::new(),
            usage: None,
            freezer: None,
            pids: None,
        };
        for limit in limits_set.into_iter().flatten() {
            let (parent, files) = match own_cgroup(limit.controller) {
                Some((dir, Version::V1)) => (dir, limit.v1),
                Some((dir, Version::V2)) => (dir, limit.v2),
                None => return Err(CgroupError::NoController(limit.controller)),
            };
            let dir = cgroup.join(parent.join(&name))?;
            for (file, value) in files {
                if let Err(error) = std::fs::write(dir.join(file), &value) {
                    return Err(CgroupError::Set {
                        dir,
                        file,
                        value,
                        error,
                    });
                }
            }
            if let (true, Some(n)) = (limit.controller == "pids", limits.processes) {
                cgroup.pids = Some((dir, n));
            }
        }
        cgroup.add_features(&name, limits)?;
        Ok(cgroup)
    }

    /// Adds what `limits` asks beyond limits: CPU accounting, the freezer.
    fn add_features(&mut self, name: &str, limits: CgroupLimits) -> Result<(), CgroupError> {
        if limits.cpu_accounting {
            let (dir, version) = feature_parent("cpuacct")
                .ok_or(CgroupError::NoController("cpuacct (or cgroup v2 cpu.stat)"))?;
            let dir = self.join(dir.join(name))?;
            self.usage = Some(match version {
                Version::V2 => CgroupCpu::v2(dir.join("cpu.stat")),
                Version::V1 => CgroupCpu::v1(dir.join("cpuacct.usage")),
            });
        }
        if limits.freezer {
            let (parent, version) = freezer_parent().ok_or(CgroupError::NoController(
                "freezer (or cgroup v2 cgroup.freeze)",
            ))?;
            if matches!(version, Version::V1) {
                freeze_guard::ensure(&parent);
            }
            let dir = self.join(parent.join(name))?;
            let file = match version {
                Version::V2 => "cgroup.freeze",
                Version::V1 => "freezer.state",
            };
            let control = OpenOptions::new()
                .write(true)
                .open(dir.join(file))
                .map_err(|error| CgroupError::Open {
                    path: dir.join(file),
                    error,
                })?;
            self.freezer = Some(Freezer {
                control,
                version,
                parent,
            });
        }
        Ok(())
    }

    /// Makes `dir` (once) and opens its `cgroup.procs`; returns it.
    fn join(&mut self, dir: PathBuf) -> Result<PathBuf, CgroupError> {
        if !self.dirs.contains(&dir) {
            std::fs::create_dir(&dir).map_err(|error| CgroupError::Create {
                dir: dir.clone(),
                error,
            })?;
            self.dirs.push(dir.clone());
            let procs = OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))
                .map_err(|error| CgroupError::OpenProcs {
                    dir: dir.clone(),
                    error,
                })?;
            self.procs.push(procs);
        }
        Ok(dir)
    }

    /// Where the tree's CPU time is read (if [`CgroupLimits::cpu_accounting`]).
    pub fn cpu_usage(&self) -> Option<CgroupCpu> {
        self.usage.clone()
    }

    /// The `cgroup.procs` descriptors the child writes `0` to, one per
    /// hierarchy (cgroup v1 has one per controller).
    pub fn procs_fds(&self) -> ProcsFds {
        let mut fds = [None; 6];
        for (slot, f) in fds.iter_mut().zip(&self.procs) {
            *slot = Some(f.as_raw_fd());
        }
        fds
    }

    /// Moves process `pid` (a kept sandbox's bot init, `sandbox/kept/pool.rs`) into the
    /// cgroup, before it starts the bot.
    pub fn add(&self, pid: u32) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        for f in &self.procs {
            f.write_all_at(pid.to_string().as_bytes(), 0)?;
        }
        Ok(())
    }
}

impl Cgroup {
    /// SIGKILLs every process in the cgroup, wherever it went in the process
    /// tree (a daemon that left the bot's session included); `true` once none is
    /// left.
    pub fn kill_all(&self) -> bool {
        // A task frozen by cgroup v1 dies only once thawed.
        let _ = self.freeze(false);
        let mut empty = true;
        for dir in &self.dirs {
            let Ok(procs) = std::fs::read_to_string(dir.join("cgroup.procs")) else {
                continue;
            };
            for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                empty = false;
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
        empty
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = self.freeze(false);
        self.freezer = None;
        self.procs.clear();
        for dir in &self.dirs {
            // Fails only if a process is still inside; the caller kills the
            // bot's tree first.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

impl crate::os::reaper::Enclosure for Cgroup {
    fn kill_all(&self) -> bool {
        Cgroup::kill_all(self)
    }
}

/// The cgroup that limits a bot's processes and CPU (and its tree's memory,
/// where the host allows; `RLIMIT_AS` limits each process in any case), if
/// `limits` ask for one. `helpers`, the sandbox's processes around the bot
/// (bubblewrap and its pid 1, or a kept sandbox's init), are not counted
/// against the bot's processes.
pub fn for_bot(limits: &ResourceLimits, helpers: u64) -> std::io::Result<Option<Cgroup>> {
    let wanted = CgroupLimits {
        processes: limits.processes.map(|n| n + helpers),
        memory: limits.memory_bytes,
        cpu_millicores: limits.cpu_millicores,
        // Only a cpu cgroup's share needs it (else the tasks' nice value
        // ranks them against the host's, and no cgroup is made for it).
        cpu_nice: limits.cpu_millicores.map_or(0, |_| limits.nice),
        cpu_accounting: limits.cpu_accounting,
        freezer: limits.freezer,
    };
    if wanted == CgroupLimits::default() {
        return Ok(None);
    }
    // The memory cgroup is a best effort on top of RLIMIT_AS; the others were
    // promised (and probed before the run).
    let required = CgroupLimits {
        memory: None,
        ..wanted
    };
    match Cgroup::create_with(wanted) {
        Ok(c) => Ok(Some(c)),
        Err(_) if required == CgroupLimits::default() => Ok(None),
        Err(_) => Cgroup::create_with(required)
            .map(Some)
            .map_err(std::io::Error::other),
    }
}

/// Checks once, before any bot starts, that per-bot cgroups can be made.
pub fn probe(processes: Option<u64>, memory: Option<u64>) -> Result<(), CgroupError> {
    Cgroup::create(processes, memory).map(drop)
}

/// Checks once, before any bot starts, that per-bot cgroups with `limits` can
/// be made (a CPU limit included).
pub fn probe_with(limits: CgroupLimits) -> Result<(), CgroupError> {
    Cgroup::create_with(limits).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_time(pid: u32) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).unwrap();
        s.split_whitespace().next().unwrap().parse().unwrap()
    }

    /// Whether the kernel says every task of the freezer's cgroup is frozen.
    fn frozen(cgroup: &Cgroup) -> bool {
        cgroup.dirs.iter().any(|d| {
            std::fs::read_to_string(d.join("cgroup.events"))
                .is_ok_and(|e| e.lines().any(|l| l == "frozen 1"))
                || std::fs::read_to_string(d.join("freezer.state"))
                    .is_ok_and(|s| s.trim() == "FROZEN")
        })
    }

    /// A spinning process in a frozen cgroup does not run (its run time stands
    /// still across a pause, however busy the host), and runs again once
    /// thawed. Skipped, saying so, where the host gives no freezer.
    #[test]
    fn a_frozen_bot_does_not_run_and_a_thawed_one_does() {
        use std::os::unix::process::CommandExt;
        let cgroup = match Cgroup::create_with(CgroupLimits {
            freezer: true,
            ..CgroupLimits::default()
        }) {
            Ok(c) => c,
            Err(e) => return eprintln!("SKIPPED: no freezer on this host: {e}"),
        };
        let fds = cgroup.procs_fds();
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "while :; do :; done"]);
        // SAFETY: only write(2) on descriptors opened before the fork.
        unsafe { cmd.pre_exec(move || crate::os::process::enter_cgroups(fds)) };
        let mut child = cmd.spawn().unwrap();
        let pid = child.id();
        let wait = |what: &str, done: &dyn Fn() -> bool| {
            let start = std::time::Instant::now();
            while !done() {
                assert!(start.elapsed().as_secs() < 60, "never {what}");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        };
        cgroup.freeze(true).unwrap();
        wait("frozen", &|| frozen(&cgroup));
        let before = run_time(pid);
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(run_time(pid), before, "it ran while frozen");
        cgroup.freeze(false).unwrap();
        wait("ran again", &|| run_time(pid) > before);
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// A process that leaves the freezer (a kept sandbox's init once its bot
    /// runs, where the freezer is v2's; the move is tried with v1's too)
    /// runs on while the cgroup is frozen, and the one that stays is frozen. It leaves no more than the freezer: where the process limit
    /// is another hierarchy's (cgroup v1) it is still counted there; where
    /// it is the freezer's own cgroup (v2) the limit is lowered by one, so
    /// the bot's processes are limited as before. Skipped, saying so, where
    /// the host gives no freezer or no process limit.
    #[test]
    fn a_process_that_left_the_freezer_runs_while_the_rest_is_frozen() {
        use std::os::unix::process::CommandExt;
        let cgroup = match Cgroup::create_with(CgroupLimits {
            processes: Some(5),
            freezer: true,
            ..CgroupLimits::default()
        }) {
            Ok(c) => c,
            Err(e) => return eprintln!("SKIPPED: no freezer or pids cgroup on this host: {e}"),
        };
        let spin = || {
            let fds = cgroup.procs_fds();
            let mut cmd = std::process::Command::new("sh");
            cmd.args(["-c", "while :; do :; done"]);
            // SAFETY: only write(2) on descriptors opened before the fork.
            unsafe { cmd.pre_exec(move || crate::os::process::enter_cgroups(fds)) };
            cmd.spawn().unwrap()
        };
        let (mut bot, mut init) = (spin(), spin());
        let v2 = matches!(cgroup.freezer.as_ref().unwrap().version, Version::V2);
        assert_eq!(
            cgroup.freezer_exit().is_some(),
            v2,
            "only v2's freezer is left"
        );
        cgroup.any_freezer_exit().unwrap().apply(init.id()).unwrap();
        let listed = |dir: &std::path::Path, pid: u32| {
            std::fs::read_to_string(dir.join("cgroup.procs"))
                .unwrap()
                .lines()
                .any(|l| l == pid.to_string())
        };
        let freezer = cgroup.freezer.as_ref().unwrap();
        let (pids_dir, _) = cgroup.pids.clone().unwrap();
        let freezer_dir = freezer.parent.join(pids_dir.file_name().unwrap());
        assert!(!listed(&freezer_dir, init.id()) && listed(&freezer_dir, bot.id()));
        if pids_dir == freezer_dir {
            let max = std::fs::read_to_string(pids_dir.join("pids.max")).unwrap();
            assert_eq!(max.trim(), "4");
        } else {
            assert!(listed(&pids_dir, init.id()) && listed(&pids_dir, bot.id()));
        }
        cgroup.freeze(true).unwrap();
        let start = std::time::Instant::now();
        while !frozen(&cgroup) {
            assert!(start.elapsed().as_secs() < 60, "never frozen");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let before = (run_time(bot.id()), run_time(init.id()));
        let start = std::time::Instant::now();
        while run_time(init.id()) == before.1 {
            assert!(start.elapsed().as_secs() < 60, "the init never ran");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(run_time(bot.id()), before.0, "the bot ran while frozen");
        cgroup.freeze(false).unwrap();
        for child in [&mut bot, &mut init] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// A bot with a cpu cgroup of its own is weighed as its nice value
    /// would weigh one task (`--bot-nice` with `--limit-cpus`): cgroup v1's
    /// `cpu.shares` is the kernel's weight for that nice value (3121 for -5,
    /// three times nice 0's 1024), v2's `cpu.weight.nice` the value itself;
    /// at nice 0 the share is left as the kernel makes it.
    #[test]
    fn a_cpu_cgroup_gets_the_share_of_the_bots_nice_value() {
        assert_eq!(
            (nice_weight(-5), nice_weight(0), nice_weight(19)),
            (3121, 1024, 15)
        );
        let read = |c: &Cgroup| {
            (c.dirs.iter())
                .find_map(|d| {
                    (std::fs::read_to_string(d.join("cpu.shares")).ok())
                        .or_else(|| std::fs::read_to_string(d.join("cpu.weight.nice")).ok())
                })
                .map(|v| v.trim().to_owned())
        };
        let make = |nice| {
            Cgroup::create_with(CgroupLimits {
                cpu_millicores: Some(500),
                cpu_nice: nice,
                ..CgroupLimits::default()
            })
        };
        let boosted = match make(-5) {
            Ok(c) => c,
            Err(e) => return eprintln!("SKIPPED: no cpu cgroup on this host: {e}"),
        };
        let v1 = boosted.dirs.iter().any(|d| d.join("cpu.shares").exists());
        assert_eq!(
            read(&boosted).as_deref(),
            Some(if v1 { "3121" } else { "-5" })
        );
        let usual = make(0).unwrap();
        assert_eq!(read(&usual).as_deref(), Some(if v1 { "1024" } else { "0" }));
    }
}
