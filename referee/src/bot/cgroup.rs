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

use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The `cgroup.procs` descriptors of a bot's cgroups, one per hierarchy.
pub type ProcsFds = [Option<RawFd>; 3];

/// One bot's cgroups (one per hierarchy involved), removed on drop.
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<PathBuf>,
    procs: Vec<File>,
}

/// What a bot's cgroup limits (those given).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CgroupLimits {
    /// Tasks in the bot's tree (`pids`).
    pub processes: Option<u64>,
    /// Bytes of memory of the whole tree (`memory`).
    pub memory: Option<u64>,
    /// CPU bandwidth of the whole tree, in thousandths of one core (`cpu`).
    pub cpu_millicores: Option<u64>,
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
const CPU_PERIOD_US: u64 = 100_000;

/// A limit to set: controller, and the files to write in order with their
/// values, in cgroup v1 and in v2.
struct Limit {
    controller: &'static str,
    v1: Vec<(&'static str, String)>,
    v2: Vec<(&'static str, String)>,
}

impl Limit {
    fn same(controller: &'static str, v1: &'static str, v2: &'static str, value: u64) -> Limit {
        Limit {
            controller,
            v1: vec![(v1, value.to_string())],
            v2: vec![(v2, value.to_string())],
        }
    }
}

impl Cgroup {
    /// Creates a cgroup with at most `processes` tasks and `memory` bytes (those
    /// given). Fails, saying why, where the host does not allow it.
    pub fn create(processes: Option<u64>, memory: Option<u64>) -> Result<Cgroup, CgroupError> {
        Cgroup::create_with(CgroupLimits {
            processes,
            memory,
            cpu_millicores: None,
        })
    }

    /// Creates a cgroup with `limits`. Fails, saying why, where the host does
    /// not allow one of them.
    pub fn create_with(limits: CgroupLimits) -> Result<Cgroup, CgroupError> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "schmier-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let quota = |m: u64| m * CPU_PERIOD_US / 1000;
        let limits = [
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
        ];
        let mut cgroup = Cgroup {
            dirs: Vec::new(),
            procs: Vec::new(),
        };
        for limit in limits.into_iter().flatten() {
            let (parent, files) = match own_cgroup(limit.controller) {
                Some((dir, Version::V1)) => (dir, limit.v1),
                Some((dir, Version::V2)) => (dir, limit.v2),
                None => return Err(CgroupError::NoController(limit.controller)),
            };
            let dir = parent.join(&name);
            if !cgroup.dirs.contains(&dir) {
                std::fs::create_dir(&dir).map_err(|error| CgroupError::Create {
                    dir: dir.clone(),
                    error,
                })?;
                cgroup.dirs.push(dir.clone());
                let procs = OpenOptions::new()
                    .write(true)
                    .open(dir.join("cgroup.procs"))
                    .map_err(|error| CgroupError::OpenProcs {
                        dir: dir.clone(),
                        error,
                    })?;
                cgroup.procs.push(procs);
            }
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
        }
        Ok(cgroup)
    }

    /// The `cgroup.procs` descriptors the child writes `0` to, one per
    /// hierarchy (cgroup v1 has one per controller: pids, memory, cpu).
    pub fn procs_fds(&self) -> ProcsFds {
        let mut fds = [None; 3];
        for (slot, f) in fds.iter_mut().zip(&self.procs) {
            *slot = Some(f.as_raw_fd());
        }
        fds
    }

    /// Moves the calling process into the cgroup. Async-signal-safe: for the
    /// child between fork and exec.
    pub fn enter(fds: ProcsFds) -> std::io::Result<()> {
        for fd in fds.into_iter().flatten() {
            // SAFETY: a plain write(2) of a static byte to a descriptor the parent
            // opened before the fork.
            if unsafe { nix::libc::write(fd, b"0".as_ptr().cast(), 1) } != 1 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

impl Cgroup {
    /// SIGKILLs every process in the cgroup, wherever it went in the process
    /// tree (a daemon that left the bot's session included); `true` once none is
    /// left.
    pub fn kill_all(&self) -> bool {
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
        self.procs.clear();
        for dir in &self.dirs {
            // Fails only if a process is still inside; the caller kills the
            // bot's tree first.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

enum Version {
    V1,
    V2,
}

/// The directory of the referee's own cgroup for `controller`, and which
/// version it is, if the referee may create children there.
fn own_cgroup(controller: &str) -> Option<(PathBuf, Version)> {
    let table = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in table.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == controller) {
            let dir = Path::new("/sys/fs/cgroup").join(controller).join(path);
            if writable(&dir) {
                return Some((dir, Version::V1));
            }
        } else if controllers.is_empty() {
            for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                let dir = Path::new(root).join(path);
                let delegated = std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                    .is_ok_and(|s| s.split_whitespace().any(|c| c == controller));
                if delegated && writable(&dir) {
                    return Some((dir, Version::V2));
                }
            }
        }
    }
    None
}

fn writable(dir: &Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok()
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
