//! Constant stand-ins for the host-wide files of a sandbox's `/proc`.
//!
//! A fresh `/proc` shows only the bot's own processes, but some of its files
//! count things for the whole host: free memory, mlocked and shmem pages
//! (`meminfo`, `vmstat`), threads and load (`loadavg`, `stat`), pressure stalls
//! (`pressure/`), open files and aio contexts (`sys/fs/`). One bot changes such
//! a count (starts 290 threads, locks memory) and another reads it: a channel
//! between any two bots on the host. bubblewrap binds a constant file (or an
//! empty file or directory) over each, read-only, so every bot reads the same
//! values all the time.
//!
//! The stand-ins keep each file's shape, so that programs that parse them
//! still start: `meminfo` keeps the host's total memory and swap (fixed while
//! the host runs) and reports all of it free, `stat` keeps one `cpuN` line per
//! CPU (the C library counts CPUs there when `/sys` is hidden) with zero times,
//! `loadavg` is idle. Everything else reads zero or empty.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::Context;

/// Files replaced by an empty one: host-wide counters or tables a bot has no
/// use for.
const EMPTIED: &[&str] = &[
    "interrupts",
    "softirqs",
    "diskstats",
    "schedstat",
    "zoneinfo",
    "buddyinfo",
    "pagetypeinfo",
    "swaps",
    "locks",
    "key-users",
    "slabinfo",
    "vmallocinfo",
    "sched_debug",
    "timer_list",
];

/// Directories replaced by an empty one.
const HIDDEN_DIRS: &[&str] = &["pressure", "sys/fs", "sys/kernel/pty"];

/// The stand-ins of one referee run, in a directory every bot's user can read;
/// removed when dropped.
#[derive(Debug)]
pub struct ProcMasks {
    /// Removed with the sandbox.
    dir: tempfile::TempDir,
    /// (stand-in, path under `/proc`) pairs for this host's `/proc`.
    binds: Vec<(std::path::PathBuf, String)>,
}

impl ProcMasks {
    /// Writes the stand-ins for the files this host's `/proc` has.
    pub fn create() -> anyhow::Result<ProcMasks> {
        let fail = "failed to start the sandbox: cannot write the constant /proc files";
        let dir = tempfile::Builder::new()
            .prefix("schmier-proc-")
            .tempdir()
            .context(fail)?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .context(fail)?;
        let proc = Path::new("/proc");
        let mut binds = Vec::new();
        let mut add = |name: &str, text: Option<String>| -> anyhow::Result<()> {
            let stand_in = dir.path().join(name.replace('/', "-"));
            match text {
                Some(text) => std::fs::write(&stand_in, text),
                None => std::fs::create_dir(&stand_in),
            }
            .context(fail)?;
            std::fs::set_permissions(
                &stand_in,
                std::fs::Permissions::from_mode(if stand_in.is_dir() { 0o555 } else { 0o444 }),
            )
            .context(fail)?;
            binds.push((stand_in, format!("/proc/{name}")));
            Ok(())
        };
        let host = |name: &str| std::fs::read_to_string(proc.join(name)).ok();
        if let Some(text) = host("meminfo") {
            add("meminfo", Some(meminfo(&text)))?;
        }
        if let Some(text) = host("vmstat") {
            add("vmstat", Some(zeroed(&text)))?;
        }
        if let Some(text) = host("stat") {
            add("stat", Some(stat(&text)))?;
        }
        if proc.join("loadavg").exists() {
            add("loadavg", Some("0.00 0.00 0.00 1/1 1\n".into()))?;
        }
        if proc.join("uptime").exists() {
            add("uptime", Some("1000.00 1000.00\n".into()))?;
        }
        for name in EMPTIED.iter().filter(|n| proc.join(n).exists()) {
            add(name, Some(String::new()))?;
        }
        for name in HIDDEN_DIRS.iter().filter(|n| proc.join(n).is_dir()) {
            add(name, None)?;
        }
        Ok(ProcMasks { dir, binds })
    }

    /// Where the stand-ins are: bubblewrap, as the bot's user, must reach it.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// bubblewrap's arguments that bind the stand-ins, after `--proc /proc`.
    pub fn args(&self) -> Vec<OsString> {
        let mut a = Vec::new();
        for (stand_in, target) in &self.binds {
            a.push("--ro-bind".into());
            a.push(stand_in.clone().into_os_string());
            a.push(target.into());
        }
        a
    }
}

/// `meminfo` with the host's fixed totals kept, everything free, every other
/// count zero.
fn meminfo(host: &str) -> String {
    let value = |key: &str| {
        host.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next())
            .unwrap_or("0")
            .to_owned()
    };
    let (mem, swap) = (value("MemTotal"), value("SwapTotal"));
    let mut out = String::new();
    for line in host.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let unit = if rest.trim_end().ends_with("kB") {
            " kB"
        } else {
            ""
        };
        let v = match key {
            "MemTotal" | "MemFree" | "MemAvailable" => mem.clone(),
            "SwapTotal" | "SwapFree" => swap.clone(),
            "Hugepagesize" => value("Hugepagesize"),
            _ => "0".to_owned(),
        };
        // The kernel's own layout: the label in 16 columns, the value in 8.
        out.push_str(&format!("{:<16}{v:>8}{unit}\n", format!("{key}:")));
    }
    out
}

/// Every `name value` line of `host` with the value zero.
fn zeroed(host: &str) -> String {
    host.lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(|name| format!("{name} 0\n"))
        .collect()
}

/// `stat` with one zeroed line per CPU the host has, and the boot time kept.
fn stat(host: &str) -> String {
    let mut out = String::new();
    for line in host.lines() {
        let mut words = line.split_whitespace();
        let Some(name) = words.next() else { continue };
        let fields = words.count();
        if name.starts_with("cpu") {
            out.push_str(name);
            out.push_str(&" 0".repeat(fields));
            out.push('\n');
        } else if name == "btime" {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str("intr 0\nctxt 0\nprocesses 0\nprocs_running 1\nprocs_blocked 0\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stand_ins_keep_the_shape_and_drop_every_changing_count() {
        let host = "MemTotal:       16000000 kB\nMemFree:         123 kB\n\
                    MemAvailable:    456 kB\nShmem:           789 kB\nSwapTotal: 0 kB\n";
        let m = meminfo(host);
        assert!(m.contains("MemFree:        16000000 kB"), "{m}");
        assert!(m.contains("Shmem:                 0 kB"), "{m}");
        assert!(!m.contains("123") && !m.contains("789"), "{m}");
        assert_eq!(
            zeroed("nr_mlock 7\nnr_shmem 9\n"),
            "nr_mlock 0\nnr_shmem 0\n"
        );
        let s = stat("cpu  1 2 3\ncpu0 1 2 3\ncpu1 4 5 6\nbtime 99\nprocs_running 40\n");
        assert!(
            s.starts_with("cpu 0 0 0\ncpu0 0 0 0\ncpu1 0 0 0\nbtime 99\n"),
            "{s}"
        );
        assert!(s.contains("procs_running 1\n") && !s.contains("40"), "{s}");
    }
}
