//! How a bot process is started on macOS: a process group of its own (so
//! that its tree is signalled whole), the rlimits macOS enforces, its
//! nice value.

use std::convert::Infallible;

use tokio::process::Command;

use crate::os::ResourceLimits;

/// No cgroups: nothing for a child to enter (`crate::cgroup` makes none).
pub type ProcsFds = [Option<Infallible>; 6];

/// Makes `cmd` start in a process group of its own, under `limits`' CPU
/// seconds and open files (the others are refused before a run starts:
/// `mod.rs`, `supports`) at its nice value.
pub fn configure(
    cmd: &mut Command,
    limits: ResourceLimits,
    _cgroup: ProcsFds,
    _seccomp: Option<Infallible>,
) {
    cmd.process_group(0);
    // SAFETY: the closure runs in the forked child: setrlimit(2) and
    // setpriority(2) on data prepared before the fork, nothing allocated.
    unsafe {
        cmd.pre_exec(move || {
            use nix::sys::resource::{setrlimit, Resource};
            let set = |r: Resource, v: Option<u64>| v.map_or(Ok(()), |v| setrlimit(r, v, v));
            set(Resource::RLIMIT_CPU, limits.cpu_seconds)?;
            set(Resource::RLIMIT_NOFILE, limits.open_files)?;
            if limits.nice != 0
                && nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, limits.nice) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Nothing more once the bot runs: it started with its limits.
pub fn adopt(_pid: u32, _limits: &ResourceLimits) -> std::io::Result<()> {
    Ok(())
}

/// Sets the nice value of `pid` (its children inherit it).
pub fn renice_tree(pid: u32, nice: i32) {
    // SAFETY: setpriority(2) on a pid.
    unsafe {
        nix::libc::setpriority(nix::libc::PRIO_PROCESS, pid as nix::libc::id_t, nice);
    }
}

/// CPUs are pinned only in a kept sandbox, which macOS has not.
pub fn pin_tree(_: u32, _: &[usize]) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}
