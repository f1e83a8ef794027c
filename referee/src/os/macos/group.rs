//! Bot process groups on macOS: signalled whole, looked for with
//! `killpg(0)`, and every one still alive killed when the referee goes.

use std::collections::BTreeSet;
use std::sync::Mutex;

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

/// Sends `signal` to the whole process group led by `pid`.
pub fn signal_group(pid: u32, signal: Signal) {
    let _ = killpg(Pid::from_raw(pid as i32), signal);
}

/// Sends `signal` to the one process `pid`.
pub fn signal(pid: u32, signal: Signal) {
    let _ = kill(Pid::from_raw(pid as i32), signal);
}

/// `pid` alone: macOS lists no process's children without libproc, and
/// the group, signalled whole, holds them.
pub fn tree(pid: u32) -> Vec<u32> {
    vec![pid]
}

/// Whether process `pid` still exists (a zombie too).
pub fn alive(pid: u32) -> bool {
    kill(Pid::from_raw(pid as i32), None).is_ok()
}

/// Whether any process of the group led by `pid` still exists.
pub fn group_alive(pid: u32) -> bool {
    killpg(Pid::from_raw(pid as i32), None).is_ok()
}

/// Those of `groups` in which a process still exists.
pub fn groups_with_live_members(groups: &BTreeSet<u32>) -> BTreeSet<u32> {
    groups.iter().copied().filter(|&g| group_alive(g)).collect()
}

/// Every bot process group alive, so that an interrupted or panicking
/// referee can take them all down with it.
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

/// SIGKILLs every registered group, and gives the kernel a moment.
pub fn kill_all_groups() {
    let groups = std::mem::take(&mut *GROUPS.lock().unwrap_or_else(|e| e.into_inner()));
    for &pid in &groups {
        signal_group(pid, Signal::SIGKILL);
    }
    let start = std::time::Instant::now();
    while groups.iter().any(|&pid| group_alive(pid))
        && start.elapsed() < std::time::Duration::from_secs(1)
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
