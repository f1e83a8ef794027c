//! CPU time used by a bot's process tree, for `--clock cpu` (Linux `/proc`).
//!
//! Sums the run time (`schedstat`, nanoseconds) of every thread of the bot's
//! process and of its descendants, found through `/proc/PID/task/TID/children`.
//! Processes that already exited are not counted: a bot that forks a worker per
//! decision and waits for it is charged only while the worker runs.

use std::time::Duration;

/// Where a player's CPU time is read for `--clock cpu`: the tree of its
/// process. A player with no process of its own to read has none, and its
/// decisions are timed on the wall clock.
#[derive(Clone, Copy, Debug)]
pub struct CpuSource {
    pid: u32,
}

impl CpuSource {
    pub fn process_tree(pid: u32) -> CpuSource {
        CpuSource { pid }
    }

    /// The CPU time used so far, or `None` if it cannot be read.
    pub fn read(&self) -> Option<Duration> {
        tree_cpu_time(self.pid)
    }
}

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

    #[test]
    fn counts_a_process_by_the_cpu_it_says_it_used() {
        use std::io::{BufRead, BufReader};
        use std::process::{Command, Stdio};
        // A single-threaded child works until its own CPU clock says 50 ms were
        // used — however long that takes on a busy host — reports the figure and
        // waits. `/proc` must then count at least that much (the kernel's own
        // accounting via Python's process_time is the independent oracle; 5 ms
        // allow for tick rounding).
        let mut child = Command::new("python3")
            .args([
                "-c",
                "import sys, time\n\
                 t = time.process_time()\n\
                 while time.process_time() - t < 0.05: pass\n\
                 print(time.process_time(), flush=True)\n\
                 sys.stdin.read()",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let reported = Duration::from_secs_f64(line.trim().parse().unwrap());
        let counted = tree_cpu_time(child.id()).expect("the child is alive");
        drop(child.stdin.take());
        child.wait().unwrap();
        assert!(
            counted + Duration::from_millis(5) >= reported,
            "/proc counts {counted:?}; the child used {reported:?}"
        );
        assert!(reported >= Duration::from_millis(50));
        assert_eq!(tree_cpu_time(u32::MAX - 1), None);
    }
}
