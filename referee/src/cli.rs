//! Command-line flags (stage one: raw, as clap parses them) and their validation
//! into [`PlayConfig`] (stage two). Errors name the flag and the bad value.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};

use schmier_protocol::rules::RulesConfig;

use crate::bot::ResourceLimits;
use crate::bot::Sandbox;
use crate::config::{
    BotSpec, Clock, Delivery, FaultPolicy, Isolation, Output, PlayConfig, TableSpec, TimeControl,
};

#[derive(Parser, Debug)]
#[command(
    name = "referee",
    version,
    about = "Headless referee for Schmier bot competitions",
    long_about = "Headless referee for Schmier bot competitions.\n\n\
        Runs six bot processes that speak the line-delimited JSON protocol schmier/1 \
        (see PROTOCOL.md), enforces every rule and time limit, and writes a \
        deterministic JSONL transcript of each game.\n\n\
        With no subcommand, `referee` is `referee play`: a game among the built-in bots, \
        and `referee --seed 5` is `referee play --seed 5`.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `play`'s flags, for `referee` without a subcommand.
    #[command(flatten)]
    pub play: PlayArgs,
}

impl Cli {
    /// The command to run: `play` with the top-level flags when none is named.
    pub fn command(self) -> Command {
        self.command
            .unwrap_or_else(|| Command::Play(Box::new(self.play)))
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Play one game or a match between six bot processes.
    Play(Box<PlayArgs>),
    /// Replay transcripts through the rules engine; exit 0 only if all are valid
    /// (1: one is not; 2: a path is not a transcript or a folder of them).
    Verify {
        /// Transcript files (*.jsonl), or folders: every *.jsonl file directly in
        /// a `play` folder is checked (the timings/ and stderr/ folders are not);
        /// a tournament folder's games/ are, and each line of its journal.jsonl
        /// against its transcript.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Check a bot against the protocol, as a checklist (exit 1 if a check fails).
    ///
    /// Every kind of request and the situations bots get wrong, a game with
    /// unknown messages and fields, whole games in every seat, and the bot's
    /// decision times. Example: referee check-bot -- python3 my_bot.py
    CheckBot(CheckBotArgs),
    /// Run a bracket: many tables of three entrants, duplicate sets, standings.
    Tournament(Box<crate::tournament::TournamentArgs>),
    /// Combine the directories of a sharded tournament (--shard K/N) into one.
    Merge {
        /// The shard directories (each a tournament's --out).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the merged tournament goes (must be empty or absent).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Run a built-in sample bot on stdin/stdout (what `builtin:NAME` starts).
    Bot {
        /// `random` or `heuristic`.
        name: String,
    },
    /// Measure the referee's cost per decision against a raw pipe round trip.
    Bench(BenchArgs),
    /// The trivial child `referee bench` measures a pipe round trip with.
    #[command(hide = true)]
    BenchEcho,
    /// Inside a `--sandbox` sandbox: confine this process with Landlock, then
    /// exec the bot (what bubblewrap runs in place of each bot).
    #[command(hide = true)]
    Landlock(crate::bot::LandlockArgs),
    /// Compare two transcripts (or two folders of them, paired by file name) in
    /// game terms: the first divergence, then how the outcomes differ. Exit 0 when
    /// the games are the same move for move, 1 when they differ.
    Diff(DiffArgs),
    /// Show a transcript as a readable account (hands with suit symbols, the
    /// auction, trump, exchanges, tricks, points, scores), whole or as one seat saw
    /// it; or write a self-contained HTML page that replays it.
    Show(ShowArgs),
    /// Write the JSON Schema of every protocol message and transcript line
    /// (to-bot.json, from-bot.json, transcript-line.json, timings-line.json).
    Schema(SchemaArgs),
}

/// `referee bench`.
#[derive(Args, Debug)]
#[command(
    long_about = "Measure the referee's cost per decision against a raw pipe round trip.\n\n\
    In one run: the median and p99 round trip of a request-sized line through a pipe \
    to a trivial child (before and after the games); the built-in bot's own handling \
    of a game's lines, in process; then, for each --jobs value, complete games among \
    six built-in bot processes per table, with games/s, decisions/s, bytes/s, the \
    wall time per decision (median, p99), its ratio to the pipe round trip, where \
    each decision's time went (measured by the table's own timers), and the \
    referee's peak memory. Transcripts go to a scratch directory that is removed."
)]
pub struct BenchArgs {
    /// Games per --jobs value, shared out among the tables (games among six
    /// random bots are long: about 6,800 decisions each).
    #[arg(long, default_value_t = 40, value_name = "N")]
    pub games: u32,

    /// Tables playing at once (each with six bot processes, on its own thread);
    /// a comma-separated list runs one games phase per value, e.g. `1,2`.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1",
        value_name = "N[,N...]"
    )]
    pub jobs: Vec<usize>,

    /// Event delivery, as for `play` (`batched` is one write per decision).
    #[arg(long, value_enum, default_value_t = DeliveryName::Batched)]
    pub events: DeliveryName,

    /// The built-in bot in every seat.
    #[arg(long, default_value = "random", value_name = "NAME")]
    pub bot: String,

    /// Match seed of the first table (the others' are derived from it).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,

    /// Time per decision, in milliseconds, as for `play` (a fault fails the
    /// benchmark, so give slow builds room).
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub decision_ms: u64,

    /// Round trips in each pipe baseline.
    #[arg(long, default_value_t = 5000, value_name = "N")]
    pub trips: usize,

    /// Print the figures as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

impl BenchArgs {
    /// Stage two: the benchmark's configuration, with `play`'s defaults for
    /// everything a table needs.
    pub fn validate(&self) -> anyhow::Result<crate::bench::BenchConfig> {
        if self.games == 0 {
            bail!("--games must be at least 1");
        }
        if self.jobs.is_empty() || self.jobs.contains(&0) {
            bail!(
                "--jobs: every value must be at least 1, got {:?}",
                self.jobs
            );
        }
        if !schmier_sample_bots::NAMES.contains(&self.bot.as_str()) {
            bail!(
                "--bot: unknown built-in bot {:?}; the built-in bots are {:?}",
                self.bot,
                schmier_sample_bots::NAMES
            );
        }
        if self.trips == 0 {
            bail!("--trips must be at least 1");
        }
        let decision_ms = self.decision_ms.to_string();
        let play = Cli::parse_from([
            "referee",
            "play",
            "--quiet",
            "--transcript",
            "unused",
            "--decision-ms",
            &decision_ms,
        ]);
        let Some(Command::Play(args)) = play.command else {
            unreachable!("play parses");
        };
        Ok(crate::bench::BenchConfig {
            games: self.games,
            jobs: self.jobs.clone(),
            events: self.events.into(),
            bot: self.bot.clone(),
            seed: self.seed,
            trips: self.trips,
            play: args.validate()?,
        })
    }
}

#[derive(Args, Debug)]
pub struct SchemaArgs {
    /// Folder to write the schema files into.
    #[arg(default_value = "schema")]
    pub dir: PathBuf,
    /// Write nothing: exit 1 if the files in the folder differ from the code's.
    #[arg(long)]
    pub check: bool,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The transcript (*.jsonl), or with --html a tournament folder (its page:
    /// standings with interval bars and a replay page for every game).
    pub file: PathBuf,
    /// Only what this seat (0-5) was told: its own cards, everyone's public moves.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..6))]
    pub seat: Option<u8>,
    /// Only deal K (deals count from 1, thrown-in deals included).
    #[arg(long, value_name = "K")]
    pub deal: Option<u32>,
    /// Write a replay page to this file instead (one HTML file, no network): step
    /// through the game, jump to a deal, switch to one seat's view.
    #[arg(long, value_name = "OUT.html", conflicts_with_all = ["seat", "deal"])]
    pub html: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The expected transcript or folder (e.g. a checked-in snapshot).
    pub a: PathBuf,
    /// The actual transcript or folder (e.g. a fresh run).
    pub b: PathBuf,
    /// Accept B: replace A's differing transcripts with B's (create A if it does
    /// not exist yet), then exit 0.
    #[arg(long)]
    pub update: bool,
}

#[derive(Args, Debug)]
pub struct CheckBotArgs {
    /// Time the bot has for each decision, in milliseconds.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub decision_ms: u64,
    /// Time the bot has to answer hello, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub startup_ms: u64,
    /// The bot's command and its arguments, after `--` (one word with spaces is
    /// split like a shell would).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

impl CheckBotArgs {
    /// The bot's argv and the limits to check it under.
    pub fn validate(&self) -> anyhow::Result<(Vec<String>, crate::checkbot::CheckLimits)> {
        let argv = match self.command.as_slice() {
            [one] => shlex::split(one).with_context(|| {
                format!("check-bot: cannot split {one:?} into words (unbalanced quotes?)")
            })?,
            many => many.to_vec(),
        };
        if argv.is_empty() {
            bail!("check-bot: the command is empty");
        }
        if self.decision_ms == 0 || self.startup_ms == 0 {
            bail!("check-bot: --decision-ms and --startup-ms must be at least 1");
        }
        let limits = crate::checkbot::CheckLimits {
            startup: Duration::from_millis(self.startup_ms),
            decision: Duration::from_millis(self.decision_ms),
            max_line: 64 * 1024,
        };
        Ok((argv, limits))
    }
}

#[derive(Args, Debug)]
pub struct PlayArgs {
    /// A team's bot command; the first --team sits in seats 0 and 3, the second in
    /// 1 and 4, the third in 2 and 5, each seat its own process. The command is
    /// split like a shell would but not run by one. `builtin:random` and
    /// `builtin:heuristic` name the built-in bots (each its own process);
    /// `inproc:random` and `inproc:heuristic` play them inside the referee (no
    /// process, no clock: for fast tests). Unassigned seats get the built-in
    /// bots: heuristic for team 0, random for teams 1 and 2.
    #[arg(long = "team", value_name = "CMD")]
    pub teams: Vec<String>,

    /// One seat's bot, e.g. `--seat 4="python3 bot.py"`; overrides --team for that
    /// seat. `--seat N=human` plays the seat yourself from the terminal (no time
    /// limit): the hand and the legal actions are shown, you type a number.
    #[arg(long = "seat", value_name = "N=CMD")]
    pub seats: Vec<String>,

    /// Number of games in the match (the bot processes persist across games).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub games: u32,

    /// Match seed, a whole number from 0 to 2^64-1 (game k's seed is derived from
    /// it). If absent, 64 secret random bits: out of every command line and path,
    /// printed when the run ends.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_seed)]
    pub seed: Option<u64>,

    /// Write into an output folder that already holds games: its game-*.jsonl
    /// transcripts and timings are deleted first, so no old game is mixed with the
    /// new ones. Without it such a folder is an error.
    #[arg(long)]
    pub overwrite: bool,

    /// Play even if a bot fails to start or to say hello (the fallback plays its
    /// seats, and its team forfeits under the competition policy). Without it such
    /// a failure is reported and `play` exits with status 2 before any game.
    #[arg(long)]
    pub keep_going: bool,

    /// Transcript file (one game, ending in .jsonl) or directory (game-0001.jsonl,
    /// ...). Default: schmier-out/seed-<SEED>/ with --seed, else
    /// schmier-out/match-<UNIX TIME>-<PID>/. Per-decision timings go to a timings/
    /// folder beside the transcripts; each bot's stderr to <transcript>.stderr/ or
    /// <dir>/stderr/.
    #[arg(long, value_name = "PATH")]
    pub transcript: Option<PathBuf>,

    /// Time a bot has for each decision, in milliseconds.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub decision_ms: u64,

    /// Time a bot has to answer hello after it is started, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub startup_ms: u64,

    /// Allowance added to every deadline for pipe and scheduling latency (the bot
    /// is told the limit without it).
    #[arg(long, default_value_t = 50, value_name = "MS")]
    pub grace_ms: u64,

    /// Multiply every time limit by this factor (for slow machines).
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    pub time_scale: f64,

    /// No time limits at all (for debugging a bot under a debugger).
    #[arg(long)]
    pub no_timeouts: bool,

    /// When seats are sent game events: `live` (as they happen, so a bot can
    /// think on others' time) or `batched` (with the seat's next request: one
    /// write per decision, the fastest). Transcripts are the same either way.
    #[arg(long, value_enum, default_value_t = DeliveryName::Live)]
    pub events: DeliveryName,

    /// Per-game time bank per seat, in milliseconds: a decision that takes longer
    /// than --decision-ms draws the excess from it (chess-style).
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pub time_bank_ms: u64,

    /// The clock decisions are timed on: `wall` (elapsed time) or `cpu` (CPU time
    /// the bot's processes used, so a busy host cannot make a bot lose on time;
    /// Linux only, with a wall-clock backstop of ten times the limit).
    #[arg(long, value_enum, default_value_t = ClockName::Wall)]
    pub clock: ClockName,

    /// Fault policy: `competition` (a team with any faulted seat forfeits the game
    /// and is ranked last; a seat is replaced by the fallback after 3 faults) or
    /// `lenient` (no forfeits; replaced only after a crash or closed pipe).
    #[arg(long, value_enum, default_value_t = PolicyName::Competition)]
    pub policy: PolicyName,

    /// Faults a seat may commit in one game before the fallback plays for it for
    /// the rest of the game (overrides the policy's; 0 = never).
    #[arg(long, value_name = "N")]
    pub max_faults: Option<u32>,

    /// Do not restart a bot that crashed or closed its pipes for the next game
    /// (by default it is restarted; within a game the fallback plays for it).
    #[arg(long)]
    pub no_restart: bool,

    /// Longest line accepted from a bot, in bytes.
    #[arg(long, default_value_t = 64 * 1024, value_name = "BYTES")]
    pub max_line_bytes: usize,

    /// Bytes of each bot's stderr kept in its log file (the rest is drained and dropped).
    #[arg(long, default_value_t = 1 << 20, value_name = "BYTES")]
    pub stderr_cap: u64,

    /// Rules variant: the dealer may not pass after five passes, from the first deal.
    #[arg(long)]
    pub stick_the_dealer: bool,

    /// Rules variant: a trump may be played even when the seat could follow suit.
    #[arg(long)]
    pub trump_anytime: bool,

    /// Keep every bot in the same seat for all games (by default the lineup moves
    /// one seat left after each game, partners staying together).
    #[arg(long)]
    pub no_rotate: bool,

    #[command(flatten)]
    pub limits: LimitArgs,

    /// A folder in which each bot process gets a writable directory of its own,
    /// DIR/player<N> (N its lineup slot, 0-5), named in its environment as
    /// SCHMIER_SCRATCH. Sandboxed, a bot sees only its own (read-write); kept
    /// after the run. Without it a sandboxed bot's only writable place is its
    /// private /tmp.
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,

    /// Run each bot process in a sandbox of its own (Linux namespaces through
    /// bubblewrap): no network, no other process, no files but the system
    /// directories, its own directory (read-only) and a private /tmp. Landlock
    /// (ABI 6, Linux 6.12) enforces the same from inside; seccomp refuses ptrace
    /// and the like. The referee refuses to start where the host cannot sandbox.
    /// See README, "Sandbox".
    #[arg(long)]
    pub sandbox: bool,

    /// An environment variable for every bot, KEY=VALUE (repeatable). Bots get
    /// nothing of the referee's environment: only these and
    /// PATH=/usr/local/bin:/usr/bin:/bin (unless given here).
    #[arg(long = "bot-env", value_name = "KEY=VALUE")]
    pub bot_env: Vec<String>,

    /// Print only the final result.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The per-bot resource limits, shared by `play` and `tournament` (whose file
/// has the same fields).
#[derive(Args, Clone, Debug, Default)]
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
}

impl LimitArgs {
    /// The limits given here, each falling back to `file`'s; the cgroup limits
    /// are checked to be possible on this host before any bot starts.
    pub fn resolve(&self, file: &LimitArgs) -> anyhow::Result<ResourceLimits> {
        let processes = self.limit_procs.or(file.limit_procs);
        if let Some(n) = processes {
            crate::bot::probe_cgroups(Some(n), None).map_err(|e| {
                anyhow::anyhow!(
                    "--limit-procs {n}: failed to limit processes per bot: {e}. RLIMIT_NPROC \
                     is not used instead: it counts every process of the user, so one bot \
                     could exhaust it for all"
                )
            })?;
        }
        Ok(ResourceLimits {
            memory_bytes: self
                .limit_memory_mb
                .or(file.limit_memory_mb)
                .map(|m| m << 20),
            cpu_seconds: self.limit_cpu_s.or(file.limit_cpu_s),
            open_files: self.limit_files.or(file.limit_files),
            processes,
            cpu_millicores: (self.limit_cpus.or(file.limit_cpus))
                .map(cpu_millicores)
                .transpose()?,
        })
    }
}

/// `--clock`: the CLI's names, mapped onto [`Clock`] (the wire and transcript type
/// does not depend on the argument parser).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ClockName {
    Wall,
    Cpu,
}

impl From<ClockName> for Clock {
    fn from(c: ClockName) -> Clock {
        match c {
            ClockName::Wall => Clock::Wall,
            ClockName::Cpu => Clock::Cpu,
        }
    }
}

/// `--events`, mapped onto [`Delivery`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DeliveryName {
    Live,
    Batched,
}

impl From<DeliveryName> for Delivery {
    fn from(d: DeliveryName) -> Delivery {
        match d {
            DeliveryName::Live => Delivery::Live,
            DeliveryName::Batched => Delivery::Batched,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyName {
    #[default]
    Competition,
    Lenient,
}

impl PlayArgs {
    fn policy(&self) -> FaultPolicy {
        let mut p = match self.policy {
            PolicyName::Competition => FaultPolicy::COMPETITION,
            PolicyName::Lenient => FaultPolicy::LENIENT,
        };
        if let Some(m) = self.max_faults {
            p.max_faults = (m > 0).then_some(m);
        }
        p.restart = !self.no_restart;
        p
    }
}

fn parse_seed(text: &str) -> Result<u64, String> {
    text.trim().parse::<u64>().map_err(|_| {
        format!(
            "the seed must be a whole number from 0 to {}, got {text:?}",
            u64::MAX
        )
    })
}

/// 64 random bits from the operating system, for a run that was not given a seed:
/// a competition's deals must not be guessable.
pub(crate) fn fresh_seed() -> anyhow::Result<u64> {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("failed to draw a random seed from /dev/urandom")?;
    Ok(u64::from_le_bytes(bytes))
}

/// Seeds below this can be found by search from one hand (a table of 2^40 deals
/// is within reach); a competition should let the referee draw 64 bits.
pub(crate) const SMALL_SEED: u64 = 1 << 48;

/// `KEY=VALUE` words of `--bot-env`.
pub(crate) fn parse_env(words: &[String]) -> anyhow::Result<Vec<(String, String)>> {
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

pub(crate) fn parse_bot(text: &str, what: &str) -> anyhow::Result<BotSpec> {
    if text.trim() == "human" {
        return Ok(BotSpec::Human);
    }
    if let Some(name) = text.strip_prefix("inproc:") {
        if !schmier_sample_bots::NAMES.contains(&name) {
            bail!(
                "{what}: unknown built-in bot {name:?}; the built-in bots are {:?}",
                schmier_sample_bots::NAMES
            );
        }
        return Ok(BotSpec::InProcess(name.to_owned()));
    }
    if let Some(name) = text.strip_prefix("builtin:") {
        if !schmier_sample_bots::NAMES.contains(&name) {
            bail!(
                "{what}: unknown built-in bot {name:?}; the built-in bots are {:?}",
                schmier_sample_bots::NAMES
            );
        }
        return Ok(BotSpec::Builtin(name.to_owned()));
    }
    let argv = shlex::split(text).with_context(|| {
        format!("{what}: cannot split {text:?} into words (unbalanced quotes?)")
    })?;
    if argv.is_empty() {
        bail!("{what}: the command is empty");
    }
    Ok(BotSpec::Command {
        argv,
        text: text.to_owned(),
        dir: None,
        env: Vec::new(),
    })
}

impl PlayArgs {
    /// Stage two: validated configuration. `seed` is filled in when absent.
    pub fn validate(&self) -> anyhow::Result<PlayConfig> {
        if self.teams.len() > 3 {
            bail!("--team: at most three teams, got {}", self.teams.len());
        }
        let mut lineup: [BotSpec; 6] = std::array::from_fn(|seat| {
            BotSpec::Builtin(if seat % 3 == 0 { "heuristic" } else { "random" }.to_owned())
        });
        for (k, text) in self.teams.iter().enumerate() {
            let spec = parse_bot(text, &format!("--team {}", k + 1))?;
            lineup[k] = spec.clone();
            lineup[k + 3] = spec;
        }
        let mut seen = [false; 6];
        for text in &self.seats {
            let (n, cmd) = text.split_once('=').with_context(|| {
                format!("--seat {text:?}: expected N=CMD, e.g. --seat 2=\"python3 bot.py\"")
            })?;
            let seat: usize = n.trim().parse().ok().filter(|s| *s < 6).with_context(|| {
                format!("--seat {text:?}: the seat must be a number from 0 to 5")
            })?;
            if std::mem::replace(&mut seen[seat], true) {
                bail!("--seat: seat {seat} is given twice");
            }
            lineup[seat] = parse_bot(cmd, &format!("--seat {seat}"))?;
        }
        if self.games == 0 {
            bail!("--games must be at least 1");
        }
        if !(self.time_scale.is_finite() && self.time_scale > 0.0) {
            bail!(
                "--time-scale must be a positive number, got {}",
                self.time_scale
            );
        }
        if self.max_line_bytes < 1024 {
            bail!(
                "--max-line-bytes must be at least 1024, got {}",
                self.max_line_bytes
            );
        }
        let scale = |ms: u64| Duration::from_secs_f64(ms as f64 * self.time_scale / 1000.0);
        let limited = |ms: u64| (!self.no_timeouts).then(|| scale(ms));
        let time = TimeControl {
            clock: self.clock.into(),
            bank: scale(self.time_bank_ms),
            startup: limited(self.startup_ms),
            decision: limited(self.decision_ms),
            grace: scale(self.grace_ms),
            max_line: self.max_line_bytes,
            write: scale(self.decision_ms.max(1000)),
            shutdown: scale(1000),
        };
        let seed = match self.seed {
            Some(seed) => seed,
            None => fresh_seed()?,
        };
        if self.policy == PolicyName::Competition && self.seed.is_some_and(|s| s < SMALL_SEED) {
            eprintln!(
                "referee: warning: --seed {seed} is small enough to be found from a bot's own \
                 hand; for a competition omit --seed (the referee then draws 64 secret bits)"
            );
        }
        let output = match &self.transcript {
            Some(p) if self.games == 1 && p.extension().is_some_and(|e| e == "jsonl") => {
                Output::File(p.clone())
            }
            Some(p) if p.extension().is_some_and(|e| e == "jsonl") => {
                bail!(
                    "--transcript {}: with --games {} give a directory, not a .jsonl file",
                    p.display(),
                    self.games
                )
            }
            Some(p) => Output::Dir(p.clone()),
            None if self.seed.is_some() => {
                Output::Dir(PathBuf::from(format!("schmier-out/seed-{seed}")))
            }
            None => Output::Dir(PathBuf::from(format!(
                "schmier-out/match-{}-{}",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_secs(),
                std::process::id()
            ))),
        };
        let limits = self.limits.resolve(&LimitArgs::default())?;
        let env = Isolation::env(&parse_env(&self.bot_env)?);
        // Where transcripts, timings and logs go: never shown to a bot.
        let out_dir = match &output {
            Output::File(p) => p.parent().unwrap_or(Path::new("")).to_path_buf(),
            Output::Dir(d) => d.clone(),
        };
        let scratch = (self.scratch.as_deref())
            .map(|s| scratch_folder(s, &[&out_dir, &output.stderr_dir()]))
            .transpose()?;
        let sandbox = if self.sandbox {
            let bots =
                (lineup.iter().enumerate()).map(|(seat, spec)| (format!("seat {seat}"), spec));
            let mut hidden = vec![out_dir.as_path()];
            let stderr_dir = output.stderr_dir();
            hidden.push(&stderr_dir);
            hidden.extend(scratch.as_deref());
            let sandbox = sandbox_for(bots, &hidden, &env)?;
            Some(std::sync::Arc::new(sandbox))
        } else {
            None
        };
        Ok(PlayConfig {
            table: TableSpec {
                lineup,
                rules: RulesConfig {
                    stick_the_dealer: self.stick_the_dealer,
                    trump_anytime: self.trump_anytime,
                    ..RulesConfig::default()
                },
                time,
                policy: self.policy(),
                limits,
                events: self.events.into(),
                isolation: Isolation {
                    env,
                    sandbox,
                    scratch,
                },
                stderr_cap: self.stderr_cap,
            },
            games: self.games,
            seed,
            secret_seed: self.seed.is_none(),
            rotate: !self.no_rotate,
            output,
            quiet: self.quiet,
            overwrite: self.overwrite,
            keep_going: self.keep_going,
        })
    }
}

/// `--limit-cpus F` in thousandths of a core, checked to be possible on this
/// host before any bot starts.
pub(crate) fn cpu_millicores(cores: f64) -> anyhow::Result<u64> {
    if !(cores.is_finite() && (0.01..=4096.0).contains(&cores)) {
        bail!(
            "--limit-cpus {cores}: expected a number of cores from 0.01 to 4096, e.g. \
             --limit-cpus 0.5 for half of one core"
        );
    }
    let millicores = (cores * 1000.0).round() as u64;
    crate::bot::probe_cgroup_limits(crate::bot::CgroupLimits {
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

/// `--scratch DIR`, created if missing, made absolute; never where the outputs
/// go, nor holding them.
pub(crate) fn scratch_folder(dir: &Path, outputs: &[&Path]) -> anyhow::Result<PathBuf> {
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
            Ok(scratch)
        })
}

/// Checks that the host can sandbox and that every bot of `bots` (each named as
/// errors should name it: "seat 2", "entrant \"mine\"") can be: fails closed,
/// before anything is started or written. `outputs` are where transcripts,
/// timings and logs go, never shown to a bot; `env` is the run's bot environment.
pub(crate) fn sandbox_for<'a>(
    bots: impl IntoIterator<Item = (String, &'a BotSpec)>,
    outputs: &[&Path],
    env: &[(String, String)],
) -> anyhow::Result<Sandbox> {
    let cwd = std::env::current_dir().context("failed to read the working directory")?;
    // In-process bots (tests, benchmarks) are the referee's own code: no process.
    let launches = bots
        .into_iter()
        .filter(|(_, spec)| !matches!(spec, BotSpec::InProcess(_) | BotSpec::Human))
        .map(|(who, spec)| {
            spec.launch(&cwd, Isolation::path_in(&spec.env(env)))
                .map(|launch| (who.clone(), launch))
                .map_err(|e| anyhow::anyhow!("failed to sandbox {who}: {e}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let sandbox = Sandbox::prepare(
        outputs.iter().map(|p| cwd.join(p)).collect(),
        launches.iter().map(|(_, l)| l.dir.clone()).collect(),
    )?;
    for (who, launch) in &launches {
        sandbox
            .check(launch)
            .map_err(|e| anyhow::anyhow!("failed to sandbox {who}: {e}"))?;
    }
    Ok(sandbox)
}
