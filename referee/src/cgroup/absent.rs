//! Cgroups where the operating system has none (every OS but Linux): the
//! names the bot's side and the settings use. No bot is given a cgroup
//! ([`for_bot`] makes none); what a cgroup would do on Linux is refused
//! before anything starts (`crate::os::abilities`), or done by the OS's own
//! per-bot mechanism below the seam (a Job Object on Windows:
//! `os/windows/job.rs`), which [`probe_with`] answers for.
//! `lib.rs` declares this file as `crate::cgroup` where the OS is not Linux.

use std::convert::Infallible;
use std::time::Duration;

use crate::os::process::ProcsFds;
use crate::os::{Feature, ResourceLimits, HOST};

/// What a bot's cgroup would limit (those given).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CgroupLimits {
    pub processes: Option<u64>,
    pub memory: Option<u64>,
    pub cpu_millicores: Option<u64>,
    pub cpu_nice: i32,
    pub cpu_accounting: bool,
    pub freezer: bool,
}

/// Why no cgroup does what was asked: the OS has none, and its own
/// mechanism cannot do it either.
#[derive(Debug, thiserror::Error)]
#[error("{os} has no cgroups, and nothing of its own for {flag}")]
pub struct CgroupError {
    os: &'static str,
    flag: &'static str,
}

/// A bot's cgroup: none exists on this operating system.
#[derive(Debug)]
pub struct Cgroup {
    never: Infallible,
}

/// A cgroup's CPU time (never, here).
#[derive(Clone, Debug)]
pub struct CgroupCpu {
    never: Infallible,
}

/// How a process leaves a freezer cgroup (never, here).
#[derive(Debug)]
pub struct FreezerExit {
    never: Infallible,
}

impl Cgroup {
    pub fn cpu_usage(&self) -> Option<CgroupCpu> {
        match self.never {}
    }

    pub fn procs_fds(&self) -> ProcsFds {
        match self.never {}
    }

    pub fn freeze(&self, _: bool) -> std::io::Result<()> {
        match self.never {}
    }

    pub fn freezer_exit(&self) -> Option<FreezerExit> {
        match self.never {}
    }
}

impl crate::os::reaper::Enclosure for Cgroup {
    fn kill_all(&self) -> bool {
        match self.never {}
    }
}

impl CgroupCpu {
    pub fn read(&self) -> Option<Duration> {
        match self.never {}
    }
}

impl FreezerExit {
    pub fn apply(&self, _: u32) -> std::io::Result<()> {
        match self.never {}
    }
}

/// No bot has a cgroup here: its limits are the OS's own (`crate::os`).
pub fn for_bot(_: &ResourceLimits, _: u64) -> std::io::Result<Option<Cgroup>> {
    Ok(None)
}

/// [`probe_with`] for a process and a memory limit.
pub fn probe(processes: Option<u64>, memory: Option<u64>) -> Result<(), CgroupError> {
    probe_with(CgroupLimits {
        processes,
        memory,
        ..Default::default()
    })
}

/// `Ok` where this OS's own per-bot mechanism does all that `limits` asks
/// of a cgroup (`crate::os::HOST` says what it can), else why not.
pub fn probe_with(limits: CgroupLimits) -> Result<(), CgroupError> {
    let asked = [
        (limits.processes.is_some(), Feature::LimitProcs),
        (limits.memory.is_some(), Feature::LimitMemory),
        (limits.cpu_millicores.is_some(), Feature::LimitCpus),
        (limits.cpu_accounting, Feature::CpuClock),
        (limits.freezer, Feature::FreezeWaiting),
    ];
    match asked.iter().find(|(a, f)| *a && !(HOST.supports)(*f)) {
        Some((_, f)) => Err(CgroupError {
            os: HOST.name,
            flag: f.flag(),
        }),
        None => Ok(()),
    }
}

/// The cgroup v1 freezer's guard, which exists on Linux alone.
pub mod freeze_guard {
    /// `referee freeze-guard` (hidden): its arguments, taken whole.
    pub type GuardArgs = crate::sandbox::Hidden;

    pub fn enable() {}

    pub fn thaw_own() {}

    pub fn run(_: &GuardArgs) -> anyhow::Result<()> {
        anyhow::bail!("freeze-guard: cgroups exist on Linux alone")
    }
}
