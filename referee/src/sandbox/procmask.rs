//! Constant stand-ins for the host-wide files of a sandbox's `/proc`.
//!
//! A fresh `/proc` shows only the bot's own processes, but some of its files
//! count things for the whole host: free memory, mlocked and shmem pages
//! (`meminfo`, `vmstat`), threads and load (`loadavg`, `stat`), pressure stalls
//! (`pressure/`), open files and aio contexts (`sys/fs/`). One bot changes such
//! a count (starts 290 threads, locks memory) and another reads it: a channel
//! between any two bots on the host. Landlock refuses most such files outright
//! (`procview.rs` allows only a list): `interrupts`, `diskstats`, `slabinfo`,
//! `zoneinfo` and the like cannot be opened, so they need nothing here. The
//! few the allow-list lets through, because runtimes read them, bubblewrap
//! covers with a constant file, read-only ([`MASKED`]), and the directories
//! that list host-wide state by name with an empty one; every bot then reads
//! the same values all the time.
//!
//! The stand-ins keep each file's shape, so that programs that parse them
//! still start: `meminfo` keeps the host's total memory and swap (fixed while
//! the host runs) and reports all of it free, `stat` keeps one `cpuN` line per
//! CPU (the C library counts CPUs there when `/sys` is hidden) with zero times,
//! `loadavg` is idle. Every other count reads zero.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::Context;

/// The host-wide files the Landlock allow-list (`procview.rs`) lets a bot
/// read that change while the host runs: each is replaced by a constant.
/// Every other host-wide file is either constant for the host's life (the
/// rest of the allow-list) or refused by Landlock, so it needs no stand-in:
/// each stand-in is a bind mount, a remount read-only and a read of
/// `mountinfo` in bubblewrap, about a third of a sandbox's start when there
/// were 22 of them (BENCHMARKS.md).
pub(crate) const MASKED: &[&str] = &["meminfo", "vmstat", "stat", "loadavg", "uptime"];

/// Directories replaced by an empty one: Landlock lets a bot list every
/// directory beneath `/proc` (its rights on a directory hold for all beneath
/// it), and these list host-wide state by name.
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
        for name in MASKED {
            let Ok(host) = std::fs::read_to_string(proc.join(name)) else {
                continue;
            };
            add(name, Some(stand_in(name, &host)))?;
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

    /// `(path under /proc, stand-in's file name)` for a launcher, which
    /// binds them over each bot's fresh `/proc` (`launcher.rs`).
    pub fn pairs(&self) -> Vec<(String, String)> {
        (self.binds.iter())
            .filter_map(|(stand_in, target)| {
                let name = stand_in.file_name()?.to_str()?.to_owned();
                Some((target.clone(), name))
            })
            .collect()
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

/// The constant that stands in for `/proc/NAME` (one of [`MASKED`]), of the
/// shape of the host's `text`.
fn stand_in(name: &str, host: &str) -> String {
    match name {
        "meminfo" => meminfo(host),
        "vmstat" => zeroed(host),
        "stat" => stat(host),
        "loadavg" => "0.00 0.00 0.00 1/1 1\n".into(),
        "uptime" => "1000.00 1000.00\n".into(),
        // Not reached: MASKED lists only the names above.
        _ => String::new(),
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

    /// Host-wide files of the allow-list that never change while the host
    /// runs: the CPUs' description, the kernel's version and fixed limits.
    const CONSTANT: &[&str] = &[
        "cpuinfo",
        "version",
        "filesystems",
        "sys/kernel/overflowuid",
        "sys/kernel/overflowgid",
        "sys/kernel/osrelease",
        "sys/kernel/ostype",
        "sys/kernel/version",
        "sys/kernel/pid_max",
        "sys/kernel/threads-max",
        "sys/kernel/cap_last_cap",
        "sys/kernel/ngroups_max",
        "sys/vm/overcommit_memory",
    ];

    /// Every host-wide file of this host's `/proc` (not a process's own) is
    /// refused by Landlock, constant, or covered by a stand-in: an allow-list
    /// entry that changes with the host and has no stand-in fails here, and
    /// so does a stand-in for a file Landlock refuses anyway (a mount for
    /// nothing).
    #[test]
    fn every_host_wide_file_is_refused_constant_or_masked() {
        let allowed = crate::sandbox::procview::ProcView::of(1);
        let host: Vec<String> = (allowed.files.iter())
            .filter_map(|p| p.strip_prefix("/proc").ok())
            .filter(|p| !p.starts_with("1"))
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        assert!(host.len() >= MASKED.len() + CONSTANT.len(), "{host:?}");
        for name in &host {
            assert!(
                MASKED.contains(&name.as_str()) || CONSTANT.contains(&name.as_str()),
                "/proc/{name} is allowed, neither constant nor masked"
            );
        }
        let masks = ProcMasks::create().unwrap();
        let mut checked = 0;
        for (stand_in, target) in &masks.binds {
            let name = target.strip_prefix("/proc/").unwrap();
            if stand_in.is_dir() {
                assert!(HIDDEN_DIRS.contains(&name), "{target}");
                continue;
            }
            assert!(
                host.iter().any(|h| h == name),
                "{target}: Landlock refuses it anyway"
            );
            checked += 1;
        }
        let on_this_host = MASKED
            .iter()
            .filter(|n| Path::new("/proc").join(n).exists());
        assert_eq!(checked, on_this_host.count(), "{:?}", masks.binds);
        assert!(masks.binds.len() <= MASKED.len() + HIDDEN_DIRS.len());
    }

    /// No bot can leave anything in the stand-ins, which every bot of the run
    /// shares: each is bound read-only, and neither it nor its directory is
    /// writable by anyone but the referee's user.
    #[test]
    fn the_shared_stand_ins_are_read_only_to_every_bot() {
        let masks = ProcMasks::create().unwrap();
        let args = masks.args();
        assert_eq!(args.len(), masks.binds.len() * 3);
        for bind in args.chunks(3) {
            assert_eq!(bind[0], "--ro-bind", "{args:?}");
        }
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode();
        assert_eq!(mode(masks.dir()) & 0o022, 0);
        for (stand_in, _) in &masks.binds {
            assert_eq!(mode(stand_in) & 0o222, 0, "{}", stand_in.display());
        }
    }

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
