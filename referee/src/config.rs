//! The validated, typed configuration of a run. `cli.rs` turns raw flags into
//! these; nothing past this point sees a string that could still be malformed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use schmier_protocol::rules::RulesConfig;

use crate::bot::{Launch, LaunchError, ResourceLimits};
use crate::isolation_record::{IsolationRecord, LimitsRecord, SandboxRecord};
pub use crate::layout::Output;
use crate::sandbox::Sandbox;
pub use crate::transcript::FaultPolicy;
use crate::transcript::TimeControlRecord;
pub use schmier_protocol::wire::Clock;

/// Who plays a lineup slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BotSpec {
    /// A built-in sample bot, run as `referee bot NAME` (this very executable).
    Builtin(String),
    /// A built-in sample bot played inside the referee: no process, no pipe, no
    /// clock. For tests and benchmarks that need opponents a busy host cannot slow
    /// down to a timeout.
    InProcess(String),
    /// A person at the terminal (`human`), played inside the referee with no
    /// time limit.
    Human,
    /// A bot on another machine (`remote:NAME`), served over the run's
    /// listener to `referee connect` with NAME's token (`remote/`).
    Remote(String),
    /// An external command: argv (split like a shell would, never run by one) and
    /// the text as the user gave it.
    Command {
        argv: Vec<String>,
        text: String,
        /// Its own working directory (a tournament entrant's `dir`): the command
        /// is read as if typed there. Absent: worked out from the command
        /// (`os/command.rs`).
        dir: Option<PathBuf>,
        /// Variables of its own (a tournament entrant's `env`), over the run's.
        env: Vec<(String, String)>,
    },
}

impl BotSpec {
    /// The command as recorded in transcripts: machine-independent.
    pub fn display(&self) -> String {
        match self {
            BotSpec::Builtin(name) => format!("referee bot {name}"),
            BotSpec::InProcess(name) => format!("inproc:{name}"),
            BotSpec::Human => "human".to_owned(),
            BotSpec::Remote(name) => format!("{}{name}", crate::remote::PREFIX),
            BotSpec::Command { text, .. } => text.clone(),
        }
    }

    /// The argv to spawn.
    pub fn argv(&self) -> Result<Vec<String>, LaunchError> {
        match self {
            BotSpec::Builtin(name) => {
                let exe = crate::os::own_exe::path().map_err(LaunchError::NoOwnExecutable)?;
                Ok(vec![
                    exe.to_string_lossy().into_owned(),
                    "bot".into(),
                    name.clone(),
                ])
            }
            BotSpec::InProcess(name) => Err(LaunchError::InProcess(name.clone())),
            BotSpec::Human => Err(LaunchError::Human),
            BotSpec::Remote(name) => Err(LaunchError::Remote(name.clone())),
            BotSpec::Command { argv, .. } => Ok(argv.clone()),
        }
    }

    /// What exactly is executed, and in which directory (see `os/command.rs`):
    /// relative paths are taken from `base`, a bare program name from `path`.
    pub fn launch(&self, base: &Path, path: &str) -> Result<Launch, LaunchError> {
        match self {
            BotSpec::Builtin(name) => {
                // Canonical, and the path the run started from even if it
                // names another file now (`os/linux/own_exe.rs`).
                let program = crate::os::own_exe::path().map_err(LaunchError::NoOwnExecutable)?;
                Ok(Launch {
                    dir: program.parent().unwrap_or(Path::new("/")).to_path_buf(),
                    program,
                    args: vec!["bot".into(), name.into()],
                    scratch: None,
                    slot: None,
                    invoked: None,
                })
            }
            BotSpec::InProcess(name) => Err(LaunchError::InProcess(name.clone())),
            BotSpec::Human => Err(LaunchError::Human),
            BotSpec::Remote(name) => Err(LaunchError::Remote(name.clone())),
            BotSpec::Command {
                argv, dir: None, ..
            } => Launch::resolve(argv, base, path),
            BotSpec::Command {
                argv,
                dir: Some(dir),
                ..
            } => {
                let dir = std::fs::canonicalize(base.join(dir)).map_err(|error| {
                    LaunchError::NoDirectory {
                        dir: dir.clone(),
                        error,
                    }
                })?;
                if !dir.is_dir() {
                    return Err(LaunchError::NotADirectory(dir));
                }
                Launch::resolve_in(argv, &dir, path)
            }
        }
    }

    /// The environment this bot starts with: the run's (`run`, sorted by key, from
    /// [`Isolation::env`]) with its own variables over it.
    pub fn env(&self, run: &[(String, String)]) -> Vec<(String, String)> {
        match self {
            BotSpec::Command { env, .. } if !env.is_empty() => {
                let mut all: std::collections::BTreeMap<String, String> =
                    run.iter().cloned().collect();
                all.extend(env.iter().cloned());
                all.into_iter().collect()
            }
            _ => run.to_vec(),
        }
    }
}

/// How bot processes run: their whole environment and their isolation.
#[derive(Clone, Debug)]
pub struct Isolation {
    /// Every bot's environment, and nothing of the referee's: `PATH` (a fixed
    /// default unless given) plus each `--bot-env KEY=VALUE`, sorted by key
    /// (on Windows also what a program needs to run: `crate::os::PASSED_ENV`).
    pub env: Vec<(String, String)>,
    /// `--sandbox`: checked to work on this host before any bot starts.
    pub sandbox: Option<Arc<Sandbox>>,
    /// `--scratch DIR`: the folder in which each bot process of the table gets a
    /// writable directory of its own, `player<slot>` (absolute).
    pub scratch: Option<PathBuf>,
    /// The listener that serves the `remote:NAME` seats (`--listen`), once
    /// the run has started it.
    pub remote: Option<Arc<crate::remote::Hub>>,
}

impl Isolation {
    /// The bots' environment from `KEY=VALUE` pairs; `PATH` defaults to
    /// [`crate::bot::DEFAULT_PATH`].
    pub fn env(pairs: &[(String, String)]) -> Vec<(String, String)> {
        let mut env: std::collections::BTreeMap<String, String> =
            [("PATH".to_owned(), crate::bot::DEFAULT_PATH.to_owned())].into();
        // What a program needs of the referee's environment to run at all on
        // this OS (none on Linux: `crate::os::PASSED_ENV`).
        env.extend(
            (crate::os::PASSED_ENV.iter())
                .filter_map(|&k| Some((k.to_owned(), std::env::var(k).ok()?))),
        );
        env.extend(pairs.iter().cloned());
        env.into_iter().collect()
    }

    /// The `PATH` bots see, where bare program names are looked up.
    pub fn path(&self) -> &str {
        Isolation::path_in(&self.env)
    }

    /// The `PATH` of an environment, where a bare program name is looked up.
    pub fn path_in(env: &[(String, String)]) -> &str {
        env.iter()
            .find(|(k, _)| k == "PATH")
            .map_or(crate::bot::DEFAULT_PATH, |(_, v)| v.as_str())
    }
}

/// Time limits. `None` means no limit (`--no-timeouts`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    pub clock: Clock,
    pub startup: Option<Duration>,
    pub decision: Option<Duration>,
    /// Per-game budget drawn on when a decision takes longer than `decision`.
    pub bank: Duration,
    /// Allowance added to every deadline for pipe and scheduling latency; the bot
    /// is told the limit without it.
    pub grace: Duration,
    pub max_line: usize,
    /// How long a write to a bot may block before the bot counts as not reading.
    pub write: Duration,
    /// How long bots get to exit after `bye` before they are signalled.
    pub shutdown: Duration,
}

impl TimeControl {
    pub fn record(&self) -> TimeControlRecord {
        TimeControlRecord {
            clock: self.clock,
            time_bank_ms: self.bank.as_millis() as u64,
            startup_ms: self.startup.map(|d| d.as_millis() as u64),
            decision_ms: self.decision.map(|d| d.as_millis() as u64),
            grace_ms: self.grace.as_millis() as u64,
            max_line_bytes: self.max_line,
        }
    }
}

/// When a seat is sent the events of the game.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Delivery {
    /// As they happen: after every action each seat is written what it may see
    /// of it, without waiting on a seat that does not read (what does not fit in
    /// its pipe goes with the next write). Bots can think on others' time.
    #[default]
    Live,
    /// Held back until the seat is next asked (or the game ends), then written
    /// together with its request: one write per decision instead of six.
    Batched,
}

/// What a table needs to judge its games: who sits where, the rules, the clock and
/// the fault policy. Run-level settings (where files go, how much is printed) live
/// in [`PlayConfig`] or the tournament's configuration, not here; each game's seed
/// and seating come with its [`crate::table::GamePlan`].
#[derive(Clone, Debug)]
pub struct TableSpec {
    /// Lineup slot `i` is one bot process; a game's plan says at which seat it sits.
    pub lineup: [BotSpec; 6],
    pub rules: RulesConfig,
    pub time: TimeControl,
    pub policy: FaultPolicy,
    pub limits: ResourceLimits,
    /// How bot processes run: their environment and their sandbox.
    pub isolation: Isolation,
    /// When seats are sent the game's events.
    pub events: Delivery,
    /// Bytes of each bot's stderr kept in its log file.
    pub stderr_cap: u64,
    /// `--pace-ms`: a decision's consequences reach the seats no earlier than
    /// this long after its request was written, so a reply's delay below it
    /// tells the other seats nothing (see `Table::release`).
    pub pace: Option<Duration>,
}

impl TableSpec {
    /// What this table's transcripts record of how its bots run.
    pub fn isolation_record(&self) -> IsolationRecord {
        let l = &self.limits;
        IsolationRecord {
            sandbox: self
                .isolation
                .sandbox
                .as_ref()
                .map(|sandbox| SandboxRecord {
                    tool: crate::sandbox::TOOL.into(),
                    layers: sandbox.layers(),
                    tmpfs_bytes: crate::sandbox::TMPFS_BYTES,
                }),
            limits: LimitsRecord {
                memory_bytes: l.memory_bytes,
                cpu_seconds: l.cpu_seconds,
                open_files: l.open_files,
                processes: l.processes,
                cpu_millicores: l.cpu_millicores,
                stderr_cap_bytes: self.stderr_cap,
                frozen_while_waiting: l.freezer,
            },
            pace_ms: self.pace.map(|d| d.as_millis() as u64),
            scratch: self.isolation.scratch.is_some(),
            scratch_bytes: (self.isolation.sandbox.as_ref())
                .filter(|_| self.isolation.scratch.is_some())
                .map(|s| s.scratch_bytes()),
        }
    }
}

/// `referee play`: one table, a match of `games` games.
#[derive(Clone, Debug)]
pub struct PlayConfig {
    pub table: TableSpec,
    pub games: u32,
    pub seed: u64,
    /// The seed was drawn by the referee (no `--seed`): it stays out of every
    /// path and message a bot could see until the run ends.
    pub secret_seed: bool,
    /// Move every slot one seat to the left after each game, so that each team
    /// plays every seat position over a match.
    pub rotate: bool,
    pub output: Output,
    pub quiet: bool,
    /// Replace the games already in the output folder (else that is an error).
    pub overwrite: bool,
    /// Play on when a bot fails to start (else `play` stops before any game).
    pub keep_going: bool,
    /// `--listen` and the run's remote seats (`remote/`).
    pub remote: Option<crate::remote::RemoteSpec>,
}

impl PlayConfig {
    /// The lineup slot sitting at `seat` in game `g` (0-based).
    pub fn slot_at(&self, seat: usize, g: u32) -> usize {
        let shift = if self.rotate { g as usize % 6 } else { 0 };
        (seat + 6 - shift) % 6
    }
}
