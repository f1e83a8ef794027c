//! The CPU time of a process tree as `/proc` tells it: the fallback of
//! `--clock cpu` where a bot has no cgroup to count it (`crate::bot`'s
//! `cpu.rs` says what each counts).

use std::time::Duration;

/// The clock ticks a second of `/proc/PID/stat`'s times.
fn ticks_per_second() -> u64 {
    use nix::unistd::{sysconf, SysconfVar};
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        sysconf(SysconfVar::CLK_TCK)
            .ok()
            .flatten()
            .map_or(100, |t| t.max(1) as u64)
    })
}

/// From `/proc/PID/stat`, in ns: the process's own CPU time, its threads that
/// exited included (`utime` + `stime`), and that of the children it reaped
/// (`cutime` + `cstime`); both in clock ticks, so to a tick.
fn stat_times_ns(pid: u32) -> (u64, u64) {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return (0, 0);
    };
    // Fields after the command's closing parenthesis, from the state (field 3).
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return (0, 0);
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    let ns = |ticks: u64| ticks * 1_000_000_000 / ticks_per_second();
    let own = field(14).unwrap_or(0) + field(15).unwrap_or(0);
    let reaped = field(16).unwrap_or(0) + field(17).unwrap_or(0);
    (ns(own), ns(reaped))
}

/// Total CPU time of `pid` and its live descendants, with the children each
/// reaped, or `None` if `/proc` cannot tell (not Linux, or the process is gone).
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
        // The live threads' run time is exact; the process's own total counts
        // the threads that exited too, to a tick: the larger is charged.
        let (own, reaped) = stat_times_ns(p);
        let mut threads = 0;
        for task in tasks.flatten() {
            let dir = task.path();
            if let Ok(s) = std::fs::read_to_string(dir.join("schedstat")) {
                threads += s
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
        total += threads.max(own) + reaped;
    }
    found_root.then(|| Duration::from_nanos(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CPU time of the live threads of `pid` alone: what the referee
    /// once charged (no reaped children, no cgroup).
    fn live_threads(pid: u32) -> Duration {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
        let ns = (tasks.flatten())
            .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
            .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .sum();
        Duration::from_nanos(ns)
    }

    /// A child that forks three workers in turn, each spinning until its own
    /// CPU clock shows 100 ms, waits for each, reports and waits for stdin:
    /// the live threads show almost none of that work, the tree with its
    /// reaped children and the cgroup (where the host allows one) all of it.
    /// The workers' own CPU clocks are the oracle; 10 ms per worker allow for
    /// the clock ticks `cutime` is counted in.
    #[test]
    fn work_of_workers_that_exited_is_counted() {
        use crate::cgroup::{Cgroup, CgroupLimits};
        use std::io::{BufRead, BufReader};
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};
        let cgroup = Cgroup::create_with(CgroupLimits {
            cpu_accounting: true,
            ..CgroupLimits::default()
        });
        let fds = cgroup.as_ref().map_or([None; 6], Cgroup::procs_fds);
        let mut cmd = Command::new("python3");
        cmd.args([
            "-c",
            "import os, sys, time\n\
             for _ in range(3):\n\
             \x20   if os.fork() == 0:\n\
             \x20       t = time.process_time()\n\
             \x20       while time.process_time() - t < 0.1: pass\n\
             \x20       os._exit(0)\n\
             \x20   os.wait()\n\
             print(os.times().children_user + os.times().children_system, flush=True)\n\
             sys.stdin.read()",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
        // SAFETY: the closure only calls write(2) on descriptors opened before
        // the fork (async-signal-safe).
        unsafe { cmd.pre_exec(move || crate::os::process::enter_cgroups(fds)) };
        let mut child = cmd.spawn().expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let workers = Duration::from_secs_f64(line.trim().parse().unwrap());
        let live = live_threads(child.id());
        let tree = tree_cpu_time(child.id()).expect("the child is alive");
        let group = cgroup.as_ref().ok().and_then(|c| c.cpu_usage()?.read());
        drop(child.stdin.take());
        child.wait().unwrap();
        assert!(workers >= Duration::from_millis(290), "{workers:?}");
        assert!(
            live < workers / 2,
            "live threads {live:?}, workers {workers:?}"
        );
        assert!(tree + Duration::from_millis(30) >= workers, "tree {tree:?}");
        match (group, cgroup) {
            (Some(group), _) => assert!(group >= workers, "cgroup {group:?}"),
            (None, Err(e)) => eprintln!("no cgroup accounting on this host: {e}"),
            (None, Ok(_)) => panic!("the cgroup's CPU time could not be read"),
        }
    }

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
