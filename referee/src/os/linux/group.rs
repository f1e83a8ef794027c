//! Bot process groups on Linux: signalled whole, looked through `/proc`, and
//! every one still alive killed when the referee goes.

use std::collections::BTreeSet;
use std::sync::Mutex;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// Sends `signal` to the whole process group led by `pid`. A group that is already
/// gone is not an error.
pub fn signal_group(pid: u32, signal: Signal) {
    let _ = killpg(Pid::from_raw(pid as i32), signal);
}

/// Sends `signal` to the one process `pid`. One that is already gone is
/// not an error.
pub fn signal(pid: u32, signal: Signal) {
    let _ = nix::sys::signal::kill(Pid::from_raw(pid as i32), signal);
}

/// `pid` and its descendants (through `/proc/PID/task/TID/children`), at most
/// 4096 of them.
pub fn tree(pid: u32) -> Vec<u32> {
    let mut found = vec![pid];
    let mut next = 0;
    while next < found.len() && found.len() < 4096 {
        let p = found[next];
        next += 1;
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            if let Ok(children) = std::fs::read_to_string(task.path().join("children")) {
                found.extend(
                    children
                        .split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
    }
    found
}

/// Whether process `pid` still exists (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// Whether any process of the group led by `pid` still exists.
pub fn group_alive(pid: u32) -> bool {
    killpg(Pid::from_raw(pid as i32), None).is_ok()
}

/// Those of `groups` in which a process still runs: a zombie does not (it
/// waits for its parent, maybe the host's init, to reap it), unless a thread
/// of it still does. In one read of `/proc` however many
/// groups are asked about; all of them if `/proc` cannot be read.
pub fn groups_with_live_members(groups: &BTreeSet<u32>) -> BTreeSet<u32> {
    let mut live = BTreeSet::new();
    if groups.is_empty() {
        return live;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return groups.clone();
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the command's closing parenthesis: state, ppid, pgrp.
        let mut fields = stat
            .rsplit_once(") ")
            .map(|(_, r)| r)
            .unwrap_or("")
            .split(' ');
        let (state, group) = (fields.next(), fields.nth(1));
        let Some(group) = group.and_then(|g| g.parse::<u32>().ok()) else {
            continue;
        };
        if groups.contains(&group)
            && !live.contains(&group)
            && (state != Some("Z") || live_threads(pid))
        {
            live.insert(group);
        }
    }
    live
}

/// Whether a zombie group leader still has threads that run.
fn live_threads(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|tasks| tasks.count() > 1)
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

/// SIGKILLs every registered group (Ctrl-C, SIGTERM, panic). A bot frozen by
/// cgroup v1 takes it only once thawed: `crate::bot::kill_all` thaws first.
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
