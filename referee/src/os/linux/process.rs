//! How a bot process is started on Linux: a process group of its own, the
//! parent-death signal, resource limits, its cgroups entered, its nice value
//! and CPUs (`group.rs` signals and counts the groups once they run).

use std::os::fd::RawFd;
use std::sync::Arc;

use nix::sys::signal::Signal;
use seccompiler::BpfProgram;
use tokio::process::Command;

use crate::os::ResourceLimits;

/// The `cgroup.procs` descriptors of a bot's cgroups, one per hierarchy
/// (cgroup v1: pids, memory, cpu, cpuacct, freezer; and v2): the child
/// writes `0` to each between fork and exec (`crate::cgroup`).
pub type ProcsFds = [Option<RawFd>; 6];

/// Makes `cmd` start in a process group of its own (so signals reach its children
/// too), die with the referee (`PR_SET_PDEATHSIG`), unable to gain privileges
/// (`no_new_privs`), and run under `limits` (the process limit through the
/// `cgroup` whose `cgroup.procs` descriptors are given), receiving no descriptor
/// but 0, 1 and 2; `seccomp`, if given, is installed last. Call [`crate::os::spawner::spawn`] to start it, so that the death
/// signal is tied to a thread that lives as long as the referee.
pub fn configure(
    cmd: &mut Command,
    limits: ResourceLimits,
    cgroup: ProcsFds,
    seccomp: Option<Arc<BpfProgram>>,
) {
    cmd.process_group(0);
    // The referee's pid, taken before the fork: if the child's parent is anyone
    // else by the time the death signal is armed, the referee has already exited
    // (a subreaper, not necessarily pid 1, adopted the child).
    let referee = nix::unistd::getpid();
    // SAFETY: the closure runs in the forked child of a multi-threaded process, so
    // it must be async-signal-safe: it only makes system calls (prctl, getppid,
    // setrlimit, setpriority, write, seccomp) on data prepared before the fork, and its errors are
    // raw errno values; nothing allocates or takes a lock.
    unsafe {
        cmd.pre_exec(move || {
            use nix::sys::resource::{setrlimit, Resource};
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            if nix::unistd::getppid() != referee {
                return Err(std::io::Error::from_raw_os_error(nix::libc::ESRCH));
            }
            nix::sys::prctl::set_no_new_privs()?;
            let set = |r: Resource, v: Option<u64>| v.map_or(Ok(()), |v| setrlimit(r, v, v));
            set(Resource::RLIMIT_AS, limits.memory_bytes)?;
            set(Resource::RLIMIT_CPU, limits.cpu_seconds)?;
            set(Resource::RLIMIT_NOFILE, limits.open_files)?;
            // No priority above the one it is given (`--bot-nice`), whatever
            // limit the host gave the referee.
            setrlimit(Resource::RLIMIT_NICE, 0, 0)?;
            enter_cgroups(cgroup)?;
            if limits.nice != 0
                && nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, limits.nice) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            close_inherited();
            if let Some(program) = &seccomp {
                seccompiler::apply_filter(program).map_err(|e| match e {
                    seccompiler::Error::Seccomp(e) | seccompiler::Error::Prctl(e) => e,
                    _ => std::io::Error::from_raw_os_error(nix::libc::EINVAL),
                })?;
            }
            Ok(())
        });
    }
}

/// Nothing more once the bot `pid` runs: it started with its limits and in
/// its cgroups (`configure`). The Windows counterpart puts it in its job.
pub fn adopt(_pid: u32, _limits: &ResourceLimits) -> std::io::Result<()> {
    Ok(())
}

/// Makes `cmd` (a helper process of the referee's, not a bot) die with the
/// referee (`PR_SET_PDEATHSIG`; fork it from the spawner thread) and receive
/// no descriptor but 0, 1 and 2.
pub fn die_with_referee(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let referee = nix::unistd::getpid();
    // SAFETY: system calls only, on data prepared before the fork (see
    // `configure`).
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            if nix::unistd::getppid() != referee {
                return Err(std::io::Error::from_raw_os_error(nix::libc::ESRCH));
            }
            close_inherited();
            Ok(())
        });
    }
}

/// Starts `cmd` at the lowest CPU priority (nice 19): for a sandbox built
/// ahead of its game (see [`renice_tree`]).
pub fn lowest_priority(cmd: &mut Command) {
    // SAFETY: one setpriority(2) call: async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            if nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, 19) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Sets the nice value of `pid` (one process, before it has children or
/// threads: they inherit it).
pub fn set_nice(pid: u32, nice: i32) -> std::io::Result<()> {
    // SAFETY: setpriority(2) on a pid.
    match unsafe { nix::libc::setpriority(nix::libc::PRIO_PROCESS, pid as nix::libc::id_t, nice) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Sets the nice value of `pid` and of every descendant to `nice`. Each
/// process is set before its children are listed, so a child forked after
/// its parent was set inherits the new value, and one listed is set. A fork
/// under way is neither: the child copies its parent's nice value before it
/// is listed among its children, so one copied before the parent was set
/// and listed after they were read keeps the old value. A caller whose
/// process is about to fork waits for the fork and calls this again
/// (`BotProcess::release`).
pub fn renice_tree(pid: u32, nice: i32) {
    let mut todo = vec![pid];
    let mut seen = 0;
    while let Some(p) = todo.pop() {
        seen += 1;
        if seen > 4096 {
            break;
        }
        // SAFETY: setpriority on a pid; a process gone is only an error.
        unsafe { nix::libc::setpriority(nix::libc::PRIO_PROCESS, p as nix::libc::id_t, nice) };
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            if let Ok(children) = std::fs::read_to_string(task.path().join("children")) {
                todo.extend(
                    children
                        .split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
    }
}

/// Pins task `tid` (0: the calling thread) to `cpus`.
pub fn pin_task(tid: i32, cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    let mut set: nix::libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus
        .iter()
        .filter(|&&c| c < nix::libc::CPU_SETSIZE as usize)
    {
        // SAFETY: `c` is below CPU_SETSIZE.
        unsafe { nix::libc::CPU_SET(c, &mut set) };
    }
    let size = std::mem::size_of::<nix::libc::cpu_set_t>();
    // SAFETY: `set` is a cpu_set_t of `size` bytes.
    match unsafe { nix::libc::sched_setaffinity(tid, size, &set) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Pins every task of `pid` and of every descendant to `cpus`: for a held
/// bot built ahead (`BotProcess::release`), whose tree (its init and the
/// wrapper waiting for its word) forks nothing before that word. A task
/// that is gone is no error; any other failure is.
pub fn pin_tree(pid: u32, cpus: &[usize]) -> std::io::Result<()> {
    for p in super::group::tree(pid) {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Some(tid) = task
                .file_name()
                .to_str()
                .and_then(|t| t.parse::<i32>().ok())
            else {
                continue;
            };
            if let Err(e) = pin_task(tid, cpus) {
                if e.raw_os_error() != Some(nix::libc::ESRCH) {
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

/// Marks every descriptor above stderr close-on-exec, so the bot receives none
/// of the referee's: not only its own (opened close-on-exec already) but those
/// it inherited from whoever started it (a FIFO or a socket given as fd 9 would
/// otherwise reach every bot, sandboxed or not, and join them). Marked rather
/// than closed: the cgroup descriptors and std's exec-error pipe are still used
/// until the exec. Async-signal-safe: system calls only.
fn close_inherited() {
    const CLOSE_RANGE_CLOEXEC: nix::libc::c_uint = 1 << 2;
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only changes descriptor flags.
    let marked = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_close_range,
            3 as nix::libc::c_uint,
            nix::libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    if marked != 0 {
        // Before Linux 5.11: every descriptor up to the soft limit, one by one
        // (most calls fail with EBADF, which is what a closed slot says).
        let mut limit = nix::libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct given; fcntl changes flags only.
        unsafe {
            nix::libc::getrlimit(nix::libc::RLIMIT_NOFILE, &mut limit);
            let top = limit.rlim_cur.clamp(1024, 1 << 20) as nix::libc::c_int;
            for fd in 3..top {
                nix::libc::fcntl(fd, nix::libc::F_SETFD, nix::libc::FD_CLOEXEC);
            }
        }
    }
}

/// Moves the calling process into the cgroups whose `cgroup.procs`
/// descriptors are given. Async-signal-safe: for the child between fork and
/// exec.
pub fn enter_cgroups(fds: ProcsFds) -> std::io::Result<()> {
    for fd in fds.into_iter().flatten() {
        // SAFETY: a plain write(2) of a static byte to a descriptor the parent
        // opened before the fork.
        if unsafe { nix::libc::write(fd, b"0".as_ptr().cast(), 1) } != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CPUs the kernel lets task `tid` run on, as /proc lists them.
    fn allowed(tid: u32) -> String {
        std::fs::read_to_string(format!("/proc/{tid}/status"))
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap()
            .trim()
            .to_owned()
    }

    /// A held bot's tree (a parent and the child it forked) is pinned as a
    /// whole: every process of it, every thread of each.
    #[test]
    fn pin_tree_pins_every_process_and_thread_of_the_tree() {
        // SAFETY: a zeroed cpu_set_t is a valid empty set, filled by the kernel.
        let mut mine: nix::libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<nix::libc::cpu_set_t>();
        // SAFETY: `mine` is a cpu_set_t of `size` bytes.
        assert_eq!(
            unsafe { nix::libc::sched_getaffinity(0, size, &mut mine) },
            0
        );
        let cpu = (0..nix::libc::CPU_SETSIZE as usize)
            // SAFETY: `c` is below CPU_SETSIZE.
            .find(|&c| unsafe { nix::libc::CPU_ISSET(c, &mine) })
            .unwrap();
        // A shell waiting for a Python child with a second thread, which
        // says when it has started it. The interpreter by its own path: a
        // `python3` on PATH may be a shim that runs short-lived helpers.
        let python = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .unwrap();
        let python = String::from_utf8(python.stdout).unwrap();
        let mut parent = std::process::Command::new("sh")
            .args([
                "-c",
                "\"$0\" -c 'import threading, time; \
                 threading.Thread(target=time.sleep, args=(60,)).start(); \
                 print(\"ready\", flush=True); time.sleep(60)' & wait",
                python.trim(),
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(parent.stdout.take().unwrap()),
            &mut ready,
        )
        .unwrap();
        assert_eq!(ready, "ready\n");
        let tasks = |p: u32| -> Vec<u32> {
            std::fs::read_dir(format!("/proc/{p}/task"))
                .map(|d| {
                    d.flatten()
                        .filter_map(|t| t.file_name().to_str()?.parse().ok())
                        .collect()
                })
                .unwrap_or_default()
        };
        let all: Vec<u32> = crate::os::group::tree(parent.id())
            .iter()
            .flat_map(|&p| tasks(p))
            .collect();
        assert_eq!(all.len(), 3, "the shell, and Python's two threads: {all:?}");
        pin_tree(parent.id(), &[cpu]).unwrap();
        for tid in all {
            assert_eq!(allowed(tid), cpu.to_string(), "task {tid}");
        }
        for p in crate::os::group::tree(parent.id()).into_iter().rev() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        parent.wait().unwrap();
    }
}
