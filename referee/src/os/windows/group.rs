//! Bot process trees on Windows: each is its Job Object (`job.rs`), held
//! here from the bot's start until the reaper takes it (`reaper.rs`),
//! under the pid of the process the referee started. Windows has no
//! signals: "SIGKILL" terminates the whole job; "SIGTERM" asks nothing (a
//! console process in a group of its own cannot be asked to stop), so a
//! bot is given its grace to exit after its stdin closes, then killed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use windows_sys::Win32::Foundation::{CloseHandle, WAIT_TIMEOUT};
use windows_sys::Win32::System::Threading::{
    OpenProcess, TerminateProcess, WaitForSingleObject, PROCESS_SYNCHRONIZE, PROCESS_TERMINATE,
};

use super::job::{Job, KILLED};

/// What the referee can do to a bot's tree (Unix's names, for the same
/// calls on every OS).
#[allow(clippy::upper_case_acronyms)] // Unix's names, as `nix` spells them
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Asks it to stop: nothing on Windows.
    SIGTERM,
    /// Kills it: the whole job.
    SIGKILL,
}

/// Every bot's job, by the pid of its first process.
static JOBS: Mutex<BTreeMap<u32, Arc<Job>>> = Mutex::new(BTreeMap::new());

fn jobs() -> MutexGuard<'static, BTreeMap<u32, Arc<Job>>> {
    JOBS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The job of the bot whose first process is `pid`, while it is held here.
pub fn job(pid: u32) -> Option<Arc<Job>> {
    jobs().get(&pid).cloned()
}

/// Holds `job` as the bot `pid`'s.
pub(super) fn hold(pid: u32, job: Job) {
    jobs().insert(pid, Arc::new(job));
}

/// Takes the job of `pid` out (for the reaper).
pub(super) fn take(pid: u32) -> Option<Arc<Job>> {
    jobs().remove(&pid)
}

/// Sends `signal` to the bot's whole tree (its job).
pub fn signal_group(pid: u32, signal: Signal) {
    if signal == Signal::SIGKILL {
        if let Some(job) = job(pid) {
            job.terminate();
        }
    }
}

/// Sends `signal` to the one process `pid`.
pub fn signal(pid: u32, signal: Signal) {
    if signal != Signal::SIGKILL {
        return;
    }
    // SAFETY: plain values in; a handle or null, closed once.
    unsafe {
        let process = OpenProcess(PROCESS_TERMINATE, 0, pid);
        if !process.is_null() {
            TerminateProcess(process, KILLED);
            CloseHandle(process);
        }
    }
}

/// `pid` and the other live processes of its job.
pub fn tree(pid: u32) -> Vec<u32> {
    let mut found = vec![pid];
    if let Some(job) = job(pid) {
        found.extend(job.pids().into_iter().filter(|&p| p != pid));
    }
    found
}

/// Whether process `pid` still runs.
pub fn alive(pid: u32) -> bool {
    // SAFETY: plain values in; a handle or null, waited on without waiting,
    // closed once.
    unsafe {
        let process = OpenProcess(PROCESS_SYNCHRONIZE, 0, pid);
        if process.is_null() {
            return false;
        }
        let running = WaitForSingleObject(process, 0) == WAIT_TIMEOUT;
        CloseHandle(process);
        running
    }
}

/// Whether any process of the bot `pid`'s job still runs.
pub fn group_alive(pid: u32) -> bool {
    job(pid).is_some_and(|j| j.active() > 0)
}

/// Those of `groups` whose job still has a live process.
pub fn groups_with_live_members(groups: &BTreeSet<u32>) -> BTreeSet<u32> {
    groups.iter().copied().filter(|&g| group_alive(g)).collect()
}

/// Nothing to do: a bot's job is held from its start (`process::adopt`).
pub fn register(_: u32) {}

/// Lets go of the bot `pid`'s job, killing what is left in it.
pub fn unregister(pid: u32) {
    drop(take(pid));
}

/// Kills every bot's job (Ctrl-C twice, panic).
pub fn kill_all_groups() {
    for job in jobs().values() {
        job.terminate();
    }
}
