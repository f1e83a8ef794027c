//! Bot processes: starting them, talking to them, ending them.
//!
//! - `channel.rs`: the line channel to a bot — queued writes with a deadline,
//!   lines in — over any `AsyncRead`/`AsyncWrite` pair (a process's pipes
//!   today); it knows nothing of processes.
//! - `process.rs`: one bot process's lifecycle — spawn, pid, exit status,
//!   shutdown; it hands its stdin and stdout over as a [`Channel`].
//! - `lines.rs`: the channel's framing, the capped line splitter;
//!   `pipe.rs`: the pipe it reads, which it can pause unwoken.
//! - `cpu.rs`: CPU time of a bot (its cgroup, or its process tree), for `--clock cpu`.
//! - `launch.rs`: a command made absolute; the bot's directory and environment.
//! - `spawner.rs`: the one long-lived thread every bot is forked from.
//! - `own_exe.rs`: the executable the referee started from, which it runs
//!   of itself (and sandboxes bind) for the whole run, whatever its path
//!   names later.
//! - `cgroup.rs`: a cgroup per bot for `--limit-procs`, `--limit-cpus` (and memory),
//!   the CPU accounting of `--clock cpu` and the freezer of `--freeze-waiting`.
//!   `freeze_guard.rs`: a process that thaws and kills a dead referee's
//!   v1-frozen bots (a v1-frozen task ignores SIGKILL until thawed).
//! - `reaper.rs`: making sure an ended bot's whole tree is gone, in the
//!   background; the referee's exit waits for it.
//! - `unix.rs`: process groups, parent-death signal, rlimits, cleanup on exit.
//! - `sandbox.rs`: `--sandbox` through bubblewrap; `seccomp.rs`: its filters;
//!   `devices.rs`: the host's device nodes it shows, read-only binds;
//!   `landlock.rs`: its Landlock layer, applied inside by `referee landlock`;
//!   `procmask.rs`: constants over `/proc`'s host-wide files; `procview.rs`:
//!   what of `/proc` Landlock lets a bot read; `view.rs`: the system paths it
//!   sees (`own_view.rs`: the little a built-in bot sees instead); `resident.rs`: every page of them held in memory for the run,
//!   by a process of its own (`holder.rs`), a sparse file for what it holds
//!   (`extents.rs`); `image.rs`: that view as erofs
//!   images mounted afresh for each bot (opt-in, `SCHMIER_VIEW_CACHE`); `launcher.rs`: a sandbox kept
//!   across games, starting each bot in fresh namespaces inside it
//!   (`referee launcher`), `kept_state.rs`: what such a sandbox shares
//!   between its bots, read-only to each and proved unchanged before the
//!   next, and `slot.rs`: the referee's pool of them; `venv.rs`: a Python
//!   virtual environment as a sandboxed bot's program, and which it runs.

mod cgroup;
mod channel;
mod cpu;
mod devices;
mod extents;
mod freeze_guard;
mod holder;
mod image;
mod kept_state;
mod landlock;
mod launch;
mod launcher;
mod lines;
mod own_exe;
mod own_view;
mod pipe;
mod process;
mod procmask;
mod procview;
mod reaper;
mod resident;
mod sandbox;
mod seccomp;
mod slot;
mod spawner;
mod stderr;
mod unix;
mod venv;
mod view;

pub use cgroup::probe as probe_cgroups;
pub use cgroup::{probe_with as probe_cgroup_limits, CgroupError, CgroupLimits};
pub use channel::{Channel, WriteError};
pub use cpu::{tree_cpu_time, CpuSource};
pub use freeze_guard::{enable as enable_freeze_guard, run as freeze_guard, GuardArgs};
pub use holder::{run as hold_view, HoldArgs};
pub use image::{stage as stage_view, StageArgs, CACHE_ENV as VIEW_CACHE_ENV};
pub use landlock::{exec as landlock_exec, LandlockArgs};
pub use launch::{Launch, LaunchError, DEFAULT_PATH};
pub use launcher::{run as launcher_run, LauncherArgs};
pub use lines::Incoming;
pub use own_exe::{command as own_exe_command, forget as forget_own_exe};
pub use own_exe::{path as own_exe, remember as remember_own_exe};
pub use process::{BotProcess, Spawn};
pub use reaper::wait_all as wait_for_reaper;
pub use sandbox::{Sandbox, OWN_VIEWS, SCRATCH_INSIDE, TMPFS_BYTES, TOOL as SANDBOX_TOOL};
pub use unix::{install_cleanup, kill_all_groups, ResourceLimits};
