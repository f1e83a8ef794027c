//! Unix process plumbing: own process group, parent-death signal, resource limits,
//! and signals to whole groups. Everything platform-specific lives here.

use std::collections::BTreeSet;
use std::sync::Mutex;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::process::Command;

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
    /// Processes of the bot's user (`RLIMIT_NPROC`).
    pub processes: Option<u64>,
}

/// Makes `cmd` start in a process group of its own (so signals reach its children
/// too), die with the referee (`PR_SET_PDEATHSIG`), and run under `limits`.
pub fn configure(cmd: &mut Command, limits: ResourceLimits) {
    cmd.process_group(0);
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (prctl, getppid, setrlimit).
    unsafe {
        cmd.pre_exec(move || {
            use nix::sys::resource::{setrlimit, Resource};
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            // The referee may have died between fork and prctl.
            if nix::unistd::getppid() == Pid::from_raw(1) {
                return Err(std::io::Error::other("the referee exited"));
            }
            let set = |r: Resource, v: Option<u64>| v.map_or(Ok(()), |v| setrlimit(r, v, v));
            set(Resource::RLIMIT_AS, limits.memory_bytes)?;
            set(Resource::RLIMIT_CPU, limits.cpu_seconds)?;
            set(Resource::RLIMIT_NOFILE, limits.open_files)?;
            set(Resource::RLIMIT_NPROC, limits.processes)?;
            Ok(())
        });
    }
}

/// Sends `signal` to the whole process group led by `pid`. A group that is already
/// gone is not an error.
pub fn signal_group(pid: u32, signal: Signal) {
    let _ = killpg(Pid::from_raw(pid as i32), signal);
}

/// Whether any process of the group led by `pid` still exists.
pub fn group_alive(pid: u32) -> bool {
    killpg(Pid::from_raw(pid as i32), None).is_ok()
}

/// Every bot process group alive, so that an interrupted or panicking referee can
/// take them all down with it.
static GROUPS: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

pub fn register(pid: u32) {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner()).insert(pid);
}

pub fn unregister(pid: u32) {
    GROUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&pid);
}

/// SIGKILLs every registered group (Ctrl-C, SIGTERM, panic).
pub fn kill_all_groups() {
    let groups = std::mem::take(&mut *GROUPS.lock().unwrap_or_else(|e| e.into_inner()));
    for &pid in &groups {
        signal_group(pid, Signal::SIGKILL);
    }
    // Delivery is asynchronous; give the kernel a moment so nothing outlives us.
    let start = std::time::Instant::now();
    while groups.iter().any(|&pid| group_alive(pid))
        && start.elapsed() < std::time::Duration::from_secs(1)
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Installs the panic hook that kills every bot before the referee goes. Signals
/// are not handled here: they cancel the run cooperatively (`crate::shutdown`).
pub fn install_cleanup() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        kill_all_groups();
        previous(info);
    }));
}
