//! The sandbox where the operating system has none (every OS but Linux):
//! the names the bot's side and the settings use, and no way to reach
//! them. `--sandbox` is refused before anything starts
//! (`crate::os::abilities`, asked by `settings/host.rs`), so no
//! [`Sandbox`] is ever made here: [`Sandbox::prepare`] refuses too, with the
//! same words, and every method of a sandbox matches on its emptiness.
//! `lib.rs` declares this file as `crate::sandbox` where the OS is not Linux.

use std::convert::Infallible;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::process::Command;

use crate::cgroup::Cgroup;
use crate::os::{Fd, Feature, Launch, ResourceLimits, HOST};

/// What the bubblewrap sandbox would record as its tool (never recorded
/// here: no run is sandboxed).
pub const TOOL: &str = "bubblewrap";
/// The size of a sandboxed bot's `/scratch` (the settings' default).
pub const TMPFS_BYTES: u64 = 64 << 20;
/// A sandboxed bot's scratch folder, as it sees it.
pub const SCRATCH_INSIDE: &str = "/scratch";
/// The layer of a run whose bots saw their views from images of their own.
pub const OWN_VIEWS: &str = "erofs-views";
/// The environment variable naming the images' cache.
pub const VIEW_CACHE_ENV: &str = "SCHMIER_VIEW_CACHE";

/// Why a sandbox cannot be had: this operating system has none.
#[derive(Debug)]
pub struct SandboxError(String);

impl std::fmt::Display for SandboxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SandboxError {}

/// A run's sandbox: none can exist on this operating system.
#[derive(Debug)]
pub struct Sandbox {
    never: Infallible,
}

/// A bot's sandboxed start, as the bot's side asks for it.
pub struct BotStart {
    pub launch: Launch,
    pub env: Vec<(String, String)>,
    pub limits: ResourceLimits,
    pub hold: bool,
    pub before_any_game: bool,
}

/// How a sandboxed bot started (never, here).
pub enum Start {
    Kept(Kept),
    Alone {
        command: Command,
        stdout: (Fd, Fd),
        cgroup: Option<Cgroup>,
    },
}

/// A bot started in a kept sandbox (never, here).
pub struct Kept {
    pub pid: u32,
    pub report: Fd,
    pub init: Option<Fd>,
    pub pin: Vec<usize>,
    pub launcher: Launcher,
    pub stdin: Fd,
    pub stdout: Fd,
    pub stderr: Fd,
    pub cgroup: Option<Cgroup>,
}

/// A kept sandbox's launcher (never, here).
#[derive(Debug)]
pub struct Launcher {
    never: Infallible,
}

/// Where a kept sandbox's init reports its bot's exit (never, here).
#[derive(Debug)]
pub struct Report {
    never: Infallible,
}

impl Report {
    pub fn new(_: Fd) -> std::io::Result<Report> {
        Err(refused_io())
    }

    pub async fn exit_status(&mut self) -> std::process::ExitStatus {
        match self.never {}
    }
}

impl Sandbox {
    /// Refuses: this operating system has no sandbox.
    pub fn prepare(_: Vec<PathBuf>, _: &[Launch]) -> Result<Sandbox, SandboxError> {
        Err(SandboxError(refusal()))
    }

    pub fn with_scratch_bytes(self, _: u64) -> Sandbox {
        self
    }

    pub fn check(&self, _: &Launch) -> Result<(), SandboxError> {
        match self.never {}
    }

    pub fn scratch_bytes(&self) -> u64 {
        match self.never {}
    }

    pub fn builds_ahead(&self) -> bool {
        match self.never {}
    }

    pub fn layers(&self) -> Vec<String> {
        match self.never {}
    }

    pub fn held(&self) -> Result<(), SandboxError> {
        match self.never {}
    }

    pub async fn held_async(sandbox: &Arc<Sandbox>) -> Result<(), SandboxError> {
        match sandbox.never {}
    }

    pub fn start(&self, _: &BotStart) -> std::io::Result<Start> {
        match self.never {}
    }

    pub async fn start_async(sandbox: &Arc<Sandbox>, _: &BotStart) -> std::io::Result<Start> {
        match sandbox.never {}
    }

    pub fn give_back(&self, launcher: Launcher) {
        match launcher.never {}
    }
}

/// The refusal, in the words of every refusal of this OS.
fn refusal() -> String {
    match HOST.require(Feature::Sandbox) {
        Err(e) => e.to_string(),
        Ok(()) => format!("--sandbox: this build has no sandbox on {}", HOST.name),
    }
}

fn refused_io() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::Unsupported, refusal())
}

/// The arguments of the sandbox's hidden subcommands, taken whole: they
/// run only inside a Linux sandbox.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct Hidden {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<OsString>,
}

pub type LandlockArgs = Hidden;
pub type LauncherArgs = Hidden;
pub type HoldArgs = Hidden;
pub type StageArgs = Hidden;

pub fn landlock_exec(_: &LandlockArgs) -> anyhow::Error {
    anyhow::anyhow!(refusal())
}

pub fn launcher_run(_: &LauncherArgs) -> anyhow::Result<()> {
    Err(anyhow::anyhow!(refusal()))
}

pub fn hold_view(_: &HoldArgs) -> std::io::Result<()> {
    Err(refused_io())
}

pub fn stage_view(_: &StageArgs) -> anyhow::Result<()> {
    Err(anyhow::anyhow!(refusal()))
}
