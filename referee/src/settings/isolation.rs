//! How bot processes run — their environment, sandbox and scratch folder — and
//! the limits each is held to.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use serde::{Deserialize, Deserializer};

use super::{switch, with_default, Merge};
use crate::bot::ResourceLimits;
use crate::config::{BotSpec, Clock, Isolation};
use crate::os::may_raise_priority;
use crate::sandbox::Sandbox;

pub const MAX_LINE_BYTES: usize = 64 * 1024;
/// The shortest line cap: a hello or a bid must fit.
const MIN_LINE_BYTES: usize = 1024;
pub const STDERR_CAP: u64 = 1 << 20;
/// The default size of a sandboxed bot's `/scratch` (`--scratch-mb`), in MiB:
/// that of its `/tmp`.
pub const SCRATCH_MB: u64 = crate::sandbox::TMPFS_BYTES >> 20;

#[derive(Args, Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IsolationArgs {
    /// Run each bot process in a sandbox of its own (Linux namespaces through
    /// bubblewrap): no network, no other process, no files but the system
    /// directories, its own directory (read-only), a private /tmp and
    /// /dev/shm of 64 MiB each, and with --scratch a private /scratch of
    /// --scratch-mb. Landlock (ABI 6, Linux 6.12) enforces the same
    /// from inside; seccomp refuses ptrace, file locks, inotify, non-Unix
    /// sockets and whatever else reaches host-wide state (PROTOCOL.md). The
    /// referee checks every bot can be sandboxed before the first game, and
    /// refuses to start where the host cannot sandbox. A root referee shows
    /// each bot its view from erofs images mounted for it alone
    /// (SCHMIER_VIEW_CACHE, docs/reference.md). See docs/organisers.md, "Sandbox".
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL", hide_possible_values = true, overrides_with = "no_sandbox")]
    pub sandbox: Option<bool>,

    /// No sandbox (undoes --sandbox, e.g. the file's `sandbox = true`).
    #[arg(long, overrides_with = "sandbox")]
    #[serde(skip)]
    pub no_sandbox: bool,

    /// An environment variable for every bot, KEY=VALUE (repeatable; in the
    /// tournament file, the table `env`). Bots get nothing of the referee's
    /// environment: only these and PATH=/usr/local/bin:/usr/bin:/bin (unless
    /// given here). Not part of what identifies a tournament (a resumed run may
    /// differ).
    #[arg(long = "bot-env", value_name = "KEY=VALUE")]
    #[serde(default, rename = "env", deserialize_with = "env_table")]
    pub bot_env: Vec<String>,

    /// A folder in which each bot process gets a writable directory of its own
    /// (`play`: DIR/player<N>, N its lineup slot; `tournament`:
    /// DIR/rRR-mMMMM/player<N>), named in its environment as SCHMIER_SCRATCH;
    /// not inside the output folder, and empty (or missing) at the start.
    /// Unsandboxed, the bots write to those directories, kept after the run, and
    /// nothing bounds them but DIR's filesystem: a bot that fills it fills the
    /// transcripts' disk if they share one (the referee warns; give DIR a
    /// filesystem of its own). Sandboxed, each bot's /scratch is a private tmpfs
    /// of --scratch-mb instead (ENOSPC when full), in memory and gone with the
    /// process: nothing reaches DIR. Without it a sandboxed bot's only writable
    /// places are its private /tmp and /dev/shm (64 MiB each).
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,

    #[arg(long, value_name = "MIB", help = with_default("The size of each sandboxed bot process's /scratch (with --scratch), in MiB: a tmpfs of its own, so a bot that fills it gets ENOSPC there and no other bot, nor the transcripts, is short of space. In memory, charged to the bot's memory cgroup where it has one. Has no effect without --sandbox.", SCRATCH_MB))]
    pub scratch_mb: Option<u64>,
}

impl Merge for IsolationArgs {
    fn merge(self, lower: Self) -> Self {
        IsolationArgs {
            sandbox: switch(self.sandbox, self.no_sandbox).or(lower.sandbox),
            no_sandbox: false,
            // The file's first: a flag's value of the same key comes later and wins.
            bot_env: lower.bot_env.into_iter().chain(self.bot_env).collect(),
            scratch: self.scratch.or(lower.scratch),
            scratch_mb: self.scratch_mb.or(lower.scratch_mb),
        }
    }
}

impl IsolationArgs {
    pub fn sandbox(&self) -> bool {
        switch(self.sandbox, self.no_sandbox).unwrap_or(false)
    }

    /// The size of a sandboxed bot's `/scratch` in bytes (`--scratch-mb`): at
    /// least 1 MiB, and one a tmpfs can be given.
    pub fn scratch_bytes(&self) -> anyhow::Result<u64> {
        match self.scratch_mb.unwrap_or(SCRATCH_MB) {
            0 => bail!(
                "--scratch-mb 0 would give every bot a /scratch it cannot write to: give at \
                 least 1, or leave out --scratch for no scratch at all"
            ),
            mb if mb > u64::MAX >> 21 => bail!("--scratch-mb {mb}: more than a tmpfs can hold"),
            mb => Ok(mb << 20),
        }
    }

    /// Every bot's environment (see [`Isolation::env`]).
    pub fn env(&self) -> anyhow::Result<Vec<(String, String)>> {
        Ok(Isolation::env(&parse_env(&self.bot_env)?))
    }
}

/// The bots' nice value by default where the freezer lets only the seat on
/// move run (`--bot-nice`): on a busy host, that seat gets about three
/// quarters of a CPU it shares with one process at nice 0 (the kernel's
/// weights: 3121 against 1024), not half.
pub const FROZEN_NICE: i32 = -5;

/// The file's `env = { KEY = "value" }` as `KEY=value` words, as `--bot-env`.
fn env_table<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let table = BTreeMap::<String, String>::deserialize(d)?;
    Ok(table.into_iter().map(|(k, v)| format!("{k}={v}")).collect())
}

/// The per-bot resource limits.
#[derive(Args, Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitArgs {
    /// Per-bot address-space limit in MiB (RLIMIT_AS).
    #[arg(long, value_name = "MIB")]
    pub limit_memory_mb: Option<u64>,

    /// Per-bot CPU-time limit in seconds for the whole session (RLIMIT_CPU).
    #[arg(long, value_name = "S")]
    pub limit_cpu_s: Option<u64>,

    /// Per-bot open-file limit (RLIMIT_NOFILE).
    #[arg(long, value_name = "N")]
    pub limit_files: Option<u64>,

    /// Per-bot process limit: processes in the bot's tree, through a pids cgroup
    /// of its own (never RLIMIT_NPROC, which all bots of a user would share). The
    /// referee refuses to start where it cannot create cgroups.
    #[arg(long, value_name = "N")]
    pub limit_procs: Option<u64>,

    /// Per-bot CPU bandwidth, in cores (0.5: half of one core; 2: two cores),
    /// for the bot's whole process tree, through a cpu cgroup of its own
    /// (cpu.max, or cpu.cfs_quota_us on cgroup v1). A bot that busy-waits or
    /// forks then cannot take the CPU from the others. The referee refuses to
    /// start where it cannot create such cgroups.
    #[arg(long, value_name = "F")]
    pub limit_cpus: Option<f64>,

    /// Freeze every bot but the one on move (cgroup freezer): a bot runs from
    /// the moment its request is written until its decision is over, and is
    /// frozen, its whole process tree, the rest of the time, so a bot that
    /// spins while others think takes no CPU from them (it cannot think on
    /// others' time either). On by default with --sandbox where the host
    /// allows (a warning says when it does not); given, the referee refuses to
    /// start where it cannot freeze bots. `--freeze-waiting=false` turns it
    /// off.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL", hide_possible_values = true)]
    pub freeze_waiting: Option<bool>,

    /// The nice value every bot's processes run at, -20 (first) to 19
    /// (last). By default -5 for a root referee whose bots are frozen while
    /// waiting (--freeze-waiting, on with --sandbox), so that the one seat
    /// that runs, the seat on move, is not slowed by the host's other work
    /// at nice 0; 0 otherwise. Below 0 needs root (CAP_SYS_NICE). With
    /// --limit-cpus each bot's cpu cgroup is given the same weight
    /// (cpu.shares, cpu.weight.nice), which counts against the cgroups beside
    /// it. --bot-nice 0 keeps the usual priority.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub bot_nice: Option<i32>,

    #[arg(long, value_name = "BYTES", help = with_default("Longest line accepted from a bot, in bytes.", MAX_LINE_BYTES))]
    pub max_line_bytes: Option<usize>,

    #[arg(long, value_name = "BYTES", help = with_default("Bytes of each bot's stderr kept in its log file (the rest is drained and dropped).", STDERR_CAP))]
    pub stderr_cap: Option<u64>,
}

impl Merge for LimitArgs {
    fn merge(self, lower: Self) -> Self {
        LimitArgs {
            limit_memory_mb: self.limit_memory_mb.or(lower.limit_memory_mb),
            limit_cpu_s: self.limit_cpu_s.or(lower.limit_cpu_s),
            limit_files: self.limit_files.or(lower.limit_files),
            limit_procs: self.limit_procs.or(lower.limit_procs),
            limit_cpus: self.limit_cpus.or(lower.limit_cpus),
            freeze_waiting: self.freeze_waiting.or(lower.freeze_waiting),
            bot_nice: self.bot_nice.or(lower.bot_nice),
            max_line_bytes: self.max_line_bytes.or(lower.max_line_bytes),
            stderr_cap: self.stderr_cap.or(lower.stderr_cap),
        }
    }
}

impl LimitArgs {
    /// The resource limits, for bots timed on `clock` (and sandboxed or not);
    /// the cgroup limits are checked to be possible on this host before any
    /// bot starts. Called through `TableArgs::resource_limits`, which first
    /// asks the operating system whether it can honour them (`host.rs`).
    pub fn resolve(&self, clock: Clock, sandboxed: bool) -> anyhow::Result<ResourceLimits> {
        let counts = [
            ("--limit-memory-mb", self.limit_memory_mb),
            ("--limit-cpu-s", self.limit_cpu_s),
            ("--limit-files", self.limit_files),
            ("--limit-procs", self.limit_procs),
        ];
        // 0 is no limit nowhere: every bot would die before its hello, for a
        // reason that names no flag (a SIGKILL, "not reading its stdin").
        if let Some((flag, _)) = counts.iter().find(|(_, v)| *v == Some(0)) {
            bail!(
                "{flag} 0 would stop every bot before it starts: give at least 1, or leave \
                 the flag (and its file key) out for no limit"
            );
        }
        if let Some(n) = self.limit_procs {
            crate::cgroup::probe(Some(n), None).map_err(|e| {
                anyhow::anyhow!(
                    "--limit-procs {n}: failed to limit processes per bot: {e}. RLIMIT_NPROC \
                     is not used instead: it counts every process of the user, so one bot \
                     could exhaust it for all"
                )
            })?;
        }
        if let Some(mb) = self.limit_memory_mb {
            // Not refused (RLIMIT_AS still holds each process), but never silent.
            if let Err(e) = crate::cgroup::probe(None, Some(mb << 20)) {
                eprintln!(
                    "referee: warning: --limit-memory-mb {mb}: no memory cgroup per bot on \
                     this host ({e}); each bot process is limited to {mb} MiB of address \
                     space (RLIMIT_AS), but a bot's whole tree is not. Run the referee as \
                     root or with the memory controller delegated to it for a per-bot total"
                );
            }
        }
        let freezer = self.freezer(sandboxed)?;
        Ok(ResourceLimits {
            memory_bytes: self.limit_memory_mb.map(|m| m << 20),
            cpu_seconds: self.limit_cpu_s,
            open_files: self.limit_files,
            processes: self.limit_procs,
            cpu_millicores: self.limit_cpus.map(cpu_millicores).transpose()?,
            cpu_accounting: clock == Clock::Cpu && cpu_accounting(),
            freezer,
            nice: self.nice(freezer)?,
        })
    }

    /// The bots' nice value: `--bot-nice`, checked; by default
    /// [`FROZEN_NICE`] where only the seat on move runs and the referee may
    /// raise a priority, else 0.
    fn nice(&self, freezer: bool) -> anyhow::Result<i32> {
        match self.bot_nice {
            Some(n) if !(-20..=19).contains(&n) => bail!(
                "--bot-nice {n}: a nice value is from -20 (first) to 19 (last); 0 is the \
                 usual priority"
            ),
            Some(n) if n < 0 && !may_raise_priority() => bail!(
                "--bot-nice {n}: only a root referee (CAP_SYS_NICE) may give bots a priority \
                 above the usual one; give 0 or more, or run the referee as root"
            ),
            Some(n) => Ok(n),
            None if freezer && may_raise_priority() => Ok(FROZEN_NICE),
            None => Ok(0),
        }
    }

    /// Whether bots not on move are frozen: `--freeze-waiting`, by default
    /// with `--sandbox` where the host can.
    fn freezer(&self, sandboxed: bool) -> anyhow::Result<bool> {
        let wanted = self.freeze_waiting.unwrap_or(sandboxed);
        if !wanted {
            return Ok(false);
        }
        let probe = crate::cgroup::probe_with(crate::cgroup::CgroupLimits {
            freezer: true,
            ..Default::default()
        });
        match (probe, self.freeze_waiting) {
            (Ok(()), _) => Ok(true),
            (Err(e), Some(true)) => bail!(
                "--freeze-waiting: failed to make a freezer cgroup per bot: {e}. Run the \
                 referee as root, or in a cgroup v2 it may make children in (with systemd: \
                 `systemd-run --user --scope -p Delegate=yes referee ...`)"
            ),
            (Err(e), _) => {
                eprintln!(
                    "referee: warning: --sandbox: bots are not frozen while others are on \
                     move ({e}), so a bot that spins can slow the one on move into a timeout \
                     on the wall clock. Run the referee as root or in a cgroup v2 it may make \
                     children in, or use --clock cpu or --limit-cpus"
                );
                Ok(false)
            }
        }
    }

    /// `--max-line-bytes`, checked.
    pub fn max_line(&self) -> anyhow::Result<usize> {
        let bytes = self.max_line_bytes.unwrap_or(MAX_LINE_BYTES);
        if bytes < MIN_LINE_BYTES {
            bail!("--max-line-bytes must be at least {MIN_LINE_BYTES}, got {bytes}");
        }
        Ok(bytes)
    }

    pub fn stderr_cap(&self) -> u64 {
        self.stderr_cap.unwrap_or(STDERR_CAP)
    }
}

/// Whether `--clock cpu` can read each bot's CPU from a cgroup of its own,
/// which counts the processes that exited too; if not, says what it counts
/// instead (see `bot/cpu.rs`).
fn cpu_accounting() -> bool {
    let probe = crate::cgroup::probe_with(crate::cgroup::CgroupLimits {
        cpu_accounting: true,
        ..Default::default()
    });
    if let Err(e) = &probe {
        eprintln!(
            "referee: warning: --clock cpu: no cgroup per bot to account its CPU on this \
             host ({e}); each bot is charged the CPU of its live processes and of the \
             children they waited for, not that of a process that left its tree (a \
             daemon; only unsandboxed bots can make one that does). Run the referee as \
             root, or in a cgroup v2 it may make children in, to count every process"
        );
    }
    probe.is_ok()
}

/// `KEY=VALUE` words of `--bot-env`.
pub fn parse_env(words: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    words
        .iter()
        .map(|w| match w.split_once('=') {
            Some((k, v)) if !k.is_empty() && !k.contains('\0') && !v.contains('\0') => {
                Ok((k.to_owned(), v.to_owned()))
            }
            _ => bail!("--bot-env {w:?}: expected KEY=VALUE, e.g. --bot-env LANG=C.UTF-8"),
        })
        .collect()
}

/// `--limit-cpus F` in thousandths of a core, checked to be possible on this
/// host before any bot starts.
pub fn cpu_millicores(cores: f64) -> anyhow::Result<u64> {
    if !(cores.is_finite() && (0.01..=4096.0).contains(&cores)) {
        bail!(
            "--limit-cpus {cores}: expected a number of cores from 0.01 to 4096, e.g. \
             --limit-cpus 0.5 for half of one core"
        );
    }
    let millicores = (cores * 1000.0).round() as u64;
    crate::cgroup::probe_with(crate::cgroup::CgroupLimits {
        cpu_millicores: Some(millicores),
        ..Default::default()
    })
    .map_err(|e| {
        anyhow::anyhow!(
            "--limit-cpus {cores}: failed to limit CPU per bot: {e}. On cgroup v2 the \
             cpu controller must be enabled for the referee's cgroup's children (its \
             cgroup.subtree_control; with systemd, run the referee in a unit with \
             Delegate=yes, e.g. `systemd-run --scope -p Delegate=yes referee play ...`). \
             Without it, --clock cpu still times each decision on the CPU the bot used, \
             and --limit-cpu-s caps its total"
        )
    })?;
    Ok(millicores)
}

impl IsolationArgs {
    /// `--scratch DIR` checked (see [`scratch_folder`]), if given; unsandboxed,
    /// with the warning that nothing bounds it.
    pub fn scratch_folder(&self, outputs: &[&Path]) -> anyhow::Result<Option<PathBuf>> {
        let Some(dir) = self.scratch.as_deref() else {
            return Ok(None);
        };
        let bytes = self.scratch_bytes()?;
        let scratch = scratch_folder(dir, outputs)?;
        if self.sandbox() {
            return Ok(Some(scratch));
        }
        warn_unbounded(&scratch, outputs);
        if self.scratch_mb.is_some() {
            eprintln!(
                "referee: warning: --scratch-mb {}: bounds a bot's /scratch only under \
                 --sandbox; without it the bots write to {} unbounded",
                bytes >> 20,
                scratch.display()
            );
        }
        Ok(Some(scratch))
    }
}

/// `--scratch DIR`, created if missing, made absolute; never where the outputs
/// go, nor holding them, and empty.
fn scratch_folder(dir: &Path, outputs: &[&Path]) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::canonicalize(dir))
        .map_err(|e| anyhow::anyhow!("--scratch {}: failed to create it: {e}", dir.display()))
        .and_then(|scratch| {
            for out in outputs {
                let out = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
                let out = std::fs::canonicalize(&out).unwrap_or(out);
                if out.starts_with(&scratch) || scratch.starts_with(&out) {
                    bail!(
                        "--scratch {}: the bots' scratch and the output folder {} must not \
                         hold one another",
                        dir.display(),
                        out.display()
                    );
                }
            }
            // What an earlier run's bots left there would reach this run's:
            // refused rather than emptied, since the folder is the operator's.
            let used = std::fs::read_dir(&scratch)
                .map_err(|e| {
                    anyhow::anyhow!("--scratch {}: failed to read it: {e}", dir.display())
                })?
                .next()
                .is_some();
            if used {
                bail!(
                    "--scratch {}: the folder is not empty; what earlier bots left there \
                     would reach this run's. Give an empty or new folder (or empty this one)",
                    dir.display()
                );
            }
            Ok(scratch)
        })
}

/// No per-bot bound exists for an unsandboxed scratch folder (it is the
/// operator's, on the operator's filesystem, unlike the sandbox's tmpfs
/// `/scratch`), so the referee says
/// so rather than imply one: louder when a bot filling it would fill the disk the
/// transcripts are written to.
fn warn_unbounded(scratch: &Path, outputs: &[&Path]) {
    let device = |p: &Path| {
        // An output folder may not exist yet: its nearest existing parent is
        // where it will be.
        p.ancestors().find_map(crate::os::files::device)
    };
    let shared = outputs
        .iter()
        .find(|out| device(out).is_some() && device(out) == device(scratch));
    let free = crate::os::files::free_bytes(scratch)
        .map(|bytes| format!("{} MiB free now", bytes >> 20))
        .unwrap_or_else(|_| "free space unknown".into());
    eprintln!(
        "referee: warning: --scratch {}: the bots' scratch folders have no size limit of \
         their own, only their filesystem's ({free}){}",
        scratch.display(),
        match shared {
            Some(out) => format!(
                "; it is also the filesystem of {}, so a bot that fills its scratch \
                 fills the disk the transcripts need (the game being written is then \
                 lost). Put --scratch on a filesystem of its own, e.g. a size-limited tmpfs",
                out.display()
            ),
            None => String::new(),
        }
    );
}

/// Checks that the host can sandbox and that every bot of `bots` (each named as
/// errors should name it: "seat 2", "entrant \"mine\"") can be: fails closed,
/// before anything is started or written. `outputs` are where transcripts,
/// timings and logs go, never shown to a bot; `env` is the run's bot environment;
/// `scratch_bytes` the size of each bot's `/scratch` (`--scratch-mb`).
pub fn sandbox_for<'a>(
    bots: impl IntoIterator<Item = (String, &'a BotSpec)>,
    outputs: &[&Path],
    env: &[(String, String)],
    scratch_bytes: u64,
) -> anyhow::Result<Sandbox> {
    let cwd = std::env::current_dir().context("failed to read the working directory")?;
    // In-process bots (tests, benchmarks) are the referee's own code: no process.
    let launches = bots
        .into_iter()
        .filter(|(_, spec)| {
            !matches!(
                spec,
                BotSpec::InProcess(_) | BotSpec::Human | BotSpec::Remote(_)
            )
        })
        .map(|(who, spec)| {
            spec.launch(&cwd, Isolation::path_in(&spec.env(env)))
                .map(|launch| (who.clone(), launch))
                .map_err(|e| anyhow::anyhow!("failed to sandbox {who}: {e}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let resolved: Vec<_> = launches.iter().map(|(_, l)| l.clone()).collect();
    let sandbox = Sandbox::prepare(outputs.iter().map(|p| cwd.join(p)).collect(), &resolved)?
        .with_scratch_bytes(scratch_bytes);
    for (who, launch) in &launches {
        sandbox
            .check(launch)
            .map_err(|e| anyhow::anyhow!("failed to sandbox {who}: {e}"))?;
    }
    Ok(sandbox)
}
