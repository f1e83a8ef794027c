//! CPU time used by a bot's process tree, for `--clock cpu` (Linux `/proc`).
//!
//! Sums the run time (`schedstat`, nanoseconds) of every thread of the bot's
//! process and of its descendants, found through `/proc/PID/task/TID/children`.
//! Processes that already exited are not counted: a bot that forks a worker per
//! decision and waits for it is charged only while the worker runs.

use std::time::Duration;

/// Total CPU time of `pid` and its live descendants, or `None` if `/proc` cannot
/// tell (not Linux, or the process is gone).
pub fn tree_cpu_time(pid: u32) -> Option<Duration> {
    let mut total = 0u64;
    let mut stack = vec![pid];
    let mut seen = 0;
    let mut found_root = false;
    while let Some(p) = stack.pop() {
        seen += 1;
        if seen > 4096 {
            break; // a fork bomb: what was summed so far is already plenty
        }
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        if p == pid {
            found_root = true;
        }
        for task in tasks.flatten() {
            let dir = task.path();
            if let Ok(s) = std::fs::read_to_string(dir.join("schedstat")) {
                total += s
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
            }
            if let Ok(children) = std::fs::read_to_string(dir.join("children")) {
                stack.extend(
                    children
                        .split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
    }
    found_root.then(|| Duration::from_nanos(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CPU time this thread has used, from `getrusage` (the kernel's own account,
    /// not `/proc`, so the check below is independent of the code it tests).
    fn thread_cpu() -> Duration {
        use nix::sys::resource::{getrusage, UsageWho};
        let u = getrusage(UsageWho::RUSAGE_THREAD).expect("getrusage works on Linux");
        let us = |t: nix::sys::time::TimeVal| {
            Duration::from_secs(t.tv_sec() as u64) + Duration::from_micros(t.tv_usec() as u64)
        };
        us(u.user_time()) + us(u.system_time())
    }

    #[test]
    fn counts_this_process_and_grows_when_it_works() {
        let me = std::process::id();
        let before = tree_cpu_time(me).expect("/proc is there on Linux");
        // Work until this thread has really used 50 ms of CPU — however long that
        // takes on a busy host — then the process total must have grown by about
        // as much (it also counts the other test threads, so it can only be more).
        let t0 = thread_cpu();
        let mut x = 0u64;
        while thread_cpu() < t0 + Duration::from_millis(50) {
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        let used = thread_cpu() - t0;
        let after = tree_cpu_time(me).unwrap();
        // rusage is accounted at tick granularity: allow 10 ms of rounding.
        assert!(
            after >= before + used.saturating_sub(Duration::from_millis(10)),
            "{before:?} -> {after:?} after this thread used {used:?}"
        );
        assert_eq!(tree_cpu_time(u32::MAX - 1), None);
    }
}
