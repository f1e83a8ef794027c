//! `--sandbox`: each bot process in its own namespaces, through bubblewrap.
//!
//! Why bubblewrap rather than namespaces set up here: it is the established,
//! audited tool for exactly this (Flatpak's sandbox), it gets the details right
//! that a hand-written setup gets wrong (read-only remounts of locked mounts, a
//! read-only `/proc/sys`, capabilities dropped, a reaping pid 1). It adds about
//! 17 ms to a bot's start, mostly the kernel making the namespaces, and nothing
//! measurable per decision (BENCHMARKS.md).
//!
//! A bubblewrap is kept for the run and serves one bot after another, each
//! in fresh PID, mount, network and IPC namespaces and fresh `/proc`,
//! `/tmp`, `/dev/shm` and `/scratch` mounts of its own (`launcher.rs`,
//! [`Sandbox::wrap_launcher`]); [`Sandbox::wrap`] builds a sandbox for one
//! bot alone, where a kept one cannot be had ([`Sandbox::keeps`]).
//!
//! Three layers, each holding on its own: the namespaces (what the bot can see),
//! the seccomp filters (`seccomp.rs`: what it can call; the outer one installed
//! before bubblewrap starts, the inner one, which refuses host-wide shared
//! state, by the wrapper below just before the bot's exec), and Landlock (`landlock.rs`: what it can open, bind,
//! connect to and signal). Landlock forbids mounting, so it cannot be applied
//! before bubblewrap: bubblewrap runs the referee's own executable in place of
//! the bot (`referee landlock RULES -- BOT...`, bound read-only into every
//! sandbox at its path: the executable the run started from, bound from a
//! private name of it, whatever the path names later: `own_exe.rs`), which
//! restricts itself and execs the bot, no extra process left.
//! It closes what the namespaces leave open: bubblewrap's root and the parents of
//! the bot's directory are a writable tmpfs, `/proc/self` is writable, `/dev/tty`
//! is the operator's terminal, the network namespace has a working loopback, and
//! the sandbox's pid 1 can be signalled. `--sandbox` requires Landlock ABI 6
//! (Linux 6.12) and refuses to start without it.
//!
//! What a sandboxed bot gets, per process: user, PID, network (loopback only,
//! nothing reachable), IPC, UTS and mount namespaces; the system view
//! (`view.rs`: the parts of `/usr` programs need, `/etc`, the `/bin`, `/lib*`
//! links) read-only, every page of it held in memory (`resident.rs`); its own
//! directory read-only (a built-in bot, the referee's own executable, is shown
//! only that executable and its libraries' directories instead of both:
//! `view/own.rs`); with `--scratch`, a tmpfs of `--scratch-mb` of its own at
//! [`SCRATCH_INSIDE`] (bounded per bot, never the host folder); on half of the CPUs,
//! its partner on the other half;
//! a private empty `/tmp` and `/dev/shm` (its writable scratch, tmpfs of
//! [`TMPFS_BYTES`] each, so that no bot takes the host's memory through them);
//! a fresh `/proc` showing only its own processes, its host-wide counters
//! replaced by constants (`procmask.rs`); a minimal `/dev`. Nothing else: not the output
//! folder, not the other bots' directories, not `$HOME`. Landlock then allows
//! writing only to `/tmp` and `/dev/shm`, reading only what is shown (of
//! `/proc` only an allow-list, `procview.rs`), no TCP,
//! and no signal or abstract socket beyond the bot's own tree.
//!
//! No `--new-session`: a session per bot puts each bot in a scheduler autogroup
//! of its own, and on a loaded host that made decisions far slower in the tail
//! (BENCHMARKS.md). What a new session guards against, pushing keystrokes into
//! the operator's terminal, the seccomp filter refuses instead (`TIOCSTI`,
//! `TIOCLINUX`), and Landlock keeps the bot from opening `/dev/tty` at all.
//!
//! bubblewrap's own pid 1 inside the sandbox keeps the environment bubblewrap was
//! started with (readable at `/proc/1/environ`), so bubblewrap is started with the
//! bot's cleared environment, never the referee's. A referee running as root
//! starts bubblewrap as an unprivileged user of the bot process's own (one of
//! [`BOT_UIDS`]; uid 65534 inside): the bot then has no more rights on the host
//! than any other user, so it cannot read root-only files of the directories it
//! sees, and per-user kernel limits are per bot. Where others cannot reach the
//! bot's files it warns and starts bubblewrap as root, the bot still without
//! capabilities and not root inside. A referee that is not root cannot map
//! other users: its bots share its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use seccompiler::BpfProgram;

use hold::Hold;
use images::ImagePlan;
use procmask::ProcMasks;

/// The unprivileged user a bot is inside its sandbox, whoever runs it.
pub const NOBODY: u32 = 65534;

/// The host uids (and gids) a root referee runs sandboxed bots as, one per bot
/// process (one per scratch directory, which keeps its owner): per-user kernel
/// limits (pending signals, inotify instances, message queue bytes) are then
/// per bot, and one bot's use of them is neither seen nor felt by another. A
/// range no account should use; each uid drawn at random, so that two
/// referees on one host rarely hand out the same one.
pub const BOT_UIDS: std::ops::Range<u32> = 0x5C4E_0000..0x5C4F_0000;

/// The tool that makes the namespaces, as transcripts record it.
pub const TOOL: &str = "bubblewrap";

/// The sandbox's layers as transcripts and manifests record them, outermost
/// first (the module doc says what each holds). A layer added or removed here
/// changes what every sandboxed run records.
pub const LAYERS: [&str; 3] = ["namespaces", "seccomp", "landlock-abi-6"];

pub use kept::message::SCRATCH_INSIDE;

/// The size of each sandbox's private `/tmp` and of its `/dev/shm`: tmpfs
/// lives in the host's memory, so an unbounded one lets a bot take the host's.
pub const TMPFS_BYTES: u64 = 64 << 20;

mod bubblewrap;
pub(crate) mod devices;
mod error;
mod hold;
mod images;
pub(crate) mod kept;
pub(crate) mod landlock;
mod prepare;
mod procmask;
pub(crate) mod procview;
pub(crate) mod seccomp;
mod start;
mod users;
mod venv;
pub(crate) mod view;

pub use error::{Refusal, SandboxError, Unreachable};
pub use kept::launcher::{run as launcher_run, LauncherArgs};
pub use kept::pool::Launcher;
pub use landlock::{exec as landlock_exec, LandlockArgs};
pub use start::{BotStart, Kept, Report, Start};
pub use view::holder::{run as hold_view, HoldArgs};
pub use view::image::CACHE_ENV as VIEW_CACHE_ENV;
pub use view::stage::{stage as stage_view, StageArgs};

/// `p` with every link resolved, or as given where it cannot be (a path
/// that does not exist yet).
fn canonical(p: &std::path::Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// What every sandboxed bot of a run shares: where bubblewrap is, what must stay
/// hidden, and the seccomp program.
#[derive(Debug)]
pub struct Sandbox {
    bwrap: PathBuf,
    /// Where transcripts, timings and logs go: never shown to a bot.
    outputs: Vec<PathBuf>,
    /// Each bot's directory: hidden from the others even if it lies inside theirs.
    bot_dirs: Vec<PathBuf>,
    /// The referee runs as root: bots are started as users of their own
    /// (`BOT_UIDS`) where they can be.
    root: bool,
    pub seccomp: Arc<BpfProgram>,
    /// The referee's own executable, which bubblewrap runs in place of the bot
    /// to confine it with Landlock before it execs the bot (`landlock.rs`):
    /// the path it was started from, where every sandbox shows it.
    referee: PathBuf,
    /// A name of that executable no one else renames or deletes, bound at
    /// `referee` (`own_exe.rs`): the executable the referee started from,
    /// whatever `referee` names later.
    referee_file: PathBuf,
    /// Constant stand-ins for `/proc`'s host-wide files (`procmask.rs`).
    masks: ProcMasks,
    /// Every page a bot can read, held in memory for the run (`resident.rs`)
    /// by a process of its own (`holder.rs`): being held from
    /// [`Sandbox::prepare`] on, held once [`Sandbox::held`] says so.
    resident: Mutex<Hold>,
    /// The bot uids handed out, and the uid of each scratch directory.
    uids: Mutex<(BTreeSet<u32>, BTreeMap<PathBuf, u32>)>,
    /// The size of each bot's `/scratch` tmpfs (`--scratch-mb`).
    scratch_bytes: u64,
    /// What a built-in bot (the referee's own executable) is shown of the
    /// system: its libraries, file by file (`view/own.rs`); `None`:
    /// the whole system view.
    own_libraries: Option<Vec<PathBuf>>,
    /// The sandboxes kept across games, idle (`kept/pool.rs`).
    pool: kept::pool::Pool,
    /// Which images of the view bots are shown, where this host can make
    /// them (`image.rs`); `None`: bots see the host's paths bound.
    images: Option<ImagePlan>,
    /// Whether every bot of the run that is not built in is shown its view
    /// from images (none gets a sandbox of its own, from the host's paths).
    own_views: bool,
}

/// The layer a run's record adds when every bot that is not built in saw
/// its view from mounts of its own (`image.rs`; SECURITY.md, "The dentry
/// cache").
pub const OWN_VIEWS: &str = "erofs-views";
