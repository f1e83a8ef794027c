//! What of `/proc` a sandboxed bot may read: an allow-list, applied by the
//! Landlock wrapper (`landlock.rs`) inside the sandbox just before the exec.
//!
//! Why an allow-list: the sandbox's own `/proc` still holds files that show
//! state beyond the bot's own process. `/proc/self/pagemap` tells, page by
//! page, whether another process maps the same page of a shared `/usr` file
//! (bit 56, "exclusively mapped": a noiseless partner channel); `smaps` shows
//! which neighbours of a touched page the page cache already held;
//! `mountinfo` names host paths and the host uid the bot runs as; `uid_map`
//! names that uid too; `/proc/cgroups` counts the host's cgroups. A deny-list
//! would miss the next such file; this list holds only what the bots and
//! interpreters we know read (CPython, Node.js, the C library): their own
//! `stat`, `status`, `maps` and the like, the host's constant or masked
//! summaries (`procmask.rs`), and a few constant `/proc/sys` values.
//!
//! Landlock rules attach to inodes when the ruleset is built, and procfs makes
//! a new inode each time it looks a `/proc/PID` entry (or a `/proc/sys` one)
//! up afresh. So: the per-process files are those of the wrapper's own pid,
//! which the bot keeps across the exec; the bot's children, and its threads'
//! `task/TID` entries, get none of them (a child reading its own `/proc/self`
//! is refused: see PROTOCOL.md). And each allowed entry is held open
//! (`O_PATH`, kept across the exec) so that its dentry, and with it the inode
//! the rule names, stays while the bot lives; otherwise memory pressure could
//! drop the dentry and a later read of an allowed file would be refused.

use std::path::PathBuf;

/// Host-wide files, relative to `/proc`, every bot may read: constant for the
/// host's life, or replaced by constants in the sandbox (`procmask.rs`).
const HOST_FILES: &[&str] = &[
    "cpuinfo",
    "meminfo",
    "stat",
    "loadavg",
    "uptime",
    "vmstat",
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

/// The bot's own files, relative to `/proc/PID`: its own state, nothing of
/// another process's and nothing of the host's.
const OWN_FILES: &[&str] = &[
    "stat", "statm", "status", "maps", "cmdline", "comm", "environ", "limits", "cgroup", "auxv",
];

/// Directories the bot may list (their entries stay closed unless allowed
/// above): `/proc` (its own namespace's pids), its own `/proc/PID`, its open
/// descriptors and its threads.
const OWN_DIRS: &[&str] = &["", "fd", "task"];

/// What the wrapper of process `pid` allows under `/proc`.
#[derive(Debug, Default)]
pub struct ProcView {
    /// Files it may read.
    pub files: Vec<PathBuf>,
    /// Directories it may list.
    pub dirs: Vec<PathBuf>,
}

impl ProcView {
    pub fn of(pid: u32) -> ProcView {
        let own = PathBuf::from(format!("/proc/{pid}"));
        let files = (HOST_FILES.iter().map(|f| PathBuf::from("/proc").join(f)))
            .chain(OWN_FILES.iter().map(|f| own.join(f)))
            .collect();
        let mut dirs = vec![PathBuf::from("/proc")];
        dirs.extend(OWN_DIRS.iter().map(|d| own.join(d)));
        ProcView { files, dirs }
    }

    /// Holds every allowed entry open (`O_PATH`, not close-on-exec), so the
    /// inodes the rules name stay in the dentry cache for the bot's life.
    /// An entry that cannot be opened is skipped: Landlock then skips its rule
    /// too, which grants less, never more.
    pub fn hold(&self) {
        for path in self.files.iter().chain(&self.dirs) {
            // Deliberately left open for the bot (nix 0.29 returns a raw
            // descriptor, closed by no one): it is the bot's own /proc entry.
            let _ = nix::fcntl::open(
                path,
                nix::fcntl::OFlag::O_PATH,
                nix::sys::stat::Mode::empty(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// None of the files that show another process's state, the page cache,
    /// host paths or the host uid is allowed, however the list grows.
    #[test]
    fn the_view_leaves_out_page_maps_mounts_uid_maps_and_other_processes() {
        let view = ProcView::of(42);
        let names: Vec<String> = view
            .files
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        for bad in [
            "pagemap",
            "smaps",
            "smaps_rollup",
            "numa_maps",
            "mountinfo",
            "mounts",
            "mountstats",
            "uid_map",
            "gid_map",
            "/proc/cgroups",
            "/proc/1/",
            "sessionid",
        ] {
            assert!(!names.iter().any(|n| n.contains(bad)), "{bad} in {names:?}");
        }
        assert!(names
            .iter()
            .all(|n| !n.starts_with("/proc/4") || n.starts_with("/proc/42/")));
        assert!(names.contains(&"/proc/42/maps".to_owned()));
    }
}
