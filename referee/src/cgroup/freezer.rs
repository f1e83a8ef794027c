//! The freezer of `--freeze-waiting`: every task of a bot stopped while
//! another seat is on move (v1's `freezer.state` or v2's `cgroup.freeze`;
//! the module doc of `mod.rs` says why v1 comes first where a host has
//! both), and the way out of it for a kept sandbox's init.

use std::fs::File;
use std::path::PathBuf;

use super::hierarchy::{own_cgroup, own_cgroup_v2, Version};
use super::Cgroup;

/// A bot's freezer cgroup: its control file, its version, and the directory
/// it was made in (where a task leaves it for: [`Cgroup::freezer_exit`]).
#[derive(Debug)]
pub(super) struct Freezer {
    pub(super) control: File,
    pub(super) version: Version,
    pub(super) parent: PathBuf,
}

impl Cgroup {
    /// Freezes every task of the cgroup (`true`) or thaws them; nothing
    /// without a freezer. Freezing takes effect within a scheduler tick: the
    /// write returns at once, tasks on another CPU stop on their way back to
    /// user space.
    pub fn freeze(&self, frozen: bool) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let Some(Freezer {
            control, version, ..
        }) = &self.freezer
        else {
            return Ok(());
        };
        let value: &[u8] = match (version, frozen) {
            (Version::V2, true) => b"1",
            (Version::V2, false) => b"0",
            (Version::V1, true) => b"FROZEN",
            (Version::V1, false) => b"THAWED",
        };
        control.write_all_at(value, 0)
    }

    /// Where a process leaves the freezer's cgroup for, if the freezer is
    /// cgroup v2's: for a kept sandbox's init once it has forked the bot
    /// (`BotProcess::started`). A task that only waits for its child need
    /// not be frozen, and v2's `cgroup.freeze` write takes about 3 µs for a
    /// cgroup of one task, about 20 µs for two (BENCHMARKS.md, "the init
    /// leaves the freezer"). v1's freezer costs the same either way, and a
    /// move costs an RCU grace period (milliseconds on a loaded host), so
    /// there nothing moves. The init leaves the bot's other v2 limits and
    /// accounting with it (it forks nothing more and uses no CPU to speak
    /// of), and a process limit there, which counted it as a helper, is
    /// lowered by one, so the bot's own processes stay limited as given.
    pub fn freezer_exit(&self) -> Option<FreezerExit> {
        let freezer = self.freezer.as_ref()?;
        match freezer.version {
            Version::V2 => self.any_freezer_exit(),
            Version::V1 => None,
        }
    }

    /// [`Cgroup::freezer_exit`] whichever the freezer's version.
    pub(super) fn any_freezer_exit(&self) -> Option<FreezerExit> {
        let freezer = self.freezer.as_ref()?;
        let pids_max = match &self.pids {
            Some((dir, n)) if dir.parent() == Some(freezer.parent.as_path()) => {
                Some((dir.join("pids.max"), n.saturating_sub(1)))
            }
            _ => None,
        };
        Some(FreezerExit {
            procs: freezer.parent.join("cgroup.procs"),
            pids_max,
        })
    }
}

/// How a process leaves a bot's v2 freezer cgroup ([`Cgroup::freezer_exit`]).
#[derive(Debug)]
pub struct FreezerExit {
    /// The `cgroup.procs` of the cgroup it goes back to.
    procs: PathBuf,
    /// `pids.max` of the cgroup it leaves, and the limit without it.
    pids_max: Option<(PathBuf, u64)>,
}

impl FreezerExit {
    /// Moves process `pid` out (a write to `cgroup.procs`, which waits for
    /// an RCU grace period: call it off any table's path).
    pub fn apply(&self, pid: u32) -> std::io::Result<()> {
        std::fs::write(&self.procs, pid.to_string())?;
        match &self.pids_max {
            Some((file, n)) => std::fs::write(file, n.to_string()),
            None => Ok(()),
        }
    }
}

/// Where a bot's freezer cgroup goes: the referee's cgroup v1 freezer
/// hierarchy if it may make children there, else its own cgroup v2 (see the
/// module's doc for why v1 comes first).
pub(super) fn freezer_parent() -> Option<(PathBuf, Version)> {
    own_cgroup("freezer")
        .filter(|(_, v)| matches!(v, Version::V1))
        .or_else(|| own_cgroup_v2().map(|d| (d, Version::V2)))
}

/// The freezer directory bots' cgroups are made in, if it is cgroup v1's
/// (the panic hook thaws them there before it kills: `freeze_guard.rs`).
pub fn v1_freezer_parent() -> Option<PathBuf> {
    freezer_parent()
        .filter(|(_, v)| matches!(v, Version::V1))
        .map(|(dir, _)| dir)
}
