//! Per-bot process and memory limits through a cgroup of the bot's own.
//!
//! `RLIMIT_NPROC` counts every process of the *user*, so with all bots running as
//! one user, one bot's forks made another fail to start. A `pids` cgroup per bot
//! process counts that bot's tree only; a `memory` cgroup caps its whole tree
//! rather than each process. The referee creates the cgroup under its own (cgroup
//! v1 hierarchies at `/sys/fs/cgroup/<controller>`, or cgroup v2 where the
//! controller is delegated to its cgroup's children), and the child moves itself
//! in between fork and exec by writing `0` to a `cgroup.procs` opened beforehand.

use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// One bot's cgroups (one per hierarchy involved), removed on drop.
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<PathBuf>,
    procs: Vec<File>,
}

/// A limit to set: controller, its file in v1 and in v2, and the value.
struct Limit {
    controller: &'static str,
    v1_file: &'static str,
    v2_file: &'static str,
    value: u64,
}

impl Cgroup {
    /// Creates a cgroup with at most `processes` tasks and `memory` bytes (those
    /// given). Fails, saying why, where the host does not allow it.
    pub fn create(processes: Option<u64>, memory: Option<u64>) -> Result<Cgroup, String> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "schmier-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let limits = [
            processes.map(|value| Limit {
                controller: "pids",
                v1_file: "pids.max",
                v2_file: "pids.max",
                value,
            }),
            memory.map(|value| Limit {
                controller: "memory",
                v1_file: "memory.limit_in_bytes",
                v2_file: "memory.max",
                value,
            }),
        ];
        let mut cgroup = Cgroup {
            dirs: Vec::new(),
            procs: Vec::new(),
        };
        for limit in limits.into_iter().flatten() {
            let (parent, file) = match own_cgroup(limit.controller) {
                Some((dir, Version::V1)) => (dir, limit.v1_file),
                Some((dir, Version::V2)) => (dir, limit.v2_file),
                None => {
                    return Err(format!(
                        "no {} cgroup controller is available to the referee (neither a \
                         writable cgroup v1 hierarchy nor one delegated by cgroup v2)",
                        limit.controller
                    ))
                }
            };
            let dir = parent.join(&name);
            if !cgroup.dirs.contains(&dir) {
                std::fs::create_dir(&dir)
                    .map_err(|e| format!("failed to create the cgroup {}: {e}", dir.display()))?;
                cgroup.dirs.push(dir.clone());
                let procs = OpenOptions::new()
                    .write(true)
                    .open(dir.join("cgroup.procs"))
                    .map_err(|e| format!("failed to open {}/cgroup.procs: {e}", dir.display()))?;
                cgroup.procs.push(procs);
            }
            std::fs::write(dir.join(file), limit.value.to_string())
                .map_err(|e| format!("failed to set {}/{file}: {e}", dir.display()))?;
        }
        Ok(cgroup)
    }

    /// The `cgroup.procs` descriptors the child writes `0` to (at most two).
    pub fn procs_fds(&self) -> [Option<RawFd>; 2] {
        let mut fds = [None; 2];
        for (slot, f) in fds.iter_mut().zip(&self.procs) {
            *slot = Some(f.as_raw_fd());
        }
        fds
    }

    /// Moves the calling process into the cgroup. Async-signal-safe: for the
    /// child between fork and exec.
    pub fn enter(fds: [Option<RawFd>; 2]) -> std::io::Result<()> {
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
pub fn probe(processes: Option<u64>, memory: Option<u64>) -> Result<(), String> {
    Cgroup::create(processes, memory).map(drop)
}
